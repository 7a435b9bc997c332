"""Models: the chapter's MLP LM and the seed project's GPT, behind one interface.

Both take ids (B,T) and return (logits (B,T,V), loss or None), where logits[:, t] is the
distribution of the token after ids[:, t]; both expose `token_embedding` and
`param_breakdown()`; lrngpt.models.build makes one from its type and config.
"""

from __future__ import annotations

# The GPT's feed-forward kinds; the gated ones (GLU variants) double the first projection.
# Here, not in gpt.py, so that `lrn cost` can list them without importing torch.
FFN_KINDS = ("gelu", "relu", "swiglu", "geglu")
GATED_FFNS = ("swiglu", "geglu")


# nanochat's width from depth (scripts/base_train.py: --depth 20, --aspect-ratio 64, --head-dim 128):
# the width is depth x aspect ratio rounded up to a whole number of heads, and the heads follow.
NANOCHAT_HEAD_DIM = 128


def nanochat_shape(n_layer: int, aspect_ratio: int, head_dim: int = NANOCHAT_HEAD_DIM) -> tuple[int, int]:
    """(n_embd, n_head): n_layer x aspect_ratio rounded up to a multiple of head_dim, and
    n_embd / head_dim heads (20 x 64 = 1,280: 10 heads of 128; 4 x 64 = 256: 2; 8 x 64 = 512: 4)."""
    width = -(-n_layer * aspect_ratio // head_dim) * head_dim  # ceiling division, as nanochat's
    return width, width // head_dim
