"""What lrn accepts: one checker for every config value, size and seed.

Every config dataclass (DataConfig, TrainConfig, MLPConfig, GPTConfig) calls `check_fields`
first in its __post_init__, however it was built (a config file, --set, a checkpoint, an
importer, a command's options): each field's value must have the field's type (an int within
64 bits, a finite float, a str, a bool, or null where the type allows it). Then the class checks
its ranges, with the size caps below, so nothing reaches torch or numpy that they would refuse
or that could not be allocated.

Sizes a user may ask for are capped (`check_size`); sizes that follow from several of them
(a model's parameters, a batch of logits) are checked against the memory there is
(`check_memory`); enumerations a message needs (head counts that divide a width) are bounded
(`divisors`).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import json
import math
import os
import re
import types
import typing
from typing import Any

from lrngpt.errors import UserError

INT_LIMIT = 2**63  # torch's seeds and numpy's int64: -2**63 < value < 2**63
MAX_DIM = 2**24  # a width, context, block, batch or sequence length (16,777,216)
MAX_LAYERS = 2**12
MAX_FFN_MULT = 2**10
MAX_PARAMS = 2**40  # about 1.1e12 parameters: far beyond what lrn trains, still exact in int64
MAX_CORPUS_BYTES = 10**12  # a generated corpus: 1 TB
VAL_SPLIT_MODES = ("documents", "chunks")  # data.val_split (the first is the default); here, so the CLI needs no torch


def show_value(value: Any, width: int = 60) -> str:
    """A value as a message shows it: JSON, cut to `width` characters; an integer too long to print
    (Python refuses str() past 4,300 digits) by its size; what JSON cannot write by its repr."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an integer of about {int(value.bit_length() / 3.3219) + 1:,} digits"
    try:
        return json.dumps(value, allow_nan=True)[:width]
    except (TypeError, ValueError, RecursionError):
        try:
            return repr(value)[:width]
        except (ValueError, RecursionError):
            return f"a {type(value).__name__}"


@functools.cache
def field_types(cls) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def coerce(value: Any, annotation: Any, key: str) -> Any:
    """Check/convert one value against a dataclass field's annotation; a UserError naming `key`."""
    origin = typing.get_origin(annotation)
    nullable = False
    if origin in (types.UnionType, typing.Union):
        options = typing.get_args(annotation)
        nullable = type(None) in options
        if value is None and nullable:
            return None
        annotation = next(a for a in options if a is not type(None))
    if annotation is Any:
        return value
    if annotation is bool:
        if isinstance(value, bool):
            return value
    elif annotation is int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool):
            if not -INT_LIMIT < value < INT_LIMIT:
                raise UserError(f"{key} = {show_value(value)} is out of range; it must fit in 64 bits "
                                f"(between -{INT_LIMIT - 1:.3g} and {INT_LIMIT - 1:.3g})")
            return value
    elif annotation is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            if isinstance(value, float) and not math.isfinite(value):
                raise UserError(f"{key} must be a finite number, got {value}")
            try:
                return float(value)
            except OverflowError:  # an int beyond any float
                raise UserError(f"{key} = {show_value(value)} is out of range for a number") from None
    elif annotation is str:
        if isinstance(value, str):
            return value
    name = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}.get(
        annotation, getattr(annotation, "__name__", str(annotation)))
    raise UserError(f"{key} must be {name}{' or null' if nullable else ''}, got {show_value(value)}"
                    f"{_yaml11_hint(value, annotation)}")


def _yaml11_hint(value: Any, annotation: Any) -> str:
    """What a YAML 1.1 habit became in YAML 1.2 (the README's promise), said where it is refused."""
    if not isinstance(value, str):
        return ""
    text = value.strip()
    if annotation is bool and text.lower() in ("yes", "no", "on", "off", "y", "n"):
        return " (yes, no, on and off are strings in YAML 1.2 and JSON: write true or false)"
    if annotation in (int, float) and "_" in text and re.fullmatch(r"[-+]?[0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)?",
                                                                    text):
        return " (a YAML 1.2 or JSON number has no _ between its digits: write it without them)"
    if annotation in (int, float) and re.fullmatch(r"[-+]?[0-9]+(:[0-5]?[0-9])+(\.[0-9]*)?", text):
        return " (1:30 is a string in YAML 1.2, not 90: write the number itself)"
    return ""


def check_fields(obj: Any, section: str) -> None:
    """Coerce every field of a dataclass instance in place (called first by __post_init__)."""
    hints = field_types(obj.__class__)  # (type(obj) of an Any reads as unhashable to mypy)
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        checked = coerce(value, hints[f.name], f"{section}.{f.name}" if section else f.name)
        if checked is not value:
            object.__setattr__(obj, f.name, checked)


def check_size(key: str, value: int, low: int = 1, high: int = MAX_DIM) -> None:
    """`low <= value <= high`, or a UserError naming the key and the range."""
    if value < low:
        raise UserError(f"{key} must be at least {low} (got {value})")
    if value > high:
        why = _WHY_LIMIT.get(high, "past it nothing lrn trains fits in memory")
        raise UserError(f"{key} {value:,} is above the limit of {high:,} ({why}); lower it")


# why each cap is where it is, as a refusal says it
_WHY_LIMIT = {
    MAX_DIM: "2**24: one layer that wide, or a batch that long, outgrows any machine's memory before training",
    MAX_LAYERS: "2**12 layers: far past any model lrn trains, and each layer needs its own weights",
    MAX_FFN_MULT: "2**10 times the width: the feed-forward layer alone would outgrow memory",
    2**32: "token ids are stored as uint32",
}


def check_seed(value: int, what: str = "--seed") -> int:
    if not -INT_LIMIT < value < INT_LIMIT:
        raise UserError(f"{what} {value} is out of range; seeds must fit in 64 bits")
    return value


MAX_POINTS_AT_ONCE = 64  # a sweep's points trained at once (`lrn sweep --points-at-once`): worker processes


def check_points_at_once(value: Any) -> int | None:
    """--points-at-once N (None: chosen from a measurement): a whole number from 1 to MAX_POINTS_AT_ONCE."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_POINTS_AT_ONCE:
        raise UserError(f"--points-at-once must be a whole number from 1 to {MAX_POINTS_AT_ONCE} (1: one point after "
                        f"another; leave it out to choose from a measurement), e.g. --points-at-once 2 (got "
                        f"{show_value(value)})")
    return value


def divisors(n: int) -> list[int]:
    """The divisors of n, in order, found up to sqrt(n) (n at most 2**48 or so stays fast)."""
    if n < 1:
        return []
    small, large = [], []
    i = 1
    while i * i <= n:
        if n % i == 0:
            small.append(i)
            if i != n // i:
                large.append(n // i)
        i += 1
    return small + large[::-1]


def nearest(values: list[int], target: int, count: int = 12) -> list[int]:
    """Up to `count` of `values` closest to `target`, in order (a message's list stays short)."""
    return sorted(sorted(values, key=lambda v: (abs(v - target), v))[:count])


def available_memory() -> int | None:
    """Bytes of memory this machine can still hand out (MemAvailable), None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def training_memory(params: int, batch_size: int, seq_len: int, vocab_size: int) -> int:
    """The bytes one training step needs at the least: fp32 weights, gradients and AdamW's two
    moments (16 bytes a parameter) and one batch of fp32 logits."""
    return 16 * params + 4 * batch_size * seq_len * vocab_size


def check_memory(n_bytes: int, what: str, fix: str, device: str = "cpu") -> None:
    """Refuse work whose arrays alone need more memory than the device has, before allocating."""
    free = None
    if str(device).startswith("cuda"):
        try:
            # torch: `lrn --help` loads this module (a cuda device means torch is loaded already)
            import torch

            free = torch.cuda.mem_get_info(torch.device(device))[0]
        except Exception:  # no driver, no device: let torch say so later
            free = None
    else:
        free = available_memory()
    if free is not None and n_bytes > free:
        where = "this machine" if str(device) == "cpu" else str(device)
        raise UserError(f"{what} needs {_bytes(n_bytes)} of memory, but {where} has {_bytes(free)} free; {fix}")


def _bytes(n: int) -> str:
    for unit, size in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:,} bytes"


def did_you_mean(word: str, choices) -> str:
    """"did you mean X? " for the closest of `choices` to a mistyped `word` (difflib, the same
    cutoff everywhere: keys, presets, commands, choices, options), "" when none is close."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean {close[0]}? " if close else ""

