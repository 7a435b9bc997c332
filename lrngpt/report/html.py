"""The report's HTML pieces: numbers formatted by kind (`fmt`: ids as they are, counts with separators,
bpb and losses to 4 decimals, seconds to 0.1), tables with numbers right-aligned, folded details,
figures as PNG data URIs, and the stylesheet.
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Sequence

from lrngpt.explorer.page import head

CSS = """
body { font: 15px/1.45 system-ui, sans-serif; color: #222; max-width: 1100px; margin: 0 auto; padding: 1em 2em; }
h1 { margin-bottom: .2em; } h2 { border-bottom: 2px solid #ddd; padding-bottom: .2em; margin-top: 1.8em; }
nav a { margin-right: 1em; color: #2563eb; } .sub, figcaption { color: #555; margin-top: 0; }
.note { background: #fff7d6; border-left: 4px solid #e0b000; padding: .4em .8em; }
.lead { font-size: 17px; } .lead b { font-size: 19px; } ul.lead { padding-left: 1.2em; }
table { border-collapse: collapse; margin: .6em 0; font-size: 13px; } .wide { overflow-x: auto; max-width: 100%; }
th, td { border: 1px solid #ddd; padding: .2em .45em; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
th { font-weight: 600; } th, code, pre { background: #f3f4f6; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
code { padding: 0 .2em; white-space: pre; } pre { padding: .8em; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12px; }
details { margin: .6em 0; } summary { cursor: pointer; font-weight: 600; }
.verdict { padding: 0 .4em; border-radius: 3px; } .verdict.shows { background: #d1fae5; }
.verdict.not { background: #fee2e2; } .verdict.unknown { background: #e5e7eb; }
.finding { border-left: 4px solid #ddd; padding-left: .8em; margin: .8em 0; } .finding h3 { margin: .3em 0; }
img { max-width: 100%; box-sizing: border-box; border: 1px solid #eee; } footer { color: #888; margin-top: 3em; font-size: 12px; }
"""

esc = html.escape
PLAIN_KEYS = ("seed", "pad_id", "index", "id", "version")  # ids: no separators


def fmt(v, key: str = "") -> str:
    """A value as the report writes it, by what it is (`key`: its name, or a kind like 'bpb')."""
    key = key.rsplit(".", 1)[-1].lower()
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, dict):
        return ", ".join(f"{k} {fmt(x, k)}" for k, x in v.items())
    if isinstance(v, list | tuple):
        return ", ".join(fmt(x, key) for x in v)
    if not isinstance(v, int | float) or (isinstance(v, float) and not math.isfinite(v)) \
            or key.endswith(PLAIN_KEYS) or key.startswith("seed"):
        return str(v)
    if "bpb" in key or key.endswith("loss") or key in ("mean", "spread", "std", "saved_per_doubling"):
        return f"{v:.4f}"
    if key == "gap":
        return f"{v:+.4f}"
    if "seconds" in key:
        return f"{v:,.1f}"
    if key == "passes":
        return f"{v:.2f}"
    if isinstance(v, int):
        return f"{v:,}"  # counts: steps, tokens, parameters, widths
    if abs(v) >= 1e4:
        return f"{v:,.0f}"
    return f"{v:g}"  # rates and fractions: 0.01, 0.0001, 1e-05


def rows_table(header: list[str], rows, raw: bool = False, kinds: Sequence[str | None] | None = None) -> str:
    """Numbers right-aligned and formatted by kind: each column's (`kinds`, default its header), or where
    a kind is None the row's label (key-value tables); `raw` cells are HTML already."""
    def cell(v, kind):
        num = isinstance(v, int | float) and not isinstance(v, bool)
        return f'<td class="num">{fmt(v, kind)}</td>' if num else f"<td>{v if raw else esc(fmt(v, kind))}</td>"
    head = "".join(f"<th>{esc(h)}</th>" for h in header) if any(header) else ""
    kinds = kinds or [str(h).replace(" ", "_") for h in header]
    body = ""
    for r in rows:  # a row has a cell for each column
        body += "<tr>" + "".join(cell(v, r[0] if k is None else k) for v, k in zip(r, kinds, strict=True)) + "</tr>"
    return f"<div class=\"wide\"><table>{f'<thead><tr>{head}</tr></thead>' if head else ''}<tbody>{body}</tbody></table></div>"


def titled_table(title: str, cols: list[tuple[str, str]], rows) -> str:
    """An <h3> title over a table whose columns are (header, kind)."""
    return f"<h3>{esc(title)}</h3>" + rows_table([c for c, _ in cols], rows, kinds=[k for _, k in cols])


def bullets(items) -> str:
    return "<ul>" + "".join(f"<li>{esc(i)}</li>" for i in items) + "</ul>"


def kv_table(flat: dict) -> str:
    return rows_table(["key", "value"], sorted(flat.items()), kinds=[None, None])


def facts_table(facts: list[tuple[str, object]]) -> str:
    """A two-column table of labelled values, each formatted by its label."""
    return rows_table(["", ""], [f for f in facts if f[1] is not None], kinds=[None, None])


def folded(summary: str, body: str) -> str:
    return f"<details><summary>{esc(summary)}</summary>{body}</details>"


def code(token: str) -> str:
    return f"<code>{esc(repr(token))}</code>"


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def figure(png: bytes, caption: str) -> str:
    if not png.startswith(b"\x89PNG\r\n\x1a\n"):  # a broken file would show as an empty box
        return f"<p>{esc(caption)}: not a PNG image, left out.</p>"
    data = base64.b64encode(png).decode("ascii")
    return f'<figure><img src="data:image/png;base64,{data}" alt="{esc(caption)}"><figcaption>{esc(caption)}</figcaption></figure>'


GENERATOR = '<meta name="generator" content="lrn report">'  # for readers; what lrn may replace is its record's
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


def page(title: str, sub: str, sections: list[tuple[str, str]], notes: str = "",
         footer: str = "Written by lrn report.") -> str:
    """A whole self-contained page: the head (its Content-Security-Policy allows nothing from elsewhere),
    the title with `sub` (HTML) under it, a link to each section and the sections, titled."""
    nav = "".join(f'<a href="#{slug(t)}">{esc(t)}</a>' for t, _ in sections)
    body = "".join(f'<section id="{slug(t)}"><h2>{esc(t)}</h2>{b}</section>\n' for t, b in sections)
    return (head(title, GENERATOR, CSP, CSS) + f"<body><header><h1>{esc(title)}</h1>"
            f'<p class="sub">{sub}</p><nav>{nav}</nav>{notes}</header>\n{body}'
            f"<footer>{esc(footer)}</footer></body></html>\n")
