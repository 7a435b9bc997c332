"""A sweep's results: one line per run, tables by width and by seed. `collect(DIR)` gathers the
finished runs into one summary document and writes nothing (lrngpt.experiments.runner writes it).
"""

from __future__ import annotations

import csv
import io
import math
import statistics
from pathlib import Path
from typing import Any

from lrngpt.analysis.embeddings import used_axes
from lrngpt.core.once import parsed
from lrngpt.corpora.registry import corpus_label
from lrngpt.errors import UserError
from lrngpt.experiments.chapter import PROBLEM10
from lrngpt.experiments.finding import cli_value
from lrngpt.experiments.grid import resolve_base
from lrngpt.experiments.presets import STUDIES
from lrngpt.experiments.shape_findings import is_shape_study, shape_table
from lrngpt.experiments.stats import mean_or_none
from lrngpt.experiments.sweepdir import SweepDir
from lrngpt.experiments.time_ledger import account, account_text
from lrngpt.runconfig.schema import flat_keys
from lrngpt.runconfig.values import DERIVED
from lrngpt.store.run_files import best_periodic_val, periodic_evals, run_passes
from lrngpt.store.rundir import RunDir

# the train bpb split by what training read (summary.json since it carried them; else RUN/by_reads.json)
BY_READS = ("train_bpb_read", "train_bpb_unread", "read_share", "read_twice_share")
CSV_COLUMNS = ["scale", "sweep", "corpus", "name", "n_embd", "seed", "steps", "train_tokens", "passes", "params",
               "embedding", "val_bpb", "train_bpb", "gap", "used_axes", "seconds", "best_val_bpb", "best_val_step",
               "saved_per_doubling", "train_bpb_read", "train_bpb_unread", "read_share", "val_split", "finished",
               "n_layer"]  # n_layer: a GPT's depth (a shape study)


def gather_row(run_dir: Path, point: dict) -> dict | None:
    """The row of one run directory, or None while it has no summary.json."""
    run = RunDir(run_dir)  # one reader for the row: config.json is parsed once
    s = run.summary()
    if s is None:
        return None
    cfg = run.config().to_dict()  # checked: a damaged config.json is named, field and all
    breakdown = {k: v for k, v in s["params"].items() if k != "total"}

    def measure(_) -> int:  # the last token table's used axes, once a command while ckpt_last.pt is unchanged
        model: Any = run.load("last", "cpu").model  # an MLP or a GPT: both have token_embedding (an nn.Embedding)
        return used_axes(model.token_embedding.weight, 0.9)
    metrics = run.metrics()
    best, best_step = best_periodic_val(metrics)
    split = {k: s.get(k) for k in BY_READS}
    if split["train_bpb_read"] is None:  # trained with train.train_eval_tokens=0: what lrn eval --by-reads measured since
        kept = run.by_reads()
        if kept and kept.get("step") == s["step"]:
            split = {k: kept.get(k) for k in BY_READS}
    return {
        "name": point["name"], "n_embd": cfg["model"]["n_embd"], "n_layer": cfg["model"].get("n_layer"),
        "seed": cfg["train"]["seed"],
        "steps": s["step"], "params": s["params"]["total"],
        "embedding": breakdown.get("embedding", breakdown.get("token_embedding")), "breakdown": breakdown,
        "val_bpb": s["val_bpb"], "train_bpb": s["train_bpb"],
        # the chapter's sign: val - train, positive when new text is harder than the training text
        "gap": None if s["train_bpb"] is None or s["val_bpb"] is None else s["val_bpb"] - s["train_bpb"],
        "used_axes": parsed(run.checkpoint_path("last"), "used axes at 0.9 of the energy", measure), "seconds": s["seconds"],
        "train_tokens": cfg["data"]["train_tokens"], "eval_tokens": cfg["train"]["eval_tokens"],
        "passes": run_passes(s), "tokens_read": s.get("tokens_seen"), "corpus": cfg["data"]["corpus"],
        "best_val_bpb": best, "best_val_step": best_step, "finished": bool(s["finished"]),
        "values": point.get("values", {}), **split, "val_split": s.get("val_split"),
        "periodic_val": [[step, v] for step, v in sorted(periodic_evals(metrics).items())],
    }


def format_line(row: dict, scale: str | None, best: bool = False) -> str:
    """The chapter's line, in English, with the passes, the scale and the corpus."""
    parts = ", ".join(f"{k.replace('_', ' ')} {v:>9,}" for k, v in row["breakdown"].items())
    line = (f"d={row['n_embd']:>4} | steps {row['steps']:>6,} | seed {row['seed']} | "
            f"params {row['params']:>10,} ({parts}) | val bpb {_f(row['val_bpb']) or 'n/a'}")
    if row["train_bpb"] is not None:
        line += f" | train bpb {row['train_bpb']:.4f} (gap {row['gap']:+.4f})"
    line += f" | passes {_f(row.get('passes'), '.2f') or '-'}"
    line += f" | used axes (90%) {row['used_axes']:>3}/{row['n_embd']}"
    if best and row["best_val_bpb"] is not None:
        first = f"{row['eval_tokens']:,} val tokens" if row['eval_tokens'] else "full val"
        line += f" | best val bpb during training {row['best_val_bpb']:.4f} (step {row['best_val_step']}, {first})"
    return line + f" | {row['seconds']:.0f}s | {scale} scale, {corpus_label(row.get('corpus'))}"


def series_label(row: dict) -> str:
    """What a curve over width holds fixed: steps, training prefix, other swept keys."""
    label = f"steps {row['steps']:,}"
    if row["train_tokens"]:
        label += f", train tokens {row['train_tokens']:,}"
    for key, value in row["values"].items():
        if key not in ("model.n_embd", "train.seed", "train.steps", "data.train_tokens"):
            label += f", {key}={value}"
    return label


def settings(rows: list[dict]) -> dict[tuple[str, int], list[dict]]:
    """The rows by setting (series label, width): the seeds of one setting together."""
    groups: dict[tuple[str, int], list[dict]] = {}
    for r in rows:
        groups.setdefault((series_label(r), r["n_embd"]), []).append(r)
    return groups


def by_width(rows: list[dict]) -> list[dict]:
    """Per series (in the order they come) and width: seed means and the val bpb saved per doubling of the width."""
    groups = settings(rows)
    order = {label: i for i, label in enumerate(dict.fromkeys(label for label, _ in groups))}
    table: list[dict] = []
    prev: dict[str, dict] = {}  # each series' last entry
    for (label, d), group in sorted(groups.items(), key=lambda kv: (order[kv[0][0]], kv[0][1])):
        first = group[0]
        entry = {"series": label, "n_embd": d, **{k: first[k] for k in ("steps", "train_tokens", "params", "embedding")},
                 "seeds": [r["seed"] for r in group],
                 **{k: mean_or_none([r.get(k) for r in group]) for k in ("val_bpb", "train_bpb", "gap", "used_axes", "passes")},
                 "breakdown": first.get("breakdown"), "corpus": first.get("corpus"),
                 "seconds": mean_or_none([r["seconds"] for r in group]), "saved_per_doubling": None}
        p = prev.get(label)
        if p is not None and p["val_bpb"] is not None and entry["val_bpb"] is not None:
            # a gap of several doublings (16 -> 64) is shared out per doubling
            entry["saved_per_doubling"] = (p["val_bpb"] - entry["val_bpb"]) / math.log2(d / p["n_embd"])
        table.append(entry)
        prev[label] = entry
    return table


def per_million(entries: list[dict]) -> dict | None:
    """Problem 10 on one by_width series: val bpb saved per million added parameters at the small end
    (64 -> 128) against the large end (256 -> 512), else its own first and last doubling."""
    by_d = {e["n_embd"]: e for e in entries}
    doublings: list[dict] = []
    for d, a in sorted(by_d.items()):  # each d -> 2d where both scored and the parameters grew
        b = by_d.get(2 * d)
        if b is not None and a["val_bpb"] is not None and b["val_bpb"] is not None and b["params"] > a["params"]:
            saved, added = a["val_bpb"] - b["val_bpb"], b["params"] - a["params"]
            doublings.append({"from": d, "to": 2 * d, "saved": saved, "added": added, "per_million": saved / (added / 1e6)})
    if len(doublings) < 2:
        return None
    at = {x["from"]: x for x in doublings}
    small, large = ((at[PROBLEM10["small"]], at[PROBLEM10["large"]])
                    if PROBLEM10["small"] in at and PROBLEM10["large"] in at else (doublings[0], doublings[-1]))
    ratio = small["per_million"] / large["per_million"] if large["per_million"] > 0 else None
    return {"small": small, "large": large, "ratio": ratio}


def per_million_text(eff: dict) -> str:
    """One sentence: this sweep's Problem 10 figures beside the chapter's."""
    s, la = eff["small"], eff["large"]
    times = f"{eff['ratio']:.1f}x" if eff["ratio"] is not None else "no ratio: the large end saved nothing"
    c_small, c_large = PROBLEM10["per_million"]
    return (f"val bpb saved per million added parameters: {s['from']} -> {s['to']} {s['per_million']:.4f}, "
            f"{la['from']} -> {la['to']} {la['per_million']:.4f} ({times}); the chapter's Problem 10: "
            f"{PROBLEM10['small']} -> {2 * PROBLEM10['small']} {c_small:.4f} against {PROBLEM10['large']} -> "
            f"{2 * PROBLEM10['large']} {c_large:.4f}, about {PROBLEM10['ratio']}x")


def seed_stats(rows: list[dict]) -> list[dict]:
    """Mean, max-min and standard deviation (n-1) of val bpb over the seeds of each setting."""
    out = []
    for (label, d), group in settings(rows).items():
        vals = [r["val_bpb"] for r in group if r["val_bpb"] is not None]  # null: no bytes to score
        if not vals:
            continue
        out.append({"series": label, "n_embd": d, "seeds": [r["seed"] for r in group], "val_bpb": vals,
                    "mean": sum(vals) / len(vals), "spread": max(vals) - min(vals),
                    "std": statistics.stdev(vals) if len(vals) > 1 else None})
    return out


def _f(v, fmt: str = ".4f") -> str:
    return "" if v is None else format(v, fmt)


def markdown(doc: dict) -> str:
    scale = doc["scale"]
    corpus = corpus_label(doc.get("corpus"))
    out = [f"# Sweep {doc['sweep']} ({scale} scale, {corpus})", ""]
    if doc.get("about"):
        out += [doc["about"] + ".", ""]
    out += [f"{len(doc['rows'])} of {doc['points']} runs finished at the {scale} scale"
            + (f"; pending: {', '.join(doc['pending'])}" if doc["pending"] else "") + ".", ""]
    if is_shape_study(doc):  # first: a shape study's series are its shapes, one width each
        out += [f"## By shape ({scale} scale, {corpus})", "", *shape_table(doc["rows"]), ""]
    for label in dict.fromkeys(e["series"] for e in doc["by_width"]):  # each series, in the order it comes
        entries = [e for e in doc["by_width"] if e["series"] == label]
        out += [f"## {label} ({scale} scale, {corpus})", "",
                "| d | params | embedding | val bpb | saved per doubling | train bpb | gap (val-train) "
                "| passes | used axes (90%) | seconds | seeds |",
                "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for e in entries:
            out.append(f"| {e['n_embd']} | {e['params']:,} | {e['embedding']:,} | {_f(e['val_bpb'])} | "
                       f"{_f(e['saved_per_doubling'])} | {_f(e['train_bpb'])} | {_f(e['gap'], '+.4f')} | "
                       f"{_f(e.get('passes'), '.2f') or '-'} | {e['used_axes']:.0f}/{e['n_embd']} | "
                       f"{e['seconds']:.0f} | {', '.join(map(str, e['seeds']))} |")
        eff = per_million(entries)
        if eff:
            out += ["", "Problem 10 on this series: " + per_million_text(eff) + "."]
        out.append("")
    multi = [g for g in doc["seeds"] if len(g["val_bpb"]) > 1]
    if multi:
        out += [f"## Seeds ({scale} scale, {corpus})", "", "| setting | d | seeds | val bpb | mean | max-min | std |",
                "|---|---:|---|---|---:|---:|---:|"]
        for g in multi:
            out.append(f"| {g['series']} | {g['n_embd']} | {', '.join(map(str, g['seeds']))} | "
                       f"{', '.join(f'{v:.4f}' for v in g['val_bpb'])} | {g['mean']:.4f} | "
                       f"{g['spread']:.4f} | {g['std']:.4f} |")
        out.append("")
    if doc.get("timing"):
        out += ["## Time against the budget", "", account_text(doc["timing"]) + " (DIR/timing.jsonl holds each run's "
                "seconds beside its estimate).", ""]
    out += [f"## Runs ({scale} scale, {corpus})", "", "```", *doc["lines"], "```", ""]
    return "\n".join(out)


def csv_text(doc: dict) -> str:
    saved = {(e["series"], e["n_embd"]): e["saved_per_doubling"] for e in doc["by_width"]}
    buf = io.StringIO()
    w = csv.DictWriter(buf, CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in doc["rows"]:
        w.writerow({**r, "scale": doc["scale"], "sweep": doc["sweep"], "corpus": r.get("corpus") or doc.get("corpus"),
                    "saved_per_doubling": saved.get((series_label(r), r["n_embd"]))})
    return buf.getvalue()


def collect(out: str | Path, partial: bool = False) -> dict:
    """The summary document of DIR from its run directories now; writes nothing (`partial`: as a report)."""
    sweep_dir = SweepDir(out)
    out = sweep_dir.path
    definition = sweep_dir.definition(partial)
    scale = definition.get("scale")
    data = (definition.get("base") or {}).get("data") or {}
    best = bool(data.get("train_tokens"))
    points = [p if isinstance(p, dict) else {"name": str(p)} for p in definition.get("points") or []]
    rows, pending = [], []
    for point in points:
        row = gather_row(sweep_dir.run_path(point["name"]), point)
        (rows.append(row) if row else pending.append(point["name"]))
    lines = [format_line(r, scale, best) for r in rows]
    corpora = list(dict.fromkeys(r["corpus"] for r in rows)) or [data.get("corpus")]
    return {"sweep": definition.get("name") or out.resolve().name, "preset": definition.get("preset"),
            "axes": definition.get("axes") or {}, "scale": scale,
            "corpus": ", ".join(map(str, corpora)), "about": definition.get("about", ""),
            "points": len(points), "rows": rows, "by_width": by_width(rows), "seeds": seed_stats(rows),
            "pending": pending, "lines": lines, "out": str(out), "table": str(sweep_dir.summary_path("md")),
            "tables": {k: str(sweep_dir.summary_path(k)) for k in ("md", "csv", "json")}, "figures": [],
            "meta": sweep_meta(definition, out),  # what it was run with: the findings' commands repeat it
            # a budgeted sweep's estimate against its record (lrngpt.experiments.time_ledger)
            "timing": account(b, sweep_dir.timing()) if isinstance(b := definition.get("budget"), dict) else None}


def sweep_meta(definition: dict, out: str | Path | None) -> dict:
    """What the sweep in `out` was run with: source, scale, budget minutes, its --set items, out."""
    source, scale = definition.get("source") or definition.get("preset"), definition.get("scale")
    budget = b if isinstance(b := definition.get("budget"), dict) else {}
    meta = {"source": source, "preset": definition.get("preset"), "scale": scale, "out": None if out is None else
            str(out), "minutes": budget.get("minutes"), "sets": None}
    base = definition.get("base")
    if not isinstance(source, str) or not isinstance(scale, str) or not isinstance(base, dict):
        return meta
    plan = [f"{k}={cli_value(v)}" for k, v in (budget.get("sets") or {}).items()]
    try:
        ref = resolve_base(source, scale, plan)[0]  # the base alone: no point is built
    except (UserError, OSError, ValueError, TypeError, KeyError):
        return meta  # a sweep file moved away, or a preset this lrn no longer has: no --set items
    mine, theirs = flat_keys(base), flat_keys(ref)
    meta["sets"] = {k: v for k, v in mine.items() if k != "name" and k not in DERIVED
                    and theirs.get(k, object()) != v and k not in (budget.get("sets") or {})}
    axes, study = definition.get("axes") or {}, STUDIES.get(source, {}).get("axes", {})
    planned = budget.get("axes") or {}
    meta["axes"] = {k: v for k, v in axes.items() if study.get(k) != v and k not in planned}
    return meta
