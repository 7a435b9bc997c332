"""`lrn embed explore`: one self-contained HTML page to explore embedding tables.

Everything is inline: its script and style (explorer.js, explorer.css), the numbers as JSON, the arrays
as base64 in `<script type="application/octet-stream">` blocks, which a browser never runs. Its
Content-Security-Policy allows that one script (by hash) and nothing from anywhere, so it opens offline.
Search vectors are float32 by default: the same neighbours as `lrn embed neighbors`, in the same order;
float16 and int8 shrink the page but can swap near-ties.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from importlib import resources
from pathlib import Path

import numpy as np

from lrngpt.analysis.categories import load_categories
from lrngpt.analysis.vocab import token_text
from lrngpt.core import log as logging
from lrngpt.core.fsio import user_path
from lrngpt.core.ownership import check_file_target, write_owned_file
from lrngpt.errors import UserError, option
from lrngpt.explorer.views import Collection, collect, source_name

GENERATOR = '<meta name="generator" content="lrn embed explore">'  # for readers; lrn goes by its record
PRECISIONS = ("float32", "float16", "int8")
DEFAULT_TOP = 8192  # tokens on the page when --top is not given (every row of a 4,096 vocabulary)


def check_page(out: Path) -> Path:
    """A new file, or an earlier unchanged explorer page lrn wrote (always replaced); never anything else."""
    return check_file_target(out, False, "explorer page", replace_own=True, example="explorer.html")


def write_explorer(sources: list, out: str | Path, top: int | None = None, method: str = "pca",
                   precision: str = "float32", log=None, checkpoint: str = "last",
                   categories: str | Path | dict | None = None) -> dict:
    """Write the page for run and sweep directories (views.collect); returns what it holds, for --json.
    `categories`: a categories file (lrngpt.analysis.categories) or dict."""
    out = Path(out)
    if precision not in PRECISIONS:
        raise UserError(f"{option('precision', f'{precision!r}')}: choose one of {', '.join(PRECISIONS)}")
    check_page(out)
    if categories is not None and not isinstance(categories, dict):
        categories = load_categories(categories)  # a bad file is refused before any table is loaded
    c = collect(sources, top or DEFAULT_TOP, method, log, checkpoint, categories)
    text = render(c, precision, method, title=", ".join(source_name(Path(s)) for s in sources))
    with user_path(out.parent, "output directory"):
        out.parent.mkdir(parents=True, exist_ok=True)
    write_owned_file(out, text, "explorer page")  # recorded as lrn's; never half a page over the old one
    size = out.stat().st_size
    logging.debug(f"explorer: {out} written ({size:,} bytes, {len(c.views)} views, {method})")
    said = ("label", "source", "step", "n_embd", "val_bpb", "used_axes", "purity")  # of each table, for --json
    frames = [{"label": f["label"], "views": [{k: c.views[i]["d" if k == "n_embd" else k] for k in said}
                                              for i in f["views"]]} for f in c.frames]
    return {"path": str(out), "bytes": size, "checkpoint": checkpoint, "tokens": [len(v.ids) for v in c.vocabs.values()],
            "method": method, "precision": precision, "frames": frames}


# ---- the page ------------------------------------------------------------------------------

def encode_vectors(rows: np.ndarray, precision: str) -> tuple[np.ndarray, np.ndarray | None]:
    """The search rows as stored: little-endian float32 / float16, or int8 and a float32 scale per row."""
    if precision == "float32":
        return rows.astype("<f4"), None
    if precision == "float16":
        if np.abs(rows).max(initial=0) > 65504:
            raise UserError(f"the table holds values beyond float16's range; use {option('precision')} float32")
        return rows.astype("<f2"), None
    scale = (np.abs(rows).max(axis=1) / 127).astype("<f4")
    q = np.round(rows / np.where(scale > 0, scale, 1)[:, None])
    return np.clip(q, -127, 127).astype(np.int8), scale


def render(c: Collection, precision: str, method: str, title: str) -> str:
    blocks: list[tuple[str, str]] = []

    def block(arr: np.ndarray) -> str:
        name = f"lrn-b{len(blocks)}"
        blocks.append((name, base64.b64encode(np.ascontiguousarray(arr).tobytes()).decode("ascii")))
        return name

    vocabs = []
    for v in c.vocabs.values():
        tok = v.tokenizer
        raw = [tok.decode_bytes([i]) for i in range(tok.vocab_size)]
        cat = [-1] * v.rows  # each token's category, by its place in v.categories (its file's order)
        for n, ids in enumerate(v.categories.values()):
            for i in ids:
                cat[i] = n
        vocabs.append({
            "rows": v.rows, "ids": v.ids.tolist(), "texts": [token_text(tok, i) for i in range(v.rows)],
            "note": v.note, "freq": None if v.counts is None else v.counts.tolist(), "categories": list(v.categories),
            "cat": cat if v.categories else None, "special": sorted(tok.special_ids),
            "bytes": block(np.frombuffer(b"".join(raw), dtype=np.uint8)), "lengths": [len(b) for b in raw]})
    views = []
    for view in c.views:
        vectors, scales = encode_vectors(view["rows"], precision)
        peak = float(np.abs(view["coords"]).max(initial=0)) or 1.0
        coords = np.round(view["coords"] / peak * 32767).astype("<i2")
        views.append({**{k: v for k, v in view.items() if k != "rows"}, "coords": block(coords),
                      "vectors": block(vectors), "scales": None if scales is None else block(scales)})
    data = {"title": title, "method": method, "precision": precision, "vocabs": vocabs, "views": views,
            "frames": c.frames}
    return page(title, data, blocks, placeholder=search_example(next(iter(c.vocabs.values()))))


def _static(name: str) -> str:
    return resources.files("lrngpt.explorer").joinpath(name).read_text(encoding="utf-8")


def search_example(vocab) -> str:
    """The search box's example: the most frequent token with a category (" Lily"), else the first
    capitalised word of 4 or more letters that is no sentence's first word (its lower case is no token:
    " David" on the Bible, not " The"), else word."""
    ids = [int(i) for i in vocab.ids if int(i) < vocab.tokenizer.vocab_size]  # rows past the BPE have no text
    texts = [vocab.tokenizer.decode([i]) for i in ids]
    categorised = {i for words in vocab.categories.values() for i in words}
    for i, t in zip(ids, texts, strict=True):
        if i in categorised and re.fullmatch(r" [A-Za-z]{2,}", t):
            return t
    known = set(texts)
    for t in texts:
        if re.fullmatch(r" [A-Z][a-z]{3,}", t) and t.lower() not in known:
            return t
    return next((t for t in texts if re.fullmatch(r" [a-z]{3,}", t)), texts[0] if texts else " Lily")


def head(title: str, generator: str, csp: str, style: str) -> str:
    """A self-contained page's head (shared with lrn report's): its policy `csp`, its inline `style`."""
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n{generator}\n'
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(title)}</title><style>{style}</style></head>\n")


def page(title: str, data: dict, blocks: list[tuple[str, str]], placeholder: str = " Lily") -> str:
    script = _static("explorer.js")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    csp = f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; img-src data:"
    # "<" escaped so that no string in the data can close its <script> element
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    raw = "\n".join(f'<script type="application/octet-stream" id="{n}">{b}</script>' for n, b in blocks)
    t = html.escape(title)
    return head(f"Embedding explorer: {title}", GENERATOR, csp, _static("explorer.css")) + f"""<body>
<header><h1>Embedding explorer <span class="sub">{t}</span></h1>
<p class="sub" id="about"></p></header>
<div class="bar" role="search">
  <label for="q">Token or word</label>
  <input id="q" type="search" autocomplete="off" spellcheck="false" placeholder="{html.escape(json.dumps(placeholder, ensure_ascii=False))} (the leading space is part of the token)">
  <span class="k"><label for="k">k</label> <input id="k" type="number" min="1" max="100" value="10"></span>
  <p id="pieces" aria-live="polite"></p>
</div>
<div class="bar" id="stepper" hidden>
  <button id="prev" type="button" aria-label="previous">&#9664;</button>
  <input id="frame" type="range" min="0" max="0" value="0" aria-label="table">
  <button id="next" type="button" aria-label="next">&#9654;</button>
  <output id="frame-label" for="frame"></output>
</div>
<main id="panels"></main>
<section><h2>Categories</h2><div id="legend"></div></section>
<section><h2>Tables</h2><div class="wide"><table id="views"></table></div></section>
<footer id="notes"></footer>
<div id="tip" role="tooltip" hidden></div>
<script type="application/json" id="lrn-data">{payload}</script>
{raw}
<script>{script}</script>
</body></html>
"""
