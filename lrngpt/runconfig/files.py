"""Config files as people write them: JSON, YAML, and `lrn config show --json`'s key rows."""

from __future__ import annotations

import json
from pathlib import Path

from lrngpt.core.fsio import check_regular, loads_json, user_path
from lrngpt.core.validate import show_value
from lrngpt.errors import UserError
from lrngpt.runconfig.values import DERIVED, MAX_CONFIG_BYTES, check_key_form, set_key
from lrngpt.runconfig.yaml12 import load_yaml


def read_config_text(path: Path) -> str:
    """A config file's text: a regular file of at most MAX_CONFIG_BYTES, UTF-8."""
    check_regular(path, "config file")
    with user_path(path, "config file"):
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise UserError(f"config file {path} is {size:,} bytes, above the limit of {MAX_CONFIG_BYTES:,} for a "
                            "config file (they are a few KB); is it the right file?")
        return path.read_text(encoding="utf-8")


def read_config_file(path: Path) -> dict:
    """A config file, YAML by its suffix (read as YAML 1.2: 1e-3 is a number, yes a string), else JSON: an
    object, read within bounds."""
    text, where, yaml = read_config_text(path), f"config file {path}", path.suffix.lower() in (".yaml", ".yml")
    try:
        doc = load_yaml(text, where) if yaml else loads_json(text, where)
    except json.JSONDecodeError as e:
        raise UserError(f"{where} is not valid JSON (line {e.lineno}: {e.msg}); fix it") from None
    if not isinstance(doc, dict):
        raise UserError(f"{where} must hold {'a mapping' if yaml else 'a JSON object'} with sections data, model, "
                        f"train; got {'nothing' if doc is None else type(doc).__name__}")
    return doc


def from_show_json(doc: dict, path: Path | str = "config") -> dict:
    """The config dict of `lrn config show --json`'s output: its key rows checked for shape, set as
    `--set` sets them, the derived keys left out."""
    d: dict = {}
    if not isinstance(doc["keys"], list) or not doc["keys"]:  # (an empty list: a file cut short, or by hand)
        raise UserError(f"{path}: 'keys' must be the list of {{key, value}} rows `lrn config show PRESET --json` "
                        f"writes, got {show_value(doc['keys'])}; write it again with that command (or give the "
                        "sections data, model, train)")
    for row in doc["keys"]:
        if not isinstance(row, dict) or not isinstance(row.get("key"), str) or "value" not in row:
            raise UserError(f"{path}: every entry of 'keys' must be an object with key and value, as "
                            f"`lrn config show --json` writes; got {show_value(row)}")
        if row["key"] not in DERIVED:
            check_key_form(row["key"], f"{path}:")
            set_key(d, row["key"], row["value"])
    return d
