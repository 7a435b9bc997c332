"""A model from its type and config (here, not in the package's __init__, which `lrn cost` loads
without torch)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

from lrngpt.core import log as logging
from lrngpt.models.gpt import GPT
from lrngpt.models.mlp import MLPLM


def build_model(model_type: str, model_config) -> MLPLM | GPT:
    model = MLPLM(model_config) if model_type == "mlp" else GPT(model_config)
    logging.debug(f"model {model_type}: {sum(p.numel() for p in model.parameters()):,} parameters "
                  f"({type(model_config).__name__})")
    return model


# nn.init's initialisers: on the meta device they would load torch's reference kernels and its compiler
# (about 2 s on a quiet 2-core machine, 6 s on a busy one) to fill values nobody reads
_INITS = ("normal_", "uniform_", "zeros_", "ones_", "constant_", "trunc_normal_", "kaiming_uniform_",
          "kaiming_normal_", "xavier_uniform_", "xavier_normal_", "orthogonal_")


@contextlib.contextmanager
def _no_init() -> Iterator[None]:
    """nn.init's initialisers as no-ops while a model is built only to count its parameters."""
    saved = {name: getattr(torch.nn.init, name) for name in _INITS}
    try:
        for name in saved:
            setattr(torch.nn.init, name, lambda tensor, *args, **kwargs: tensor)
        yield
    finally:
        for name, fn in saved.items():
            setattr(torch.nn.init, name, fn)


def param_breakdown(model_type: str, model_config) -> dict[str, int]:
    """The parameter counts of a model, without allocating (or initialising) its weights."""
    with torch.device("meta"), _no_init():
        return build_model(model_type, model_config).param_breakdown()
