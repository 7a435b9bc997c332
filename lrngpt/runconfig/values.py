"""The rules of a config dict beside lrngpt.runconfig.schema's dataclasses: its sections and keys, the
keys lrn derives (DERIVED: a user who sets one is told what to set instead), `section.key` names, and
what a value may be, wherever it comes from: plain data (null, true/false, numbers, strings, lists and
string-keyed objects) within limits on nesting, count (each use of a YAML alias counted) and digits, so
a hostile input costs milliseconds and one line. Also the checks of what no config dataclass holds
(seeds, points at once). No torch here: the CLI's options use these before anything heavy loads.
"""

from __future__ import annotations

import difflib
from typing import Any

from lrngpt.core.fsio import MAX_INT_DIGITS, too_many_digits
from lrngpt.core.validate import INT_LIMIT, show_value
from lrngpt.errors import UserError, option

MAX_CONFIG_BYTES = 1 << 20  # a config file (JSON or YAML): a few KB in practice
MAX_DEPTH = 32  # lists and objects nested in one another
MAX_VALUES = 10_000  # values in one config document or --set value, every use of a YAML alias counted
PLAIN = "a value is null, true/false, a number, a string, or a list or object of those"
VAL_SPLIT_MODES = ("documents", "chunks")  # data.val_split (the first is the default)
MAX_POINTS_AT_ONCE = 64  # a sweep's points trained at once (`lrn sweep --points-at-once`): worker processes
SECTIONS = ("data", "model", "train")
TOP_KEYS = ("model_type", "name")
DERIVED = {
    "model.vocab_size": "it is data.vocab_size (the tokenizer's size); set data.vocab_size instead",
    "model.pad_id": "it is the tokenizer's <|endoftext|> id, which lrn sets itself; leave it out",
}


def kind_of(value: Any) -> str:
    """What a value is, for a message (null, a number, ..., or what no config value is: bytes, a set)."""
    names = {type(None): "null", bool: "true/false", int: "a number", float: "a number", list: "a list or object",
             tuple: "a list or object", dict: "a list or object", bytes: "bytes (b'...')", bytearray: "bytes",
             set: "a set", frozenset: "a set", complex: "a complex number", type(Ellipsis): "an Ellipsis (...)"}
    return next((name for kind, name in names.items() if isinstance(value, kind)),
                f"a Python {type(value).__name__}")


def check_plain(value: Any, where: str) -> None:
    """Refuse anything but plain data within the limits, naming `where` (a file, a --set; "" for none)
    and the path inside it; walks without recursion, so a cyclic value is refused, not a RecursionError."""
    def place(path: str) -> str:
        path = path if len(path) <= 60 else path[:57] + "..."  # (a deep path says little more)
        return f"{where}: {path}" if where and path else where or path or "the value"

    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    seen = 0
    while stack:
        v, path, depth = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            raise UserError(f"{place('')} holds more than {MAX_VALUES:,} values, each use of a YAML alias counted; a "
                            "config has a few dozen")
        if isinstance(v, int) and v.bit_length() > MAX_INT_DIGITS * 3.33:  # by size: str() of it may be refused
            raise too_many_digits(int(v.bit_length() / 3.3219) + 1, place(path))
        if isinstance(v, list | tuple | dict):
            if depth >= MAX_DEPTH:
                raise UserError(f"{place(path)}: lists and objects nested more than {MAX_DEPTH} deep; a config "
                                "value is a few levels deep at most")
            for k, item in v.items() if isinstance(v, dict) else enumerate(v):
                if isinstance(v, dict) and not isinstance(k, str):
                    raise UserError(f"{place(path)}: the key {repr(k)[:40]} is {kind_of(k)}, not a name; keys are "
                                    "strings such as train or steps")
                stack.append((item, f"{path}[{k}]" if not isinstance(v, dict) else f"{path}.{k}" if path else f"{k}",
                              depth + 1))
        elif not (v is None or isinstance(v, bool | int | float | str)):
            raise UserError(f"{place(path)} is {kind_of(v)}, which no config value is; {PLAIN}")


def check_key_form(key: str, what: str = "--set") -> None:
    if key in DERIVED:
        raise UserError(f"{what} {key}: {DERIVED[key]}")
    if key in TOP_KEYS:
        return
    parts = key.split(".")
    if len(parts) != 2 or parts[0] not in SECTIONS or not parts[1]:
        raise UserError(f"{what} key {key!r} must be data.KEY, model.KEY, train.KEY or model_type "
                        "(e.g. model.n_embd)")


def set_key(d: dict, key: str, value: Any) -> None:
    """Put `value` at `key` (section.key or a top-level key) of a config dict."""
    if key in TOP_KEYS:
        d[key] = value
    else:  # (the caller checked the shape: a section present is an object, never overwritten)
        section, name = key.split(".")
        d.setdefault(section, {})[name] = value


def check_shape(d: dict, where: str = "") -> None:
    """Each section present is an object (null included: a section is left out, never null)."""
    for section in SECTIONS:
        if section in d and not isinstance(d[section], dict):
            raise UserError(f"{where}config section {section!r} must be an object like {{\"key\": value}}, "
                            f"got {show_value(d[section])}")


def check_seed(value: int, what: str = "--seed") -> int:
    if not -INT_LIMIT < value < INT_LIMIT:
        raise UserError(f"{what} {value} is out of range; seeds must fit in 64 bits")
    return value


def check_points_at_once(value: Any) -> int | None:
    """--points-at-once N (None: chosen from a measurement): a whole number from 1 to MAX_POINTS_AT_ONCE."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or not 1 <= value <= MAX_POINTS_AT_ONCE):
        raise UserError(f"{option('points_at_once')} must be a whole number from 1 to {MAX_POINTS_AT_ONCE} (1: one point after "
                        f"another; leave it out to choose from a measurement), e.g. {option('points_at_once', '2')} (got "
                        f"{show_value(value)})")
    return value


def did_you_mean(word: str, choices) -> str:
    """"did you mean X? " for the closest of `choices` to a mistyped `word` (one cutoff everywhere), else ""."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean {close[0]}? " if close else ""
