"""The layout of a config dict: its sections and top-level keys, the keys lrn derives itself, the
form of a `section.key` name, and putting a value at one (a config file's `config show` rows, a
--set, a sweep's layers)."""

from __future__ import annotations

from typing import Any

from lrngpt.core.validate import show_value
from lrngpt.errors import UserError

SECTIONS = ("data", "model", "train")
TOP_KEYS = ("model_type", "name")
# Keys the code derives; a user who sets them is told what to set instead.
DERIVED = {
    "model.vocab_size": "it is data.vocab_size (the tokenizer's size); set data.vocab_size instead",
    "model.pad_id": "it is the tokenizer's <|endoftext|> id, which lrn sets itself; leave it out",
}


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
        return
    section, name = key.split(".")
    if section not in d:
        d[section] = {}
    if not isinstance(d[section], dict):  # never overwrite what the file holds: it is the file's error
        raise UserError(f"config section {section!r} must be an object like {{\"key\": value}}, "
                        f"got {show_value(d[section])}; fix the config file")
    d[section][name] = value


def check_shape(d: dict, where: str = "") -> None:
    """Each section present is an object (null included: a section is left out, never null)."""
    for section in SECTIONS:
        if section in d and not isinstance(d[section], dict):
            raise UserError(f"{where}config section {section!r} must be an object like {{\"key\": value}}, "
                            f"got {show_value(d[section])}")
