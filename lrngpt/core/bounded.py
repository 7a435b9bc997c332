"""Values a user wrote, read within bounds: config files (JSON, YAML), `--set` values, JSON files.

A config value is plain data: null, true/false, an integer, a number, a string, or a list or
string-keyed object of those. Whatever a file or a `--set` holds is read into that within limits
on the file's size, the nesting, the number of values (a YAML alias counts each time it is used)
and an integer's digits, so a hostile input costs milliseconds and one line naming what is wrong,
never minutes, gigabytes, a RecursionError, `TypeError: ... is not JSON serializable` or
`ValueError: Exceeds the limit (4300 digits)`. A config has a few dozen values, a few levels deep,
and integers of at most 19 digits (they fit in 64 bits), so the limits never touch a real one.
"""

from __future__ import annotations

import json
from typing import Any

from lrngpt.errors import UserError

MAX_CONFIG_BYTES = 1 << 20  # a config file (JSON or YAML): a few KB in practice
MAX_DEPTH = 32  # lists and objects nested in one another
MAX_VALUES = 10_000  # values in one config document or --set value, every use of a YAML alias counted
MAX_INT_DIGITS = 100  # past this an integer is no config value (they fit in 64 bits: 19 digits)
PLAIN = "a value is null, true/false, a number, a string, or a list or object of those"


def int_digits(text: str) -> int:
    """How many digits an integer literal has (sign, prefix and underscores left out)."""
    body = text.strip().lstrip("+-").replace("_", "")
    if body[:2].lower() in ("0x", "0o", "0b"):
        body = body[2:]
    return len(body)


def too_many_digits(digits: int, where: str) -> UserError:
    return UserError(f"{where}: an integer of {digits:,} digits is no config value (integers fit in 64 bits, "
                     "19 digits); write a smaller number")


def kind_of(value: Any) -> str:
    """What a value that is not plain data is, for a message (bytes, a set, a complex number, ...)."""
    names = {bytes: "bytes (b'...')", bytearray: "bytes", set: "a set", frozenset: "a set", complex: "a complex number",
             type(Ellipsis): "an Ellipsis (...)"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return f"a Python {type(value).__name__}"


def check_plain(value: Any, where: str) -> None:
    """Refuse anything but plain data within the limits, naming where it sits: `where` (a file, a
    --set; "" for none) and the path inside it (train.steps, model.sizes[2]).

    Walks without recursion, so a cyclic or deeply nested value is refused, not a RecursionError."""
    def place(path: str) -> str:
        path = path if len(path) <= 60 else path[:57] + "..."  # (a deep path says little more)
        return f"{where}: {path}" if where and path else where or path or "the value"

    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    seen = 0
    while stack:
        v, path, depth = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            raise UserError(f"{place('')} holds more than {MAX_VALUES:,} values; a config has a few dozen")
        if v is None or isinstance(v, bool | float | str):
            continue
        if isinstance(v, int):
            if v.bit_length() > MAX_INT_DIGITS * 3.33:  # checked by size: str() of it may be refused
                raise too_many_digits(int(v.bit_length() / 3.3219) + 1, place(path))
            continue
        if isinstance(v, list | tuple | dict):
            if depth >= MAX_DEPTH:
                raise UserError(f"{place(path)}: lists and objects nested more than {MAX_DEPTH} deep; a config "
                                "value is a few levels deep at most")
            if isinstance(v, dict):
                for k, item in v.items():
                    if not isinstance(k, str):
                        raise UserError(f"{place(path)}: the key {_short(k)} is {_kind_word(k)}, not a name; keys "
                                        "are strings such as train or steps")
                    stack.append((item, f"{path}.{k}" if path else k, depth + 1))
            else:
                stack.extend((item, f"{path}[{i}]", depth + 1) for i, item in enumerate(v))
            continue
        raise UserError(f"{place(path)} is {kind_of(v)}, which no config value is; {PLAIN}")


def _kind_word(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true/false"
    if isinstance(v, int | float):
        return "a number"
    return kind_of(v) if not isinstance(v, list | tuple | dict) else "a list or object"


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


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
