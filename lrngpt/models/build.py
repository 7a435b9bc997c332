"""A model from its type and config: the chapter's MLP LM ("mlp") or the seed project's GPT ("gpt").

Here, not in the package's __init__, which `lrn cost` loads for FFN_KINDS without torch."""

from __future__ import annotations

import torch

from lrngpt.core import log as logging
from lrngpt.models.gpt import GPT
from lrngpt.models.mlp import MLPLM


def build_model(model_type: str, model_config) -> MLPLM | GPT:
    model = MLPLM(model_config) if model_type == "mlp" else GPT(model_config)
    logging.debug(f"model {model_type}: {sum(p.numel() for p in model.parameters()):,} parameters "
                  f"({type(model_config).__name__})")
    return model


def param_breakdown(model_type: str, model_config) -> dict[str, int]:
    """The parameter counts of a model, without allocating its weights."""
    with torch.device("meta"):
        return build_model(model_type, model_config).param_breakdown()
