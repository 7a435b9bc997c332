"""`lrn report DIR`: a run or sweep directory as one self-contained HTML page (SPEC section 10).

Everything is inline: the CSS, and the figures as base64 PNG data URIs. A Content-Security-Policy
allows nothing else, so the page opens offline and a browser would refuse any stray external
reference instead of quietly fetching it. No JavaScript.
"""

from __future__ import annotations

import base64
import html
import io
import re
from pathlib import Path

import numpy as np

from lrngpt.errors import UserError
from lrngpt.experiments.summary import read_definition
from lrngpt.fsio import atomic_write, check_output, read_json_object, user_path
from lrngpt.run import RunDir, read_metrics, read_summary

GENERATOR = '<meta name="generator" content="lrn report">'  # marks a file we may overwrite
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
STORIES_WORDS = (" Lily", " Tom", " red", " cat", " apple", " park")  # one or two per category
TABLE_TITLES = {"rows": "Runs", "by_width": "By width (bpb saved per doubling)", "seeds": "Over seeds"}
N_FREQUENT, K_NEIGHBOURS, MAX_METRIC_ROWS = 5, 8, 25
CSS = """
body { font: 15px/1.45 system-ui, sans-serif; color: #222; max-width: 1100px; margin: 0 auto; padding: 1em 2em; }
h1 { margin-bottom: .2em; } h2 { border-bottom: 2px solid #ddd; padding-bottom: .2em; margin-top: 1.8em; }
nav a { margin-right: 1em; color: #2563eb; } .sub, figcaption { color: #555; margin-top: 0; }
.note { background: #fff7d6; border-left: 4px solid #e0b000; padding: .4em .8em; }
table { border-collapse: collapse; margin: .6em 0; font-size: 14px; } .wide { overflow-x: auto; }
th, td { border: 1px solid #ddd; padding: .25em .6em; text-align: left; vertical-align: top; }
th, code, pre { background: #f3f4f6; } td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
code { padding: 0 .2em; white-space: pre; } pre { padding: .8em; overflow-x: auto; font-size: 13px; }
img { max-width: 100%; border: 1px solid #eee; } footer { color: #888; margin-top: 3em; font-size: 12px; }
"""

esc = html.escape


def kind_of(d: Path) -> str:
    """'run' or 'sweep', from the files that `lrn train` and `lrn sweep` write."""
    if not d.is_dir():
        raise UserError(f"{d} {'is not a directory' if d.exists() else 'does not exist'}; give a run directory "
                        "(lrn train --out) or a sweep directory (lrn sweep --out)")
    if (d / "sweep.json").is_file():
        return "sweep"
    if (d / "config.json").is_file():
        return "run"
    raise UserError(f"{d} is neither a run directory (no config.json) nor a sweep directory (no sweep.json)")


def is_report(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return GENERATOR.encode() in f.read(4096)
    except OSError:
        return False


def write_report(d: str | Path, out: str | Path | None = None, force: bool = False) -> dict:
    """Write the page (default DIR/report.html); refuse to replace a file that is not an earlier report."""
    d = Path(d)
    kind = kind_of(d)
    out = check_output(out, "file", example="report.html") if out else d / "report.html"
    if out.is_dir():
        raise UserError(f"{out} is a directory; give a file name with --out, such as {out.parent / 'report.html'}")
    if out.exists() and not force and not is_report(out):
        raise UserError(f"{out} exists and is not an lrn report; choose another --out or add --force to replace it")
    text, sections = build_report(d, kind)
    with user_path(out.parent, "output directory"):
        out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, text)  # a killed report never leaves half a page over the old one
    return {"path": str(out), "sections": sections}


def build_report(d: Path, kind: str | None = None) -> tuple[str, list[str]]:
    """The HTML text and the titles of its sections."""
    kind = kind or kind_of(d)
    sections = run_sections(d) if kind == "run" else sweep_sections(d)
    note = ""
    if kind == "sweep":
        scale = read_definition(d, partial=True).get("scale")
        if scale and scale != "full":
            note = f'<p class="note">Scale <b>{esc(str(scale))}</b>: steps and batch were shrunk; these are not the full-size numbers.</p>'
    title = f"{kind.capitalize()} {d.resolve().name}"
    nav = "".join(f'<a href="#{_slug(t)}">{esc(t)}</a>' for t, _ in sections)
    body = "".join(f'<section id="{_slug(t)}"><h2>{esc(t)}</h2>{b}</section>\n' for t, b in sections)
    page = (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n{GENERATOR}\n'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            f"<title>{esc(title)}</title><style>{CSS}</style></head>\n<body><header><h1>{esc(title)}</h1>"
            f'<p class="sub">{esc(str(d.resolve()))}</p><nav>{nav}</nav>{note}</header>\n{body}'
            "<footer>Written by lrn report.</footer></body></html>\n")
    return page, [t for t, _ in sections]


# ---- a run ---------------------------------------------------------------------------------

def run_sections(d: Path) -> list[tuple[str, str]]:
    RunDir(d).config()  # checked: a damaged config.json is named, field and all
    cfg, summary, metrics = RunDir(d).config_dict(), _summary(d) or None, read_metrics(d)
    curves = _curves_png({d.name: metrics})
    return [
        ("Overview", _overview(cfg, summary, metrics)),
        ("Configuration", _table(["key", "value"], sorted(_flatten(cfg).items()))),
        ("Metrics", _metrics_table(metrics)),
        ("Curves", _figure(curves, "training loss and validation bpb against step") if curves
         else "<p>No metrics logged yet.</p>"),
        ("Embedding neighbours", neighbours_html(d)),
    ]


def _overview(cfg: dict, summary: dict | None, metrics: list[dict]) -> str:
    data = cfg.get("data", {})
    rows = [("model", cfg.get("model_type")), ("preset", cfg.get("name")), ("corpus", data.get("corpus")),
            ("vocabulary", data.get("vocab_size"))]
    if summary is None:
        last = max((r.get("step", 0) for r in metrics), default=0)
        return (f"<p>No summary.json: the run has not finished (last logged step {last:,}).</p>"
                + _table(["", ""], rows))
    names = {"step": "step", "finished": "finished", "val_bpb": "val bpb", "train_bpb": "train bpb",
             "gap": "gap (val - train)", "val_loss": "val loss (nats/token)", "params": "parameters",
             "tokens_seen": "tokens seen", "seconds": "training seconds", "device": "device"}
    rows += [(label, summary.get(key)) for key, label in names.items()]
    return _table(["", ""], [r for r in rows if r[1] is not None])


def _metrics_table(metrics: list[dict]) -> str:
    by_step: dict[int, dict] = {}
    for r in metrics:
        if not r.get("final") and isinstance(r.get("step"), int):
            by_step.setdefault(r["step"], {}).update(r)
    steps = sorted(s for s, r in by_step.items() if "val_bpb" in r) or sorted(by_step)
    if not steps:
        return "<p>No metrics logged yet.</p>"
    shown = [steps[i] for i in sorted({round(x) for x in np.linspace(0, len(steps) - 1, MAX_METRIC_ROWS)})]
    cols = [c for c in ("step", "loss", "lr", "tokens_per_s", "val_bpb", "val_loss")
            if any(c in by_step[s] for s in shown)]
    note = f"<p>{len(shown)} of {len(steps)} evaluations, evenly spaced.</p>" if len(shown) < len(steps) else ""
    return note + _table([c.replace("_", " ") for c in cols], [[by_step[s].get(c) for c in cols] for s in shown])


def neighbours_html(run_dir: Path) -> str:
    """Nearest tokens by cosine in the trained embedding table, for category words or frequent tokens."""
    from lrngpt.cli.embed import neighbors, purity
    from lrngpt.run import load_run

    if not RunDir(run_dir).checkpoint_path("last").exists():
        return "<p>No embedding table to show: the run has no checkpoint yet.</p>"
    run = load_run(run_dir)  # a damaged checkpoint is an error, not a blank section
    table = run.model.token_embedding.weight.detach().float()
    stories = run.config.data.corpus.startswith("stories")
    if stories:
        queries, why = list(STORIES_WORDS), "category words of the stories corpus"
    else:
        queries, why = frequent_tokens(run, N_FREQUENT)
    rows = []
    for q in queries:
        r = neighbors(run, table, q, K_NEIGHBOURS)
        rows.append([_code(q), " + ".join(_code(t["token"]) for t in r["tokens"]),
                     ", ".join(f"{_code(n['token'])}&nbsp;{n['cosine']:.2f}" for n in r["neighbors"])])
    text = (f"<p>Step {run.step:,}; {esc(why)}; {K_NEIGHBOURS} nearest tokens by cosine "
            "(a word the tokenizer split is looked up by the mean of its pieces).</p>")
    text += _table(["query", "tokens", "neighbours (cosine)"], rows, raw=True)
    if stories:
        try:
            p = purity(run_dir)
        except UserError as e:
            return text + f"<p>Category purity not computed: {esc(str(e))}</p>"
        t, u = p["trained"], p["untrained"]
        text += (f"<p>Category purity (k={t['k']}, {t['n_words']} single-token category words): trained "
                 f"<b>{t['overall']:.3f}</b>, untrained {u['overall']:.3f}, chance {t['chance']:.3f}.</p>"
                 if u else f"<p>Category purity: trained <b>{t['overall']:.3f}</b>, chance {t['chance']:.3f}.</p>")
    return text


def frequent_tokens(run, n: int) -> tuple[list[str], str]:
    """The n most frequent word-like tokens of the run's validation split, if its prepared data is cached;
    else the earliest BPE merges (ids follow merge order, and BPE merges the most frequent pair first)."""
    from lrngpt.data import data_cache_dir, load_prepared

    tok, counts = run.tokenizer, None
    key = run.checkpoint.get("data_key")
    if isinstance(key, str):
        try:
            data = load_prepared(data_cache_dir() / key)
            if data.meta.get("key") == key:
                counts = np.bincount(np.asarray(data.tokens("val"), dtype=np.int64), minlength=tok.vocab_size)
        except (UserError, OSError, KeyError, ValueError, TypeError):
            pass  # not cached (another machine, a cleared cache): fall back to merge order
    order = np.argsort(-counts, kind="stable") if counts is not None else np.arange(tok.vocab_size)
    texts = [tok.id_to_token(i) for i in order.tolist() if i not in tok.special_ids]
    alpha = [t for t in texts if t.strip().isalpha() and len(t.strip()) >= 2]
    # whole words (" the") read better than pieces ("ed"); pieces only when words run short
    words = ([t for t in alpha if t.startswith(" ")] + [t for t in alpha if not t.startswith(" ")])[:n]
    why = ("the most frequent word tokens of the validation split" if counts is not None
           else "the earliest BPE merges (its prepared data is not in the cache to count)")
    return words, why


# ---- a sweep -------------------------------------------------------------------------------

def sweep_sections(d: Path) -> list[tuple[str, str]]:
    sweep = read_definition(d, partial=True)  # an early or partial sweep.json shows what it holds
    summary = read_json_object(d / "summary.json", "sweep summary") if (d / "summary.json").exists() else {}
    points = [p if isinstance(p, dict) else {"name": p} for p in sweep.get("points") or []] or [
        {"name": r.name} for r in sorted((d / "runs").glob("*")) if r.is_dir()]
    points = [p for p in points if p.get("name")]
    runs = {str(p["name"]): d / "runs" / str(p["name"]) for p in points}
    status = [[n, p.get("values"), _status(runs[n]), _summary(runs[n]).get("val_bpb")]
              for p in points for n in [str(p["name"])]]
    about = {k: v for k, v in sweep.items() if k not in ("points", "base")}
    sections = [("Sweep", _table(["key", "value"], sorted(_flatten(about).items()))
                 + _table(["run", "settings", "status", "val bpb"], status)
                 + ("<h3>Base configuration</h3>" + _table(["key", "value"], sorted(_flatten(sweep["base"]).items()))
                    if isinstance(sweep.get("base"), dict) else ""))]
    tables = {k: v for k, v in summary.items()
              if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)}
    sections.append(("Results", "".join(f"<h3>{esc(TABLE_TITLES.get(k, k.replace('_', ' ')))}</h3>{_dict_table(v)}"
                                        for k, v in tables.items()) or "<p>No summary yet: no run has finished.</p>"))
    figs = sorted((d / "figures").glob("*.png"))
    sections.append(("Figures", "".join(_figure(_read_bytes(p), p.name) for p in figs) or "<p>No figures yet.</p>"))
    lines = _read_bytes(d / "lines.txt").decode(errors="replace") if (d / "lines.txt").is_file() else ""
    sections.append(("Run lines", f"<pre>{esc(lines)}</pre>" if lines.strip() else "<p>No lines.txt yet.</p>"))
    curves = _curves_png({n: read_metrics(r) for n, r in runs.items()})
    sections.append(("Curves", _figure(curves, "every run's training loss and validation bpb") if curves
                     else "<p>No metrics logged yet.</p>"))
    finished = sorted((s["val_bpb"], n) for n, r in runs.items() if isinstance((s := _summary(r)).get("val_bpb"), float))
    nb = (f"<p>Of the run with the lowest val bpb, <b>{esc(finished[0][1])}</b>.</p>" + neighbours_html(runs[finished[0][1]])
          if finished else "<p>No finished run yet.</p>")
    return [*sections, ("Embedding neighbours", nb)]


def _summary(run_dir: Path) -> dict:
    s = read_summary(run_dir)
    return s if isinstance(s, dict) else {}


def _status(r: Path) -> str:
    s = _summary(r) or None
    if s is not None:
        return "finished" if s.get("finished", True) else f"stopped at step {s.get('step')}"
    steps = [m.get("step", 0) for m in read_metrics(r)]
    return f"running or killed (step {max(steps):,})" if steps else "not started"


# ---- HTML and figure pieces ----------------------------------------------------------------

def _read_bytes(path: Path) -> bytes:
    with user_path(path, "file"):
        return path.read_bytes()


def _flatten(obj, prefix: str = "") -> dict:
    if not isinstance(obj, dict):
        return {prefix: obj}
    return {key: v for k, sub in obj.items() for key, v in _flatten(sub, f"{prefix}.{k}" if prefix else str(k)).items()}


def _fmt(v) -> str:
    if isinstance(v, bool) or v is None:
        return "-" if v is None else str(v).lower()
    if isinstance(v, int | float) and abs(v) >= 1e4:
        return f"{v:,.0f}"
    if isinstance(v, float):
        return f"{v:.3e}" if v != 0 and abs(v) < 1e-3 else f"{v:.4f}"
    if isinstance(v, dict):  # a parameter breakdown, say: thousands separated alike
        return ", ".join(f"{k} {x:,}" if isinstance(x, int) else f"{k} {_fmt(x)}" for k, x in v.items())
    if isinstance(v, list):
        return ", ".join(_fmt(x) for x in v)
    return str(v)


def _dict_table(rows: list[dict]) -> str:
    cols = list(dict.fromkeys(k for r in rows for k in r))
    return _table([c.replace("_", " ") for c in cols], [[r.get(c) for c in cols] for r in rows])


def _table(header: list[str], rows, raw: bool = False) -> str:
    """Numbers right-aligned; `raw` cells are HTML already."""
    def cell(v):
        num = isinstance(v, int | float) and not isinstance(v, bool)
        return f'<td class="num">{_fmt(v)}</td>' if num else f"<td>{v if raw else esc(_fmt(v))}</td>"
    head = "".join(f"<th>{esc(h)}</th>" for h in header) if any(header) else ""
    body = "".join("<tr>" + "".join(cell(v) for v in r) + "</tr>" for r in rows)
    return f"<div class=\"wide\"><table>{f'<thead><tr>{head}</tr></thead>' if head else ''}<tbody>{body}</tbody></table></div>"


def _code(token: str) -> str:
    return f"<code>{esc(repr(token))}</code>"


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def _figure(png: bytes, caption: str) -> str:
    if not png.startswith(b"\x89PNG\r\n\x1a\n"):  # a broken file would show as an empty box
        return f"<p>{esc(caption)}: not a PNG image, left out.</p>"
    data = base64.b64encode(png).decode("ascii")
    return f'<figure><img src="data:image/png;base64,{data}" alt="{esc(caption)}"><figcaption>{esc(caption)}</figcaption></figure>'


def _curves_png(runs: dict[str, list[dict]]) -> bytes | None:
    """Training loss and periodic validation bpb against step, one line per run."""
    from matplotlib.figure import Figure  # no pyplot: no global state, no display needed (Agg)

    series = {n: ([(r["step"], r["loss"]) for r in rows if "loss" in r and "step" in r],
                  [(r["step"], r["val_bpb"]) for r in rows if "val_bpb" in r and "step" in r and not r.get("final")])
              for n, rows in runs.items()}
    if not any(a or b for a, b in series.values()):
        return None
    fig = Figure(figsize=(10, 3.6), dpi=100)
    ax_loss, ax_bpb = fig.subplots(1, 2)
    for name, (loss, bpb) in series.items():
        if loss:
            ax_loss.plot(*zip(*loss, strict=True), label=name)
        if bpb:
            ax_bpb.plot(*zip(*bpb, strict=True), marker="o", ms=3, label=name)
    ax_loss.set(xlabel="step", ylabel="training loss (nats/token)", title="training loss")
    ax_bpb.set(xlabel="step", ylabel="bits per byte", title="validation bpb")
    for ax in (ax_loss, ax_bpb):
        ax.grid(alpha=0.3)
        if len(series) > 1 and ax.lines:
            ax.legend(fontsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()
