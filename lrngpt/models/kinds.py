"""The model types a run config names: the one list, beside the models it names, light enough for
`lrn --help` (no torch): lrngpt.runconfig validates model_type against it, the API types its
arguments with it and the CLI offers its choices."""

from __future__ import annotations

from typing import Literal, get_args

ModelType = Literal["mlp", "gpt"]
MODEL_TYPES: tuple[str, ...] = get_args(ModelType)
