"""JSON read within bounds, and the one bound on an integer's digits: what lrn's own files and a
user's config share (a config value's other bounds: lrngpt.runconfig.values).

An integer of more than MAX_INT_DIGITS digits is no value lrn takes (they fit in 64 bits: 19 digits),
refused by its digits before Python converts it: str() of one past 4,300 digits is refused, and the
conversion costs quadratic time.
"""

from __future__ import annotations

import json
from typing import Any

from lrngpt.errors import UserError

MAX_INT_DIGITS = 100


def int_digits(text: str) -> int:
    """How many digits an integer literal has (sign, prefix and underscores left out)."""
    body = text.strip().lstrip("+-").replace("_", "")
    return len(body) - 2 if body[:2].lower() in ("0x", "0o", "0b") else len(body)


def too_many_digits(digits: int, where: str) -> UserError:
    return UserError(f"{where}: an integer of {digits:,} digits is no config value (integers fit in 64 bits, "
                     "19 digits); write a smaller number")


def loads_json(text: str, where: str) -> Any:
    """json.loads with bounds: an integer of more than MAX_INT_DIGITS digits, a key twice in one
    object, or nesting beyond what the parser can hold are UserErrors naming `where` (a malformed
    document still raises json.JSONDecodeError, for the caller to place by line)."""
    def parse_int(digits: str) -> int:
        if len(digits) > MAX_INT_DIGITS:
            raise too_many_digits(int_digits(digits), where)
        return int(digits)

    def unique(pairs: list[tuple[str, Any]]) -> dict:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            keys = [k for k, _ in pairs]
            twice = next(k for i, k in enumerate(keys) if k in keys[:i])
            raise UserError(f"{where}: the key {twice!r} appears twice in one object, and only one can hold; "
                            "keep one")
        return obj

    try:
        return json.loads(text, parse_int=parse_int, object_pairs_hook=unique)
    except RecursionError:
        raise UserError(f"{where}: lists and objects nested too deep to read (a config value is a few levels "
                        "deep at most)") from None
