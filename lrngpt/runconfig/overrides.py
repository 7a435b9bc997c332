"""`--set section.key=value` and `--axis section.key=v1,v2`: values read as JSON, else a Python literal,
else the plain string; and a config dict with the --set items applied (schema validates the result)."""

from __future__ import annotations

import ast
import json
import tokenize
from io import StringIO
from typing import Any

from lrngpt.core import log as logging
from lrngpt.core.fsio import MAX_INT_DIGITS, int_digits, loads_json, too_many_digits
from lrngpt.errors import UserError
from lrngpt.runconfig.values import MAX_DEPTH, check_key_form, check_plain, check_shape, kind_of, set_key
from lrngpt.runconfig.width import model_keys, replace_width

MAX_SET_CHARS = 100_000  # one --set value; a longer one belongs in a config file


def parse_value(raw: str, what: str = "--set value") -> Any:
    """A --set value: JSON when it parses, else a Python literal (True, .5, 1_000), else the plain string
    (stories:5MB), within the bounds of lrngpt.runconfig.values (else a UserError naming `what`)."""
    if len(raw) > MAX_SET_CHARS:
        raise UserError(f"{what} is {len(raw):,} characters, above the limit of {MAX_SET_CHARS:,}; put long "
                        "values in a config file")
    try:
        value = loads_json(raw, what)
    except json.JSONDecodeError:
        value = _literal(raw.strip(), what)
    if isinstance(value, tuple):  # (1, 2) is the list [1, 2], as JSON has it
        value = list(value)
    check_plain(value, what)
    return value


def _literal(raw: str, what: str) -> Any:
    """A Python literal, else the plain string; its integers are counted before Python converts them."""
    try:
        for token in tokenize.generate_tokens(StringIO(raw).readline):
            text = token.string
            if token.type == tokenize.NUMBER and int_digits(text) > MAX_INT_DIGITS and (
                    text[:2].lower() in ("0x", "0o", "0b") or not any(c in text for c in ".eEjJ")):
                raise too_many_digits(int_digits(text), what)
    except (tokenize.TokenError, SyntaxError):
        return raw
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError):
        return raw
    except RecursionError:
        raise UserError(f"{what}: lists nested too deep to read (more than {MAX_DEPTH} levels is no config "
                        "value)") from None
    if isinstance(value, bytes | bytearray | set | frozenset | complex) or value is Ellipsis:
        raise UserError(f"{what}: {raw[:40]!r} is {kind_of(value)}, which no config value is; give a string "
                        "(quoted, or plain as in stories:5MB), a number, true/false, null or a list")
    return value


def parse_override(item: str, what: str = "--set") -> tuple[str, Any]:
    """`section.key=value` -> (key, value), the key checked for its form and against DERIVED."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise UserError(f"{what} {item!r} must look like section.key=value, e.g. model.n_embd=128")
    check_key_form(key, what)
    return key, parse_value(raw, f"{what} {key}")


def parse_axis(item: str) -> tuple[str, list]:
    """`section.key=v1,v2,...` -> (key, [values]); keys joined by + advance together, each value their
    values joined by : (`model.n_layer+model.n_embd=2:120,28:32` -> [[2, 120], [28, 32]])."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key or not raw.strip():
        raise UserError(f"--axis {item!r} must look like section.key=v1,v2, e.g. model.n_embd=8,64,512")
    keys = [k.strip() for k in key.split("+")]
    for part in keys:
        check_key_form(part, "--axis")
    values = [v.strip() for v in raw.split(",") if v.strip()]
    if len(keys) == 1:
        return key, [parse_value(v, f"--axis {key}") for v in values]
    bad = next((v for v in values if len(v.split(":")) != len(keys)), None)
    if bad is not None:
        raise UserError(f"--axis {item!r}: {bad!r} gives {len(bad.split(':'))} values for the {len(keys)} keys "
                        f"{'+'.join(keys)}; give one per key joined by :, e.g. {':'.join(['2'] * len(keys))}")
    return "+".join(keys), [[parse_value(x.strip(), f"--axis {k}") for x, k in zip(v.split(":"), keys, strict=True)]
                            for v in values]


def apply_overrides(d: dict, overrides: list[str]) -> dict:
    """`--set section.key=value`; value as parse_value reads it."""
    check_plain(d, "")  # (the Python API may hand anything in)
    check_shape(d)
    d = json.loads(json.dumps(d))
    items = [(item, *parse_override(item)) for item in overrides]
    if isinstance(d.get("model"), dict):
        replace_width(d["model"], model_keys(k for _, k, _ in items), "--set")
    for item, key, value in items:
        set_key(d, key, value)
        logging.debug(f"config: {key} = {value!r} (from {item!r})")
    return d
