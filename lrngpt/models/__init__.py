"""Models: the chapter's MLP LM and the seed project's GPT, behind one interface: ids (B,T) ->
(logits (B,T,V), loss or None), `token_embedding` and `param_breakdown()` (lrngpt.models.build)."""

from __future__ import annotations

# The GPT's feed-forward kinds (gated ones double the first projection): here, so `lrn cost` needs no torch.
FFN_KINDS = ("gelu", "relu", "swiglu", "geglu")
GATED_FFNS = ("swiglu", "geglu")


NANOCHAT_HEAD_DIM = 128


def nanochat_shape(n_layer: int, aspect_ratio: int, head_dim: int = NANOCHAT_HEAD_DIM) -> tuple[int, int]:
    """nanochat's width from depth: n_layer x aspect_ratio rounded up to a multiple of head_dim, and
    n_embd / head_dim heads (20 x 64 = 1,280: 10 heads of 128)."""
    width = -(-n_layer * aspect_ratio // head_dim) * head_dim  # ceiling division, as nanochat's
    return width, width // head_dim
