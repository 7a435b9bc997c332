"""Word categories for category purity: a user's file (JSON {"month": ["January", ...]} or TSV
`category<TAB>word` lines, # comments) or the stories corpus's own (stories_categories.json, the
default for a run on that corpus). A word is looked up as it reads after a space unless it starts with one.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from lrngpt.core.fsio import read_regular, user_path
from lrngpt.errors import UserError, option

FORMAT = ('a JSON object {"category": ["word", ...], ...} or TSV lines category<TAB>word')
STORIES_FILE = "stories_categories.json"


def stories_categories() -> dict[str, list[str]]:
    """The stories corpus's categories, as shipped in lrngpt/corpora/stories_categories.json."""
    text = resources.files("lrngpt.corpora").joinpath(STORIES_FILE).read_text(encoding="utf-8")
    return parse_json(text, STORIES_FILE)


def load_categories(path: str | Path) -> dict[str, list[str]]:
    """Read a categories file (JSON or TSV, told apart by its first character)."""
    path, what = Path(path), option("categories")
    with user_path(path, what):  # a directory, a missing file, a FIFO or text that is not UTF-8: one line
        text = read_regular(path, what).decode("utf-8-sig")
    categories = parse_json(text, path) if text.lstrip()[:1] in ("{", "[") else parse_tsv(text, path)
    if not categories:
        raise UserError(f"{option('categories', path)} names no category; give {FORMAT}")
    return categories


def parse_json(text: str, where) -> dict[str, list[str]]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError(f"{option('categories', where)}: not valid JSON ({e.msg} at line {e.lineno}); give {FORMAT}") from None
    if not isinstance(doc, dict):
        raise UserError(f"{option('categories', where)}: the JSON is a {type(doc).__name__}, not an object; give {FORMAT}")
    out: dict[str, list[str]] = {}
    for name, words in doc.items():
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise UserError(f"{option('categories', where)}: category {name!r} must be a list of words (strings)")
        out[name] = [w for w in words if w.strip()]
    return out


def parse_tsv(text: str, where) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if "\t" not in line:
            raise UserError(f"{option('categories', where)}: line {n} has no tab ({line[:40]!r}); each line is "
                            "category<TAB>word (or give a JSON object {\"category\": [\"word\", ...]})")
        name, word = line.split("\t", 1)
        name, word = name.strip(), word.rstrip("\r\n\t")
        if not name or not word.strip():
            raise UserError(f"{option('categories', where)}: line {n} has an empty category or word; "
                            "each line is category<TAB>word")
        out.setdefault(name, []).append(word)
    return out


def resolve(tokenizer, categories: dict[str, list[str]] | dict[str, tuple[str, ...]]) -> dict:
    """Token ids of the categories' single-token words: {"ids": {category: [id, ...]} (2 such words or
    more), "dropped": {category: words} (fewer), "split_words": words the BPE cuts (not scored),
    "repeated": words whose token an earlier word took (a token counts once, in its first category)}."""
    ids: dict[str, list[int]] = {}
    split: list[str] = []
    repeated: list[str] = []
    seen: set[int] = set()
    for name, words in categories.items():
        ids[name] = []
        for w in words:
            t = tokenizer.encode(w if w.startswith(" ") else " " + w)  # as it reads in running text
            if len(t) != 1:
                split.append(w)
            elif t[0] in seen:
                repeated.append(w)
            else:
                ids[name].append(t[0])
                seen.add(t[0])
    return {"ids": {k: v for k, v in ids.items() if len(v) >= 2},
            "dropped": {k: len(v) for k, v in ids.items() if len(v) < 2},
            "split_words": split, "repeated": repeated}
