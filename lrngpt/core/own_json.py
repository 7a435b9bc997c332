"""lrn's own JSON files read back: a file lrn wrote itself (a chapter's verdicts, a sweep's summary, a
study's result) that does not parse is no file for the user to fix, as a config of theirs is
(lrngpt.core.fsio.read_json says "fix it"): the line says lrn wrote it, that it is damaged, and that
the same command writes it again once it is moved away."""

from __future__ import annotations

import json
from pathlib import Path

from lrngpt.core.bounded import loads_json
from lrngpt.core.fsio import check_regular, user_path
from lrngpt.errors import UserError


def damaged(path: str | Path, what: str, why: str) -> UserError:
    return UserError(f"lrn wrote {what} {path} and it is damaged ({why}): move it away and run the same "
                     "command again")


def read_own_json_object(path: str | Path, what: str) -> dict:
    """The JSON object in `path`, a file lrn wrote; one that does not parse, or holds no object, is
    `damaged` (a missing or unreadable one: a UserError naming it, as any file's)."""
    path = Path(path)
    check_regular(path, what)
    with user_path(path, what):
        text = path.read_text(encoding="utf-8")
    try:
        doc = loads_json(text, f"{what} {path}")
    except json.JSONDecodeError as e:
        raise damaged(path, what, f"not valid JSON at line {e.lineno}: {e.msg}") from None
    if not isinstance(doc, dict):
        raise damaged(path, what, f"a JSON {type(doc).__name__}, not an object")
    return doc
