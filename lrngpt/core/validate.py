"""What every config dataclass accepts: one type check per field (`check_fields`, first in each
__post_init__: an int within 64 bits, a finite float, a str, a bool, or null where allowed), and the caps
on sizes (`check_size`), so nothing reaches torch or numpy that they would refuse or could not allocate.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
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


def show_value(value: Any) -> str:
    """A value as a message shows it: JSON cut to 60 characters, a huge integer by its size, else its repr."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an integer of about {int(value.bit_length() / 3.3219) + 1:,} digits"
    try:
        return json.dumps(value, allow_nan=True)[:60]
    except (TypeError, ValueError, RecursionError):
        try:
            return repr(value)[:60]
        except (ValueError, RecursionError):
            return f"a {type(value).__name__}"


@functools.cache
def field_types(cls) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def coerce(value: Any, annotation: Any, key: str) -> Any:
    """Check/convert one value against a dataclass field's annotation; a UserError naming `key`."""
    union = typing.get_origin(annotation) in (types.UnionType, typing.Union)
    options = typing.get_args(annotation) if union else (annotation,)
    nullable, kind = type(None) in options, next(a for a in options if a is not type(None))
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind is Any or (value is None and nullable) or (kind in (bool, str) and isinstance(value, kind)):
        return value
    if kind is int and number and (not isinstance(value, float) or value.is_integer()):
        if not -INT_LIMIT < int(value) < INT_LIMIT:
            raise UserError(f"{key} = {show_value(int(value))} is out of range; it must fit in 64 bits "
                            f"(between -{INT_LIMIT - 1:.3g} and {INT_LIMIT - 1:.3g})")
        return int(value)
    if kind is float and number:
        if isinstance(value, float) and not math.isfinite(value):
            raise UserError(f"{key} must be a finite number, got {value}")
        try:
            return float(value)
        except OverflowError:  # an int beyond any float
            raise UserError(f"{key} = {show_value(value)} is out of range for a number") from None
    name = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}.get(
        kind, getattr(kind, "__name__", str(kind)))
    raise UserError(f"{key} must be {name}{' or null' if nullable else ''}, got {show_value(value)}"
                    f"{_yaml11_hint(value, kind)}")


def _yaml11_hint(value: Any, annotation: Any) -> str:
    """What a YAML 1.1 habit became in YAML 1.2 (the README's promise), said where it is refused."""
    if not isinstance(value, str):
        return ""
    text = value.strip()
    if annotation is bool and text.lower() in ("yes", "no", "on", "off", "y", "n"):
        return " (yes, no, on and off are strings in YAML 1.2 and JSON: write true or false)"
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


def divisors(n: int) -> list[int]:
    """The divisors of n, in order (found up to sqrt(n))."""
    small = [i for i in range(1, math.isqrt(max(n, 0)) + 1) if n % i == 0]
    return small + [n // i for i in reversed(small) if i * i != n]


def nearest(values: list[int], target: int) -> list[int]:
    """Up to 12 of `values` closest to `target`, in order (what a refusal lists)."""
    return sorted(sorted(values, key=lambda v: (abs(v - target), v))[:12])
