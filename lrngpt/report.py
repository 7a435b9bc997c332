"""`lrn report DIR [DIR ...]`: a run, a sweep or several sweeps as one self-contained HTML page.

The page leads with what a reader came for: the headline numbers (a run: val bpb untrained ->
trained, train bpb, gap, passes over the training text, the best periodic val bpb beside the last;
a sweep: the best width and the bpb saved per doubling), then the figures, the results table and
the embedding neighbours; the full configuration and the per-run details follow, folded in
<details>. Several sweep directories (`lrn report A B`: the 4x-steps sweep beside the chapter's,
the small-data sweep beside the full-data one) share one page: one set of figures, one table, their
runs told apart by sweep name and steps.

Numbers are formatted by kind: ids and seeds as they are (1337), counts with separators (4,000),
bits per byte and losses to 4 decimals, seconds to 0.1. Every table fits a 1280-pixel window.

Everything is inline: the CSS, and the figures as base64 PNG data URIs. A Content-Security-Policy
allows nothing else, so the page opens offline and a browser would refuse any stray external
reference instead of quietly fetching it. No JavaScript. The interactive embedding explorer
(lrngpt.explorer) is written beside it, OUT-explorer.html, and linked: it is a page of its own
(its script, megabytes of vectors) that the report's policy keeps out.
"""

from __future__ import annotations

import base64
import html
import io
import math
import re
from pathlib import Path

import numpy as np

from lrngpt.errors import UserError
from lrngpt.experiments.summary import read_definition
from lrngpt.fsio import atomic_write, check_output, has_marker, user_path
from lrngpt.run import RunDir, read_metrics, read_summary

GENERATOR = '<meta name="generator" content="lrn report">'  # marks a file we may overwrite
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
STORIES_WORDS = (" Lily", " Tom", " red", " cat", " apple", " park")  # one or two per category
N_FREQUENT, K_NEIGHBOURS, MAX_METRIC_ROWS = 5, 8, 25
RUN_SECTIONS = ["Headline", "Curves", "Embedding neighbours", "Embedding explorer", "Details"]
SWEEP_SECTIONS = ["Headline", "Figures", "Results", "Embedding neighbours", "Embedding explorer", "Details"]
# Function words: frequent in any English text and no help in judging an embedding table.
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on
once only or other our ours ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves one said says get got went go also like
""".split())
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
img { max-width: 100%; box-sizing: border-box; border: 1px solid #eee; } footer { color: #888; margin-top: 3em; font-size: 12px; }
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


def explorer_path(out: Path) -> Path:
    return out.with_name(f"{out.stem}-explorer.html")


def default_out(dirs: list[Path]) -> Path:
    """DIR/report.html; for several sweeps, FIRST/report-with-SECOND[-THIRD...].html (FIRST's own report stays)."""
    if len(dirs) == 1:
        return dirs[0] / "report.html"
    others = "-".join(re.sub(r"[^A-Za-z0-9._-]+", "_", d.resolve().name) for d in dirs[1:])
    return dirs[0] / f"report-with-{others}.html"


def write_report(dirs, out: str | Path | None = None, force: bool = False, tokens: list[str] | None = None,
                 checkpoint: str | None = None) -> dict:
    """Write the page (default DIR/report.html) and its explorer beside it; refuse to replace a file
    that is not an earlier report (or explorer page).

    `dirs` is a run directory, or one or more sweep directories. `tokens` are the neighbour section's
    queries (default: frequent content words); `checkpoint` (last, best, init) shows only those weights'
    neighbours (default: the last and the best side by side when they differ)."""
    from lrngpt.explorer import page as explorer

    dirs = [Path(d) for d in ([dirs] if isinstance(dirs, str | Path) else dirs)]
    if not dirs:
        raise UserError("give a run directory, or one or more sweep directories")
    kinds = [kind_of(d) for d in dirs]
    if len(dirs) > 1 and set(kinds) != {"sweep"}:
        raise UserError("several directories make one report only when all are sweep directories "
                        f"({', '.join(f'{d} is a {k}' for d, k in zip(dirs, kinds, strict=True) if k != 'sweep')}); "
                        "report a run directory on its own")
    if checkpoint is not None and checkpoint not in ("last", "best", "init"):
        raise UserError(f"--checkpoint must be last, best or init (got {checkpoint!r})")
    out = check_output(out, "file", example="report.html") if out else default_out(dirs)
    if out.is_dir():
        raise UserError(f"{out} is a directory; give a file name with --out, such as {out.parent / 'report.html'}")
    if out.exists() and not force and not has_marker(out, GENERATOR.encode()):
        raise UserError(f"{out} exists and is not an lrn report; choose another --out or add --force to replace it")
    explorer.check_out(explorer_path(out), force)
    with user_path(out.parent, "output directory"):
        out.parent.mkdir(parents=True, exist_ok=True)
    ready = [d for d in dirs if _has_checkpoint(d, kinds[0])]
    if not ready:  # no checkpoint yet: the report still renders, and says why there is no explorer
        written = {"error": f"{dirs[0]} has no checkpoint yet" if kinds[0] == "run" else
                   f"sweep {', '.join(map(str, dirs))} has no run with a checkpoint yet; run `lrn sweep` first"}
    else:  # a damaged checkpoint is an error, not a blank section
        written = explorer.write_explorer(ready, explorer_path(out), force=True, log=lambda m: None)
    text, sections = build_report(dirs, kinds[0], written, tokens, checkpoint)
    atomic_write(out, text)  # a killed report never leaves half a page over the old one
    return {"path": str(out), "sections": sections, "explorer": written.get("path")}


def _has_checkpoint(d: Path, kind: str) -> bool:
    """A run with ckpt_last.pt, or a sweep with at least one such run: what the explorer can show."""
    if kind == "run":
        return RunDir(d).has_checkpoint("last")
    return any(RunDir(d / "runs" / str(p["name"])).has_checkpoint("last") for p in _points(d))


def build_report(dirs, kind: str | None = None, explorer: dict | None = None, tokens: list[str] | None = None,
                 checkpoint: str | None = None) -> tuple[str, list[str]]:
    """The HTML text and the titles of its sections; `explorer` is what write_explorer returned."""
    dirs = [Path(d) for d in ([dirs] if isinstance(dirs, str | Path) else dirs)]
    kind = kind or kind_of(dirs[0])
    if kind == "run":
        sections = run_sections(dirs[0], tokens, checkpoint)
    else:
        sections = sweep_sections(dirs, tokens, checkpoint)
    sections.insert(-1, ("Embedding explorer", explorer_html(explorer, kind)))
    notes = []
    if kind == "sweep":
        names = [_sweep_name(d) for d in dirs]
        shrunk: dict[str, list[str]] = {}
        for d, name in zip(dirs, names, strict=True):
            scale = read_definition(d, partial=True).get("scale")
            if scale and scale != "full":
                shrunk.setdefault(str(scale), []).append(name if names.count(name) == 1 else f"{name} ({d.name})")
        notes = [f'<p class="note">Scale <b>{esc(scale)}</b>' + (f" ({esc(', '.join(which))})" if len(dirs) > 1 else "")
                 + ": steps and batch were shrunk; these are not the full-size numbers.</p>"
                 for scale, which in shrunk.items()]
    names = [d.resolve().name for d in dirs]
    title = f"{kind.capitalize()} {' + '.join(names)}" if kind == "run" or len(dirs) == 1 else \
        f"Sweeps {' + '.join(names)}"
    nav = "".join(f'<a href="#{_slug(t)}">{esc(t)}</a>' for t, _ in sections)
    body = "".join(f'<section id="{_slug(t)}"><h2>{esc(t)}</h2>{b}</section>\n' for t, b in sections)
    where = "<br>".join(esc(str(d.resolve())) for d in dirs)
    page = (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n{GENERATOR}\n'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{esc(title)}</title><style>{CSS}</style></head>\n<body><header><h1>{esc(title)}</h1>"
            f'<p class="sub">{where}</p><nav>{nav}</nav>{"".join(notes)}</header>\n{body}'
            "<footer>Written by lrn report.</footer></body></html>\n")
    return page, [t for t, _ in sections]


# ---- a run ---------------------------------------------------------------------------------

def run_sections(d: Path, tokens: list[str] | None = None, checkpoint: str | None = None) -> list[tuple[str, str]]:
    RunDir(d).config()  # checked: a damaged config.json is named, field and all
    cfg, summary, metrics = RunDir(d).config_dict(), _summary(d) or None, read_metrics(d)
    curves = _curves_png({d.name: metrics})
    details = (_details("Overview: every number of summary.json", _overview(cfg, summary, metrics))
               + _details("Configuration", _kv_table(_flatten(cfg)))
               + _details("Metrics: the periodic evaluations", _metrics_table(metrics)))
    return [
        ("Headline", run_headline(d, cfg, summary, metrics)),
        ("Curves", _figure(curves, "training loss and validation bpb against step") if curves
         else "<p>No metrics logged yet.</p>"),
        ("Embedding neighbours", neighbours_html(d, tokens, checkpoint)),
        ("Details", details),
    ]


def periodic_evals(metrics: list[dict]) -> dict[int, float]:
    """step -> val bpb of the periodic evaluations (a resumed run's repeated step: the last)."""
    return {m["step"]: m["val_bpb"] for m in metrics
            if isinstance(m.get("val_bpb"), int | float) and not m.get("final") and isinstance(m.get("step"), int)}


def run_headline(d: Path, cfg: dict, summary: dict | None, metrics: list[dict]) -> str:
    from lrngpt.experiments.summary import corpus_label, run_epochs

    evals = periodic_evals(metrics)
    data, train = cfg.get("data", {}), cfg.get("train", {})
    untrained = evals.get(0)
    facts = [("model", cfg.get("model_type")), ("corpus", corpus_label(data.get("corpus"))),
             ("vocabulary", data.get("vocab_size")), ("width d", (cfg.get("model") or {}).get("n_embd"))]
    if summary is None:
        last = max((r.get("step", 0) for r in metrics), default=0)
        text = f"<p class=\"lead\">Not finished: no summary.json yet (last logged step {fmt(last, 'step')}).</p>"
        if evals:
            s = max(evals)
            text += f"<p>Last periodic val bpb {fmt(evals[s], 'bpb')} at step {fmt(s, 'step')}.</p>"
        return text + _facts(facts)
    epochs = run_epochs(d, summary, cfg)
    val, trn, gap = summary.get("val_bpb"), summary.get("train_bpb"), summary.get("gap")
    lead = (f"val bpb <b>{fmt(untrained, 'bpb')} &rarr; {fmt(val, 'bpb')}</b> (untrained &rarr; trained, step "
            f"{fmt(summary.get('step'), 'step')})" if untrained is not None
            else f"val bpb <b>{fmt(val, 'bpb')}</b> at step {fmt(summary.get('step'), 'step')}")
    if trn is not None:
        lead += f", train bpb <b>{fmt(trn, 'bpb')}</b>, gap {fmt(gap, 'gap')} (val &minus; train)"
    lead += f", <b>{fmt(epochs, 'epochs')}</b> passes over the training text."
    text = f'<p class="lead">{lead}</p>'
    best, best_step = summary.get("best_val_bpb"), summary.get("best_step")
    if best is None and evals:  # a summary from before best_val_bpb: the periodic evaluations say it
        trained = {s: v for s, v in evals.items() if s > 0}
        if trained:
            best_step = min(trained, key=lambda s: (trained[s], s))
            best = trained[best_step]
    last_step = max((s for s in evals if s > 0), default=None)
    if best is not None and last_step is not None:
        where = f"over {fmt(train.get('eval_tokens'), 'tokens')} tokens spread over the split" \
            if train.get("eval_tokens") else "over the full split"
        same = best_step == last_step
        text += (f"<p>Best periodic val bpb <b>{fmt(best, 'bpb')}</b> at step {fmt(best_step, 'step')}; last "
                 f"{fmt(evals[last_step], 'bpb')} at step {fmt(last_step, 'step')}"
                 + (" (the best is the last)" if same else
                    f" ({fmt(evals[last_step] - best, 'gap')} since the best: ckpt_best.pt keeps the best weights)")
                 + f". Periodic evaluations are {where}; the headline's val bpb is the full split.</p>")
    if untrained is not None:
        text += ("<p class=\"sub\">Untrained: the step-0 evaluation of the same weights as ckpt_init.pt "
                 f"({'over ' + fmt(train.get('eval_tokens'), 'tokens') + ' tokens' if train.get('eval_tokens') else 'full split'}).</p>")
    params = summary.get("params") or {}
    facts += [("parameters", params.get("total") if isinstance(params, dict) else params),
              ("steps", summary.get("step")), ("tokens read", summary.get("tokens_seen")),
              ("training seconds", summary.get("seconds")), ("device", summary.get("device"))]
    return text + _facts(facts)


def _facts(facts: list[tuple[str, object]]) -> str:
    """A two-column table of labelled values, each formatted by its label."""
    facts = [f for f in facts if f[1] is not None]
    return _table(["", ""], facts, row_kinds=[label for label, _ in facts])


def _overview(cfg: dict, summary: dict | None, metrics: list[dict]) -> str:
    if summary is None:
        return "<p>No summary.json: the run has not finished.</p>"
    flat = _flatten({k: v for k, v in summary.items()})
    return _kv_table(flat)


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
    return note + _table([c.replace("_", " ") for c in cols], [[by_step[s].get(c) for c in cols] for s in shown],
                         kinds=cols)


# ---- embedding neighbours ------------------------------------------------------------------

def _checkpoints(run_dir: Path, checkpoint: str | None) -> list[tuple[str, str]]:
    """(which, heading) of the weights to show: the one asked for, else the last and (when it differs)
    the best, with their val bpb from summary.json."""
    s = _summary(run_dir)
    last = f"last, step {fmt(s.get('step'), 'step')}, val bpb {fmt(s.get('val_bpb'), 'bpb')}" if s else "last"
    best = (f"best, step {fmt(s.get('best_step'), 'step')}, periodic val bpb {fmt(s.get('best_val_bpb'), 'bpb')}"
            if s and s.get("best_val_bpb") is not None else "best")
    if checkpoint is not None:
        return [(checkpoint, {"last": last, "best": best, "init": "untrained, step 0"}[checkpoint])]
    shown = [("last", last)]
    if s and s.get("best_step") not in (None, s.get("step")) and (run_dir / "ckpt_best.pt").is_file():
        shown.append(("best", best))
    return shown


def neighbours_html(run_dir: Path, tokens: list[str] | None = None, checkpoint: str | None = None) -> str:
    """Nearest tokens by cosine in the embedding table, for the given tokens, the stories corpus's
    category words, or frequent content words; the last and the best weights side by side."""
    from lrngpt.analysis.embeddings import purity, token_neighbors
    from lrngpt.run import load_run

    shown = _checkpoints(run_dir, checkpoint)
    if not RunDir(run_dir).has_checkpoint(shown[0][0]):
        return ("<p>No embedding table to show: the run has no "
                + ("ckpt_init.pt (it was written before ckpt_init.pt existed)" if shown[0][0] == "init"
                   else "checkpoint yet") + ".</p>")
    # a damaged checkpoint is an error, not a blank section
    runs = [(load_run(run_dir, which), heading) for which, heading in shown if RunDir(run_dir).has_checkpoint(which)]
    run = runs[0][0]
    stories = run.config.data.corpus.startswith("stories")
    if tokens:
        queries, why = list(tokens), "the tokens asked for (--token)"
    elif stories:
        queries, why = list(STORIES_WORDS), "category words of the stories corpus"
    else:
        queries, why = frequent_tokens(run, N_FREQUENT)
    rows = []
    for q in queries:
        cells, pieces = [], "-"
        for r, _ in runs:
            try:
                found = token_neighbors(r.tokenizer, r.model.token_embedding.weight.detach().float(), q, K_NEIGHBOURS)
            except UserError as e:
                cells.append(esc(str(e)))
                continue
            pieces = " + ".join(_code(t["token"]) for t in found["tokens"])  # the same in every table
            cells.append(", ".join(f"{_code(n['token'])}&nbsp;{n['cosine']:.2f}" for n in found["neighbors"]))
        rows.append([_code(q), pieces, *cells])
    text = (f"<p>{esc(why.capitalize())}; {K_NEIGHBOURS} nearest tokens by cosine (a word the tokenizer split is "
            "looked up by the mean of its pieces)"
            + ("; the last and the best weights side by side" if len(runs) > 1 else "") + ".</p>")
    text += _table(["query", "tokens", *(f"neighbours ({h})" for _, h in runs)], rows, raw=True)
    if stories and not tokens and (checkpoint in (None, "last")):
        try:
            p = purity(run_dir, log=lambda m: None)  # the page says what it scored; stderr stays for errors
        except UserError as e:
            return text + f"<p>Category purity not computed: {esc(str(e))}</p>"
        t, u = p["trained"], p["untrained"]
        text += (f"<p>Category purity (k={t['k']}, {t['n_words']} single-token category words): trained "
                 f"<b>{t['overall']:.3f}</b>, untrained {u['overall']:.3f}, chance {t['chance']:.3f}.</p>"
                 if u else f"<p>Category purity: trained <b>{t['overall']:.3f}</b>, chance {t['chance']:.3f}.</p>")
    return text


def is_content_word(token: str) -> bool:
    """A whole word with its leading space, alphabetic, not a function word, not a byte fragment."""
    word = token[1:]
    return token.startswith(" ") and len(word) >= 2 and word.isalpha() and word.lower() not in STOPWORDS


def frequent_tokens(run, n: int) -> tuple[list[str], str]:
    """The n most frequent content words (is_content_word) of the run's validation split, if its
    prepared data is cached; else the earliest such BPE merges (ids follow merge order, and BPE merges
    the most frequent pair first)."""
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
    words = [t for t in texts if is_content_word(t)]
    if len(words) < n:  # a text with few such words: function words, then pieces, rather than nothing
        words += [t for t in texts if t.strip().isalpha() and len(t.strip()) >= 2 and t not in words]
    why = ("the most frequent content words of the validation split" if counts is not None
           else "the earliest content-word BPE merges (its prepared data is not in the cache to count)")
    return words[:n], why


def explorer_html(explorer: dict | None, kind: str) -> str:
    if not explorer or not explorer.get("path"):
        why = explorer.get("error") if explorer else "not written"
        return f"<p>No explorer page: {esc(str(why))}</p>"
    name = Path(explorer["path"]).name
    what = "its trained and untrained tables side by side" if kind == "run" else "a stepper through the widths"
    return (f'<p><a href="{esc(name)}">{esc(name)}</a> ({explorer["bytes"] / 1e6:.1f} MB, beside this report): '
            f"the embedding table as a 2-D map of {explorer['tokens'][0]:,} tokens coloured by category, a search box "
            f"for nearest neighbours, and {what}. It works offline, like this page.</p>")


# ---- one sweep or several ------------------------------------------------------------------

def _sweep_name(d: Path) -> str:
    name = read_definition(d, partial=True).get("name")
    return name if isinstance(name, str) and name else d.resolve().name


def sweep_docs(dirs: list[Path]) -> list[dict]:
    """The summary document of each sweep as its run directories are now (summary.collect), labelled
    by sweep name (the directory's name where two sweeps share one)."""
    from lrngpt.experiments.summary import collect

    docs = []
    for d in dirs:
        doc = {**collect(d, partial=True), "out": str(d), "dir": d}  # what an early sweep.json holds
        docs.append(doc)
    names = [doc["sweep"] for doc in docs]
    for doc in docs:
        doc["label"] = doc["sweep"] if names.count(doc["sweep"]) == 1 else f"{doc['sweep']} ({doc['dir'].name})"
    return docs


def sweep_sections(dirs: list[Path], tokens: list[str] | None = None,
                   checkpoint: str | None = None) -> list[tuple[str, str]]:
    from lrngpt.experiments.figures import figure_pngs

    docs = sweep_docs(dirs)
    multi = len(docs) > 1
    figures = "".join(_figure(png, f"{caption} ({name})") for name, caption, png in figure_pngs(docs)) \
        if any(doc["rows"] for doc in docs) else ""
    curves = _curves_png({(f"{doc['label']}: " if multi else "") + str(p["name"]): read_metrics(doc["dir"] / "runs" /
                                                                                                 str(p["name"]))
                          for doc in docs for p in _points(doc["dir"])})
    if curves:
        figures += _figure(curves, "every run's training loss and validation bpb (curves)")
    finished = sorted((r["val_bpb"], doc["label"], r["name"], doc["dir"]) for doc in docs for r in doc["rows"]
                      if r["val_bpb"] is not None)  # null: no bytes to score
    if finished:
        _, label, name, d = finished[0]
        nb = (f"<p>Of the run with the lowest val bpb, <b>{esc(name)}</b>" + (f" ({esc(label)})" if multi else "")
              + ".</p>" + neighbours_html(d / "runs" / name, tokens, checkpoint))
    else:
        nb = "<p>No finished run yet.</p>"
    return [("Headline", sweep_headline(docs)),
            ("Figures", figures or "<p>No figures yet.</p>"),
            ("Results", results_html(docs)),
            ("Embedding neighbours", nb),
            ("Details", "".join(sweep_details(doc) for doc in docs))]


def _points(d: Path) -> list[dict]:
    sweep = read_definition(d, partial=True)  # an early or partial sweep.json shows what it holds
    points = [p if isinstance(p, dict) else {"name": p} for p in sweep.get("points") or []] or [
        {"name": r.name} for r in sorted((d / "runs").glob("*")) if r.is_dir()]
    return [p for p in points if p.get("name")]


def sweep_headline(docs: list[dict]) -> str:
    from lrngpt.experiments.summary import corpus_label

    items = []
    for doc in docs:
        groups: dict[str, list[dict]] = {}
        for e in doc["by_width"]:
            groups.setdefault(e["series"], []).append(e)
        where = f"{doc['scale']} scale, {corpus_label(doc.get('corpus'))}"
        done = f"{len(doc['rows'])} of {doc['points']} runs finished"
        if not groups:
            items.append(f"<li><b>{esc(doc['label'])}</b> ({esc(where)}): no run has finished yet ({done}).</li>")
            continue
        for series, entries in groups.items():
            best = min(entries, key=lambda e: (e["val_bpb"] is None, e["val_bpb"] or 0.0))  # null: no bytes to score
            saved = [f"{p['n_embd']}&rarr;{e['n_embd']} {fmt(e['saved_per_doubling'], 'bpb')}"
                     for p, e in zip(entries, entries[1:], strict=False) if e["saved_per_doubling"] is not None]
            passes = [e["epochs"] for e in entries if e.get("epochs") is not None]
            span = ("-" if not passes else fmt(passes[0], "epochs") if max(passes) - min(passes) < 0.005
                    else f"{fmt(min(passes), 'epochs')} to {fmt(max(passes), 'epochs')}")
            items.append(f"<li><b>{esc(doc['label'])}</b>, {esc(series)} ({esc(where)}): lowest val bpb "
                         f"<b>{fmt(best['val_bpb'], 'bpb')} at d = {best['n_embd']}</b>"
                         + (f"; val bpb saved per doubling of d: {', '.join(saved)}" if saved else "")
                         + f"; {span} passes over the training text; {done}.</li>")
    passes = [r["epochs"] for doc in docs for r in doc["rows"] if r.get("epochs") is not None]
    repeat = (f'<p class="note">Runs here read their training text up to {fmt(max(passes), "epochs")} times; the book '
              "chapter's finding on the embedding width assumes no token is read twice (it reads 65.5M of its 550M "
              "training tokens), so wide models can memorise their text: compare the gap column.</p>"
              if passes and max(passes) > 1 else "")
    return (repeat + '<ul class="lead">' + "".join(items) + "</ul><p class=\"sub\">Saved per doubling: the drop in val bpb "
            "from one width to the next, shared out per doubling when the step is more than one (16 &rarr; 64 is "
            "two doublings).</p>")


def results_html(docs: list[dict]) -> str:
    multi = len(docs) > 1
    rows = [(doc, r) for doc in docs for r in doc["rows"]]
    if not rows:
        return "<p>No summary yet: no run has finished.</p>"
    others = any(k not in ("model.n_embd", "train.seed", "train.steps") for _, r in rows for k in r.get("values", {}))
    cols = [("sweep", "name")] * multi + [("d", "n_embd"), ("steps", "steps"), ("seed", "seed")] \
        + [("settings", "settings")] * others + [
        ("params", "params"), ("val bpb", "val_bpb"), ("train bpb", "train_bpb"), ("gap", "gap"), ("passes", "epochs"),
        ("best val bpb (step)", "best"), ("used axes", "used_axes"), ("seconds", "seconds")]

    def cell(doc, r, key):
        if key == "name":
            return doc["label"]
        if key == "settings":
            return ", ".join(f"{k}={v}" for k, v in r.get("values", {}).items()
                             if k not in ("model.n_embd", "train.seed", "train.steps")) or "-"
        if key == "best":
            return "-" if r.get("best_val_bpb") is None else \
                f"{fmt(r['best_val_bpb'], 'bpb')} ({fmt(r['best_val_step'], 'step')})"
        if key == "used_axes":
            return f"{r['used_axes']}/{r['n_embd']}"
        return r.get(key)

    text = "<h3>Runs</h3>" + _table([c for c, _ in cols], [[cell(doc, r, k) for _, k in cols] for doc, r in rows],
                                    kinds=[k for _, k in cols])
    wcols = [("sweep", "name")] * multi + [("series", "series"), ("d", "n_embd"), ("val bpb", "val_bpb"),
                                           ("saved per doubling", "saved_per_doubling"), ("train bpb", "train_bpb"),
                                           ("gap", "gap"), ("passes", "epochs"), ("seeds", "seeds")]
    wrows = [[doc["label"] if k == "name" else e.get(k) for _, k in wcols] for doc in docs for e in doc["by_width"]]
    text += "<h3>By width (val bpb saved per doubling)</h3>" + _table([c for c, _ in wcols], wrows,
                                                                      kinds=[k for _, k in wcols])
    groups = [(doc, g) for doc in docs for g in doc["seeds"] if len(g["seeds"]) > 1]
    if groups:
        scols = ["sweep"] * multi + ["series", "d", "seeds", "val bpb", "mean", "max-min", "std"]
        srows = [[doc["label"]] * multi + [g["series"], g["n_embd"], g["seeds"], g["val_bpb"], g["mean"], g["spread"],
                                           g["std"]] for doc, g in groups]
        text += "<h3>Over seeds</h3>" + _table(scols, srows, kinds=["name"] * multi + [
            "series", "n_embd", "seeds", "val_bpb", "val_bpb", "val_bpb", "val_bpb"])
    pending = [(doc["label"], p) for doc in docs for p in doc["pending"]]
    if pending:
        text += f"<p>Not finished yet: {esc(', '.join(p for _, p in pending))}.</p>"
    return text


def sweep_details(doc: dict) -> str:
    d = doc["dir"]
    sweep = read_definition(d, partial=True)
    about = {k: v for k, v in sweep.items() if k not in ("points", "base")}
    points = _points(d)
    status = [[str(p["name"]), p.get("values"), _status(d / "runs" / str(p["name"])),
               _summary(d / "runs" / str(p["name"])).get("val_bpb")] for p in points]
    parts = [[r["name"], *(r["breakdown"].get(k) for k in ("embedding", "hidden", "output")), r["params"]]
             for r in doc["rows"] if isinstance(r.get("breakdown"), dict)]
    body = _kv_table(_flatten(about)) + "<h3>Points</h3>" + _table(["run", "settings", "status", "val bpb"], status,
                                                                   kinds=["name", "values", "status", "val_bpb"])
    if parts:
        body += "<h3>Parameters by part</h3>" + _table(["run", "embedding", "hidden", "output", "total"], parts,
                                                       kinds=["name", "params", "params", "params", "params"])
    if isinstance(sweep.get("base"), dict):
        body += "<h3>Base configuration</h3>" + _kv_table(_flatten(sweep["base"]))
    lines = _read_bytes(d / "lines.txt").decode(errors="replace") if (d / "lines.txt").is_file() else ""
    body += "<h3>Run lines</h3>" + (f"<pre>{esc(lines)}</pre>" if lines.strip() else "<p>No lines.txt yet.</p>")
    return _details(f"Sweep {doc['label']}: definition, points, parameters, base configuration, run lines", body)


def _summary(run_dir: Path) -> dict:
    s = read_summary(run_dir)
    return s if isinstance(s, dict) else {}


def _status(r: Path) -> str:
    s = _summary(r) or None
    if s is not None:
        return "finished" if s.get("finished", True) else f"stopped at step {s.get('step')}"
    steps = [m.get("step", 0) for m in read_metrics(r)]
    return f"running or killed (step {max(steps):,})" if steps else "not started"


# ---- numbers by kind -------------------------------------------------------------------------

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
    if not isinstance(v, int | float):
        return str(v)
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if key.endswith(PLAIN_KEYS) or key.startswith("seed"):
        return str(v)
    if "bpb" in key or key.endswith("loss") or key in ("mean", "spread", "std", "saved_per_doubling"):
        return f"{v:.4f}"
    if key == "gap":
        return f"{v:+.4f}"
    if "seconds" in key:
        return f"{v:,.1f}"
    if key in ("epochs", "passes"):
        return f"{v:.2f}"
    if isinstance(v, int):
        return f"{v:,}"  # counts: steps, tokens, parameters, widths
    if abs(v) >= 1e4:
        return f"{v:,.0f}"
    return f"{v:g}"  # rates and fractions: 0.01, 0.0001, 1e-05


def _table(header: list[str], rows, raw: bool = False, kinds: list[str] | None = None,
           row_kinds: list[str] | None = None) -> str:
    """Numbers right-aligned and formatted by kind (the column's, or the row's for key-value tables);
    `raw` cells are HTML already."""
    def cell(v, kind):
        num = isinstance(v, int | float) and not isinstance(v, bool)
        return f'<td class="num">{fmt(v, kind)}</td>' if num else f"<td>{v if raw else esc(fmt(v, kind))}</td>"
    head = "".join(f"<th>{esc(h)}</th>" for h in header) if any(header) else ""
    body = ""
    for i, r in enumerate(rows):
        ks = [row_kinds[i]] * len(r) if row_kinds else (kinds or [str(h).replace(" ", "_") for h in header])
        body += "<tr>" + "".join(cell(v, ks[j] if j < len(ks) else "") for j, v in enumerate(r)) + "</tr>"
    return f"<div class=\"wide\"><table>{f'<thead><tr>{head}</tr></thead>' if head else ''}<tbody>{body}</tbody></table></div>"


def _kv_table(flat: dict) -> str:
    items = sorted(flat.items())
    return _table(["key", "value"], items, row_kinds=[k for k, _ in items])


def _details(summary: str, body: str) -> str:
    return f"<details><summary>{esc(summary)}</summary>{body}</details>"


def _read_bytes(path: Path) -> bytes:
    with user_path(path, "file"):
        return path.read_bytes()


def _flatten(obj, prefix: str = "") -> dict:
    if not isinstance(obj, dict):
        return {prefix: obj}
    return {key: v for k, sub in obj.items() for key, v in _flatten(sub, f"{prefix}.{k}" if prefix else str(k)).items()}


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
