"""A GPT's width, given as model.n_embd (with n_head) or model.aspect_ratio (nanochat's rule): filled
in, and one layer of settings replacing the way an earlier one gave it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lrngpt.core.validate import check_size, coerce
from lrngpt.errors import UserError
from lrngpt.models import NANOCHAT_HEAD_DIM, nanochat_shape


def fill_width(model: dict) -> dict:
    """A GPT model section with aspect_ratio: n_embd and n_head filled in by nanochat's rule (GPTConfig
    checks that any it already holds agree)."""
    if model.get("aspect_ratio") is None or ("n_embd" in model and "n_head" in model):
        return model
    values: dict[str, Any] = {}
    for key, default in (("aspect_ratio", None), ("head_dim", NANOCHAT_HEAD_DIM), ("n_layer", 6)):
        value = coerce(model.get(key, default), int | None, f"model.{key}")  # GPTConfig's own messages
        values[key] = default if value is None else value
        check_size(f"model.{key}", values[key])
    width, heads = nanochat_shape(values["n_layer"], values["aspect_ratio"], values["head_dim"])
    return {**model, "n_embd": model.get("n_embd", width), "n_head": model.get("n_head", heads)}


def replace_width(model: dict, keys: set[str], where: str) -> None:
    """One layer of settings (`keys`: the model keys it sets) about to go over `model`, an earlier layer's:
    the width stays given one way. aspect_ratio (or the rule's n_layer, head_dim) replaces n_embd and
    n_head; n_embd drops the aspect ratio; n_head drops a head_dim that was n_embd / n_head."""
    if {"n_embd", "aspect_ratio"} <= keys:
        raise UserError(f"{where} gives both model.n_embd and model.aspect_ratio, which both set the width; give "
                        "one of them (aspect_ratio: n_embd = n_layer x aspect_ratio, rounded up to a multiple of "
                        "model.head_dim)")
    aspect = model.get("aspect_ratio") is not None
    if "aspect_ratio" in keys or (aspect and keys & {"n_layer", "head_dim"}):
        if not aspect and "head_dim" not in keys:
            model.pop("head_dim", None)  # it was n_embd / n_head, not a choice of head size
        model.pop("n_embd", None)
        model.pop("n_head", None)
    if "n_embd" in keys:
        model.pop("aspect_ratio", None)
        model.pop("head_dim", None)
    if "n_head" in keys and not aspect:
        model.pop("head_dim", None)


def model_keys(overrides: Iterable[str]) -> set[str]:
    """The model keys (without `model.`) among a layer's keys (`section.key` strings)."""
    return {k.partition(".")[2] for k in overrides if k.startswith("model.")}
