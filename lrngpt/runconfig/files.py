"""Config files as people write them, beside lrngpt.runconfig.schema's JSON: YAML files, and the output of
`lrn config show --json` (its key rows) read back as the config it shows."""

from __future__ import annotations

import json
import re
from pathlib import Path

from lrngpt.core.fsio import user_path
from lrngpt.errors import UserError


def read_yaml(path: Path) -> dict:
    """A YAML config: a mapping, read as YAML 1.2 reads numbers (1e-3 is a float, not a string)."""
    try:
        import yaml
    except ImportError:
        raise UserError(f"config {path} is YAML, which needs PyYAML: pip install pyyaml "
                        "(or pip install 'lrngpt[yaml]')") from None

    class Loader(yaml.SafeLoader):
        pass

    # PyYAML follows YAML 1.1, where a float needs a dot (1.0e-3); litgpt-style files write 1e-3
    Loader.add_implicit_resolver("tag:yaml.org,2002:float", re.compile(
        r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"), list("-+0123456789"))
    with user_path(path, "config file"):
        text = path.read_text(encoding="utf-8")
    try:
        d = yaml.load(text, Loader=Loader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1}: {getattr(e, 'problem', '')})" if mark else ""
        raise UserError(f"config file {path} is not valid YAML{where}; fix it") from None
    if not isinstance(d, dict):
        raise UserError(f"config file {path} must hold a mapping with sections data, model, train; "
                        f"got {type(d).__name__}")
    return d


def show_rows(doc: dict, path: Path | str = "config") -> list[tuple[str, object]]:
    """The (key, value) rows of `lrn config show --json`'s output, checked for shape; lrngpt.runconfig.schema
    turns them into a config dict (derived keys left out)."""
    rows = []
    for row in doc["keys"]:
        if not isinstance(row, dict) or not isinstance(row.get("key"), str) or "value" not in row:
            raise UserError(f"{path}: every entry of 'keys' must be an object with key and value, as "
                            f"`lrn config show --json` writes; got {json.dumps(row)[:60]}")
        rows.append((row["key"], row["value"]))
    return rows
