"""The sections of a sweep's report, for one sweep or several on one page (one set of figures and one
table, their runs told apart by sweep name and steps): for a width study the book chapter's findings
(judged by the caller) first, then the headline (the best width, the bpb saved per doubling), figures,
results, the best run's neighbours and the details (definition, points, parameters, run lines)."""

from __future__ import annotations

from pathlib import Path

from lrngpt.corpora.registry import corpus_label
from lrngpt.data.sizing import REREAD_PASSES
from lrngpt.experiments.chapter import PREMISE
from lrngpt.experiments.figures import by_series, figure_pngs
from lrngpt.experiments.finding import FAILS, HOLDS, Finding
from lrngpt.experiments.summary import collect, per_million, per_million_text
from lrngpt.experiments.sweepdir import SweepDir
from lrngpt.experiments.time_ledger import account_text
from lrngpt.report.html import bullets, esc, figure, fmt, folded, kv_table, titled_table
from lrngpt.report.neighbours import neighbours_html
from lrngpt.report.runs import curves_png
from lrngpt.runconfig.schema import flat_keys
from lrngpt.store.rundir import RunDir, read_metrics


def scale_notes(docs: list[dict]) -> list[str]:
    """A note for each scale other than full (`docs`: sweep_docs'): its steps and batch were shrunk."""
    shrunk: dict[str, list[str]] = {}
    for doc in docs:
        if doc["scale"] and doc["scale"] != "full":
            shrunk.setdefault(str(doc["scale"]), []).append(doc["label"])
    return [f'<p class="note">Scale <b>{esc(scale)}</b>' + (f" ({esc(', '.join(which))})" if len(docs) > 1 else "")
            + ": steps and batch were shrunk; these are not the full-size numbers.</p>"
            for scale, which in shrunk.items()]


def sweep_docs(dirs: list[Path]) -> list[dict]:
    """Each sweep's summary as its run directories are now, labelled by sweep name (and directory, where
    two sweeps share one)."""
    docs = [{**collect(d, partial=True), "out": str(d), "dir": d} for d in dirs]  # (an early sweep.json too)
    names = [doc["sweep"] for doc in docs]
    for doc in docs:
        doc["label"] = doc["sweep"] if names.count(doc["sweep"]) == 1 else f"{doc['sweep']} ({doc['dir'].name})"
    return docs


FINDINGS_SECTION = "The chapter's findings"
SWEPT = ("model.n_embd", "train.seed", "train.steps")  # a sweep's own columns; any other value is a setting


def verdict_html(f: Finding) -> str:
    cls = "shows" if f.verdict in HOLDS else "not" if f.verdict in FAILS else "unknown"
    return f'<span class="verdict {cls}">{esc(f.verdict)}</span>'


def _capital(text: str) -> str:
    """A sentence's first letter, unless it begins with a name ("d = 8", "lrn's")."""
    return text if text.startswith(("d = ", "lrn")) else text[0].upper() + text[1:]


def finding_html(f: Finding) -> str:
    """One finding: verdict, reason, evidence, source, and what could change the verdict, with the
    commands that do it and how the judge checked them (the sweep's page and the chapter's)."""
    out = [f'<div class="finding"><h3>{esc(f.title)}: {verdict_html(f)}</h3>']
    if f.reason:
        out.append(f'<p class="lead">{esc(_capital(f.reason))}.</p>')
    if f.evidence:
        out.append(bullets(f.evidence))
    if f.claim.source:
        out.append(f'<p class="sub">{esc(_capital(f.claim.source))}.</p>')
    if f.next:
        out.append(f"<p><b>{'What would tell' if f.verdict == 'cannot tell' else 'Next'}:</b> {esc(f.next)}.</p>")
    for c in f.commands:  # each checked against the findings that show
        out.append(f'<pre class="cmd">$ {esc(c["cli"])}\n&gt;&gt;&gt; {esc(c["api"])}</pre>'
                   + (f'<p class="sub">Checked: {esc(c["checked"])}.</p>' if c.get("checked") else ""))
    return "".join(out) + "</div>"


def findings_html(findings: list[Finding]) -> str:
    """The findings section of a sweep's page: what is judged and how, then each finding."""
    return ('<p class="sub">The book chapter on choosing the embedding width makes three findings and cites a '
            "fourth (Kaplan et al. 2020: width against depth at a fixed budget); each is "
            "judged here on the numbers of the sweeps on this page (a seed-variance sweep given beside them sets "
            "the noise, a small-data sweep the third finding, a width-depth sweep the fourth), on the whole curve "
            "against that noise, once its runs have trained (else it cannot show at this scale). The rules: "
            "lrngpt/experiments/findings.py and lrngpt/experiments/shape_findings.py; "
            "the thresholds and why each value: lrngpt/experiments/thresholds.py, docs/embedding-width-study.md, "
            "docs/width-depth-study.md.</p>") + "".join(map(finding_html, findings))


def sweep_sections(docs: list[dict], findings: list[Finding], tokens: list[str] | None = None,
                   checkpoint: str | None = None) -> list[tuple[str, str]]:
    """The page's sections (`docs`: sweep_docs'); a findings section first when `findings` were judged
    (a width study)."""
    multi = len(docs) > 1
    figures = "".join(figure(png, f"{caption} ({name})") for name, caption, png in figure_pngs(docs)) \
        if any(doc["rows"] for doc in docs) else ""
    curves = curves_png({(f"{doc['label']}: " if multi else "") + str(p["name"]): read_metrics(SweepDir(doc["dir"]).run_path(
                                                                                                 str(p["name"])))
                          for doc in docs for p in sweep_points(doc["dir"])})
    if curves:
        figures += figure(curves, "every run's training loss and validation bpb (curves)")
    finished = sorted((r["val_bpb"], doc["label"], r["name"], doc["dir"]) for doc in docs for r in doc["rows"]
                      if r["val_bpb"] is not None)  # null: no bytes to score
    if finished:
        _, label, name, d = finished[0]
        nb = (f"<p>Of the run with the lowest val bpb, <b>{esc(name)}</b>" + (f" ({esc(label)})" if multi else "")
              + ".</p>" + neighbours_html(SweepDir(d).run_path(name), tokens, checkpoint))
    else:
        nb = "<p>No finished run yet.</p>"
    return [(FINDINGS_SECTION, findings_html(findings))] * bool(findings) + [
            ("Headline", sweep_headline(docs)),
            ("Figures", figures or "<p>No figures yet.</p>"),
            ("Results", results_html(docs)),
            ("Embedding neighbours", nb),
            ("Details", "".join(sweep_details(doc) for doc in docs))]


def sweep_points(d: Path) -> list[dict]:
    sweep_dir = SweepDir(d)
    sweep = sweep_dir.definition(partial=True)  # an early or partial sweep.json shows what it holds
    points = [p if isinstance(p, dict) else {"name": p} for p in sweep.get("points") or []] or [
        {"name": name} for name in sweep_dir.runs_on_disk()]
    return [p for p in points if p.get("name")]


def sweep_headline(docs: list[dict]) -> str:
    items = []
    for doc in docs:
        groups = {series: entries for series, _, entries in by_series([doc])}
        where = f"{doc['scale']} scale, {corpus_label(doc.get('corpus'))}"
        done = f"{len(doc['rows'])} of {doc['points']} runs finished"
        if not groups:
            items.append(f"<li><b>{esc(doc['label'])}</b> ({esc(where)}): no run has finished yet ({done}).</li>")
            continue
        for series, entries in groups.items():
            best = min(entries, key=lambda e: (e["val_bpb"] is None, e["val_bpb"] or 0.0))  # null: no bytes to score
            saved = [f"{p['n_embd']}&rarr;{e['n_embd']} {fmt(e['saved_per_doubling'], 'bpb')}"
                     for p, e in zip(entries, entries[1:], strict=False) if e["saved_per_doubling"] is not None]
            passes = [e["passes"] for e in entries if e.get("passes") is not None]
            span = ("-" if not passes else fmt(passes[0], "passes") if max(passes) - min(passes) < 0.005
                    else f"{fmt(min(passes), 'passes')} to {fmt(max(passes), 'passes')}")
            items.append(f"<li><b>{esc(doc['label'])}</b>, {esc(series)} ({esc(where)}): lowest val bpb "
                         f"<b>{fmt(best['val_bpb'], 'bpb')} at d = {best['n_embd']}</b>"
                         + (f"; val bpb saved per doubling of d: {', '.join(saved)}" if saved else "")
                         + (f"; {esc(per_million_text(eff))}" if (eff := per_million(entries)) else "")
                         + f"; {span} passes over the training text; {done}.</li>")
    passes = [r["passes"] for doc in docs for r in doc["rows"] if r.get("passes") is not None]
    repeat = (f'<p class="note">Runs here read their training text up to {fmt(max(passes), "passes")} times; '
              f"{esc(PREMISE)}, so wide models can memorise their text: compare the gap column.</p>"
              if passes and max(passes) > REREAD_PASSES else "")
    return (repeat + '<ul class="lead">' + "".join(items) + "</ul><p class=\"sub\">Saved per doubling: the drop in val bpb "
            "from one width to the next, shared out per doubling when the step is more than one (16 &rarr; 64 is "
            "two doublings).</p>")


def results_html(docs: list[dict]) -> str:
    multi = len(docs) > 1
    if not any(doc["rows"] for doc in docs):
        return "<p>No summary yet: no run has finished.</p>"

    def table(title: str, cols: list[tuple[str, str]], pairs) -> str:
        """(doc, entry) pairs as rows; `cols`: (header, the entry's field, also its kind), the sweep first."""
        cols = [("sweep", "label")] * multi + cols
        return titled_table(title, cols, [[{**e, "label": doc["label"]}.get(k) for _, k in cols] for doc, e in pairs])

    runs = [(doc, {**r, "settings": ", ".join(f"{k}={v}" for k, v in r.get("values", {}).items() if k not in SWEPT)
                   or "-", "used_axes": f"{r['used_axes']}/{r['n_embd']}",
                   "best": "-" if r.get("best_val_bpb") is None else
                   f"{fmt(r['best_val_bpb'], 'bpb')} ({fmt(r['best_val_step'], 'step')})"})
            for doc in docs for r in doc["rows"]]
    text = table("Runs", [("d", "n_embd"), ("steps", "steps"), ("seed", "seed")]
                 + [("settings", "settings")] * any(r["settings"] != "-" for _, r in runs)
                 + [("params", "params"), ("val bpb", "val_bpb"), ("train bpb", "train_bpb"), ("gap", "gap"),
                    ("passes", "passes"), ("best val bpb (step)", "best"), ("used axes", "used_axes"),
                    ("seconds", "seconds")], runs)
    text += table("By width (val bpb saved per doubling)", [
        ("series", "series"), ("d", "n_embd"), ("val bpb", "val_bpb"), ("saved per doubling", "saved_per_doubling"),
        ("train bpb", "train_bpb"), ("gap", "gap"), ("passes", "passes"), ("seeds", "seeds")],
        [(doc, e) for doc in docs for e in doc["by_width"]])
    groups = [(doc, g) for doc in docs for g in doc["seeds"] if len(g["seeds"]) > 1]
    if groups:
        text += table("Over seeds", [("series", "series"), ("d", "n_embd"), ("seeds", "seeds"), ("val bpb", "val_bpb"),
                                     ("mean", "mean"), ("max-min", "spread"), ("std", "std")], groups)
    pending = [p for doc in docs for p in doc["pending"]]
    if pending:
        text += f"<p>Not finished yet: {esc(', '.join(pending))}.</p>"
    return text


def sweep_details(doc: dict) -> str:
    d = doc["dir"]
    sweep_dir = SweepDir(d)
    sweep = sweep_dir.definition(partial=True)
    about = {k: v for k, v in sweep.items() if k not in ("points", "base")}
    points = sweep_points(d)
    status = []
    for p in points:
        run = sweep_dir.run_path(str(p["name"]))
        s = RunDir(run).summary()
        status.append([str(p["name"]), p.get("values"), _status(run, s), (s or {}).get("val_bpb")])
    parts = [[r["name"], *(r["breakdown"].get(k) for k in ("embedding", "hidden", "output")), r["params"]]
             for r in doc["rows"] if isinstance(r.get("breakdown"), dict)]
    timing = ""
    if doc.get("timing"):  # a budget: its estimate against what the runs took (DIR/timing.jsonl)
        timing = f"<p><b>Time:</b> {esc(account_text(doc['timing']))}.</p>"
    body = timing + kv_table(flat_keys(about)) + titled_table(
        "Points", [("run", "name"), ("settings", "values"), ("status", "status"), ("val bpb", "val_bpb")], status)
    if parts:
        body += titled_table("Parameters by part", [("run", "name"), *((c, "params") for c in (
            "embedding", "hidden", "output", "total"))], parts)
    if isinstance(sweep.get("base"), dict):
        body += "<h3>Base configuration</h3>" + kv_table(flat_keys(sweep["base"]))
    lines = sweep_dir.lines_text()
    body += "<h3>Run lines</h3>" + (f"<pre>{esc(lines)}</pre>" if lines.strip() else "<p>No lines.txt yet.</p>")
    return folded(f"Sweep {doc['label']}: definition, points, parameters, base configuration, run lines", body)


def _status(r: Path, s: dict | None) -> str:
    """A point's state from its summary (`s`), else from how far its metrics got."""
    if s is not None:
        return "finished" if s.get("finished", True) else f"stopped at step {s.get('step')}"
    steps = [m.get("step", 0) for m in read_metrics(r)]
    return f"running or killed (step {max(steps):,})" if steps else "not started"

