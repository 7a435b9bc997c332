"""Models: the chapter's MLP LM and the seed project's GPT, behind one interface.

Both take ids (B,T) and return (logits (B,T,V), loss or None), where logits[:, t] is the
distribution of the token after ids[:, t]; both expose `token_embedding` and
`param_breakdown()`.
"""

from __future__ import annotations

from torch import nn


def build_model(model_type: str, model_config) -> nn.Module:
    if model_type == "mlp":
        from lrngpt.models.mlp import MLPLM

        return MLPLM(model_config)
    from lrngpt.models.gpt import GPT

    return GPT(model_config)
