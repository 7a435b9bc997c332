"""PNG figures of one sweep or several (matplotlib Agg: no display, no global pyplot state).

The `plot_*` functions take summary documents (lrngpt.experiments.summary.collect) and return the
Figure and the numbers they drew, so tests check what is plotted. Every title names the scale and
the corpus.
"""

from __future__ import annotations

import io
import math
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from lrngpt.corpora.registry import corpus_label
from lrngpt.experiments.chapter import LABEL as CHAPTER_LABEL
from lrngpt.experiments.chapter import NOTE as CHAPTER_NOTE
from lrngpt.experiments.chapter import VAL_BPB as CHAPTER_VAL_BPB
from lrngpt.experiments.findings import is_width_study
from lrngpt.experiments.shape_findings import MAX_CHANGE, is_shape_study, shapes

PART_NAMES = {"embedding": "embedding (V x d)", "hidden": "hidden layer",
              "output": "output layer (the same for every d)"}
PART_COLOURS = {"embedding": "#2563eb", "hidden": "#f59e0b", "output": "#9ca3af"}
REFERENCE_GREY = "#888888"
CHAPTER_COLOUR = "#111111"  # the chapter's reference curve: black, dotted, x markers


def png_bytes(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _figure(ncols: int = 1, width: float = 5.5) -> tuple[Figure, list]:
    fig = Figure(figsize=(width * ncols, 4.2), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def _dress(ax, xlabel: str | None, ylabel: str, title: str | None = None, legend: int = 8, **legend_kw) -> None:
    """Every panel's labels, grid, legend and (small) title."""
    if xlabel:
        ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title, fontsize=10)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=legend, **legend_kw)


def _width_axis(ax, widths: list[int]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(widths)
    ax.set_xticklabels([str(d) for d in widths])
    ax.set_xlabel("embedding width d (log2 axis)")


def _label(doc: dict) -> str:
    return str(doc.get("label") or doc["sweep"])


def by_series(docs: list[dict]) -> list[tuple[str, dict, list[dict]]]:
    """(curve label, its sweep's doc, its by_width entries) per sweep and series, in order (summary.by_width
    lists a series' entries together)."""
    return [(f"{_label(doc)}: {series}" if len(docs) > 1 else series, doc, list(entries))
            for doc in docs for series, entries in groupby(doc["by_width"], key=itemgetter("series"))]


def _title(docs: list[dict], what: str, sep: str = " ") -> str:
    names = " + ".join(dict.fromkeys(_label(d) for d in docs))
    scales = ", ".join(f"{s} scale" for s in dict.fromkeys(d["scale"] for d in docs))
    corpora = ", ".join(dict.fromkeys(corpus_label(d.get("corpus")) for d in docs))
    return f"{names}: {what}{sep}({scales}, {corpora})"


def _widths(docs: list[dict]) -> list[int]:
    return sorted({e["n_embd"] for d in docs for e in d["by_width"]})


def _seed_bars(ax, xs: list, vs: list[float], seeds: list[list[float]], label: str):
    """The curve (xs, vs) with bars from each point's lowest to its highest seed."""
    return ax.errorbar(xs, vs, yerr=[[v - min(s) for v, s in zip(vs, seeds, strict=True)],
                                     [max(s) - v for v, s in zip(vs, seeds, strict=True)]],
                       marker="o", capsize=3, label=label)


def plot_val_by_width(docs: list[dict]) -> tuple[Figure, dict] | None:
    """Val bpb by width per series (bars: seed min-max), parameters stacked by part; None for shape studies."""
    if _shapes_only(docs):
        return None
    fig, (ax, axp) = _figure(2)
    widths = _widths(docs)
    curves = []
    for label, doc, entries in by_series(docs):
        seeds = {(g["series"], g["n_embd"]): g["val_bpb"] for g in doc["seeds"]}
        ds, vs = [e["n_embd"] for e in entries], [e["val_bpb"] for e in entries]
        _seed_bars(ax, ds, vs, [seeds.get((e["series"], e["n_embd"]), [e["val_bpb"]]) for e in entries], label)
        curves.append({"label": label, "n_embd": ds, "val_bpb": vs})
    chapter: dict[str, Any] | None = None
    if any(is_width_study(d) for d in docs):  # the shape to compare with: bpb of another text do not compare
        chapter = {"label": CHAPTER_LABEL, "n_embd": list(CHAPTER_VAL_BPB), "val_bpb": list(CHAPTER_VAL_BPB.values())}
        ax.plot(chapter["n_embd"], chapter["val_bpb"], ls=":", marker="x", color=CHAPTER_COLOUR, label=CHAPTER_LABEL)
    _width_axis(ax, sorted(set(widths) | set(chapter["n_embd"])) if chapter else widths)
    _dress(ax, None, "validation bits per byte", "val bpb by width (bars: seed min-max)")
    # parameters do not depend on the steps: the first sweep that has a width gives its parts (a summary
    # without a breakdown: embedding and the rest)
    per_width: dict[int, dict[str, int]] = {}
    for e in (e for doc in docs for e in doc["by_width"]):
        b = e.get("breakdown")
        per_width.setdefault(e["n_embd"], {k: int(v) for k, v in b.items()} if isinstance(b, dict) and b else
                             {"embedding": e["embedding"], "other": e["params"] - e["embedding"]})
    names = list(dict.fromkeys(k for parts in per_width.values() for k in parts))
    stacks = {k: [per_width[d].get(k, 0) for d in widths] for k in names}
    bottom = np.zeros(len(widths))
    for k in names:  # one bar a width, labelled by it (a categorical axis), the parts stacked
        axp.bar([str(d) for d in widths], stacks[k], bottom=bottom, width=0.7, label=PART_NAMES.get(k, k),
                color=PART_COLOURS.get(k))
        bottom = bottom + stacks[k]
    axp.set_xlabel("embedding width d")
    axp.set_ylabel("parameters (millions)")
    axp.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1e6:g}"))
    axp.grid(alpha=0.3, axis="y")
    axp.legend(fontsize=8, loc="upper left")
    axp.set_title("parameters by width, stacked by part", fontsize=10)
    fig.suptitle(_title(docs, "val bpb and parameters by embedding width"), fontsize=11)
    return fig, {"curves": curves, "params": {"n_embd": widths, **stacks}, "chapter": chapter}


def plot_train_vs_val(docs: list[dict]) -> tuple[Figure, dict] | None:
    """Figure 2: the small-data series' train and val bpb by width, the full-data val bpb in grey."""
    series = [s for s in by_series(docs) if any(e["train_bpb"] is not None for e in s[2])]
    if not series or _shapes_only(docs):
        return None
    small = [s for s in series if s[2][0].get("train_tokens")]
    fig, (ax,) = _figure(1, width=7.5)
    curves = []
    for label, _, entries in small or series:
        ds = [e["n_embd"] for e in entries]
        vals, trains = [e["val_bpb"] for e in entries], [e["train_bpb"] for e in entries]
        line = ax.plot(ds, vals, marker="o", label=f"val ({label})")[0]
        ax.plot(ds, [math.nan if v is None else v for v in trains], marker="s", ls="--", color=line.get_color(), label=f"train ({label})")
        curves.append({"label": label, "n_embd": ds, "val_bpb": vals, "train_bpb": trains})
    # the full-data series in grey: the same steps as the small-data series when there is one
    full = [(label, entries) for label, _, entries in by_series(docs) if not entries[0].get("train_tokens")]
    reference, steps = None, {s[2][0]["steps"] for s in small}
    if small and full:
        label, entries = ([f for f in full if f[1][0]["steps"] in steps] or full)[0]
        ds, vs = [e["n_embd"] for e in entries], [e["val_bpb"] for e in entries]
        ax.plot(ds, vs, color=REFERENCE_GREY, lw=2, alpha=0.8, label=f"val with the full text ({label})")
        reference = {"label": label, "n_embd": ds, "val_bpb": vs}
    _width_axis(ax, _widths(docs))
    what = "small-data train vs val bpb by width" if small else "train vs val bpb by width"
    _dress(ax, None, "bits per byte", _title(docs, what, sep="\n"))
    return fig, {"curves": curves, "reference": reference}


def _shapes_only(docs: list[dict]) -> bool:
    return bool(docs) and all(is_shape_study(d) for d in docs)


def plot_val_by_shape(docs: list[dict]) -> tuple[Figure, dict] | None:
    """Val bpb against d_model / n_layer for each shape study (bars: seed min-max; shaded: the 3% band)."""
    fig, (ax,) = _figure(1, width=7.0)
    curves = []
    for doc in (d for d in docs if is_shape_study(d)):
        entries = sorted(shapes(doc["rows"]), key=lambda e: e["ratio"])
        if not entries:
            continue
        xs, vs = [e["ratio"] for e in entries], [e["val_bpb"] for e in entries]
        line = _seed_bars(ax, xs, vs, [e["val_bpbs"] for e in entries], _label(doc))
        best = min(vs)
        ax.axhspan(best, best * (1 + MAX_CHANGE), color=line[0].get_color(), alpha=0.12)
        for e, v in zip(entries, vs, strict=True):
            ax.annotate(f"{e['n_layer']} x {e['n_embd']}", (e["ratio"], v), textcoords="offset points", xytext=(4, 4),
                        fontsize=7)
        curves.append({"label": _label(doc), "ratio": xs, "val_bpb": vs, "band": [best, best * (1 + MAX_CHANGE)]})
    if not curves:
        return None
    ax.set_xscale("log")
    _dress(ax, "d_model / n_layer (log axis); labels: n_layer x n_embd", "validation bits per byte",
           _title(docs, f"val bpb by shape at a fixed budget (shaded: +{MAX_CHANGE:.0%})", sep="\n"))
    return fig, {"curves": curves}


def plot_val_by_step(docs: list[dict]) -> tuple[Figure, dict] | None:
    """Periodic val bpb over the steps of every run of every sweep (its row's, from its metrics.jsonl)."""
    fig, (ax,) = _figure(1, width=7.5)
    runs = {}
    for doc in docs:
        for row in (r for r in doc["rows"] if r.get("periodic_val")):  # [[step, val bpb], ...] in step order
            steps, vals = (list(c) for c in zip(*row["periodic_val"], strict=True))
            name = f"{_label(doc)}: {row['name']}" if len(docs) > 1 else row["name"]
            ax.plot(steps, vals, marker=".", label=name)
            runs[name] = {"step": steps, "val_bpb": vals}
    if not runs:
        return None
    _dress(ax, "step", "val bpb (periodic evals)", _title(docs, "val bpb over steps", sep="\n"), 7, ncol=2)
    return fig, {"runs": runs}


# (the names are sweepdir.FIGURE_NAMES: the sweep directory's owner checks them before a sweep starts)
PLOTS = [("val_bpb_by_width", plot_val_by_width, "val bpb by embedding width, and the parameters by part"),
         ("train_vs_val", plot_train_vs_val, "train and val bpb by width"),
         ("val_bpb_by_shape", plot_val_by_shape, "val bpb by shape, d_model / n_layer, at a fixed budget"),
         ("val_bpb_by_step", plot_val_by_step, "val bpb over the steps of every run")]


def figure_pngs(docs: list[dict]) -> list[tuple[str, str, bytes]]:
    """(name, caption, PNG) of every figure the sweeps have data for, drawn together."""
    drawn = [(name, caption, plot(docs)) for name, plot, caption in PLOTS]
    return [(name, caption + f"; dotted: {CHAPTER_NOTE}" * bool(d[1].get("chapter")), png_bytes(d[0]))
            for name, caption, d in drawn if d is not None]


def figure_files(out: Path, doc: dict) -> dict[str, bytes]:
    """{NAME.png: PNG} of the figures one sweep (in `out`) has data for."""
    return {f"{name}.png": png for name, _, png in figure_pngs([{**doc, "out": str(out)}])}


def plot_series(results: list[dict]) -> Figure:
    """The width-depth series: val bpb by shape per level, and the spread against tokens per parameter;
    `results`: the levels' (shape_findings.level_result), as the series finding keeps them in its numbers."""
    levels = sorted(results, key=lambda lv: lv["tokens_per_param"] or 0)
    fig, (left, right) = _figure(2)
    for lv in levels:
        entries = sorted(lv["shapes"], key=lambda e: e["ratio"])
        left.plot([e["ratio"] for e in entries], [e["val_bpb"] for e in entries], marker="o",
                  label=f"{lv['name']} ({lv['tokens_per_param'] or 0:.3g} tokens / param)")
    left.set_xscale("log")
    _dress(left, "d_model / n_layer (log axis)", "validation bits per byte (mean over seeds)")
    done = [lv for lv in levels if lv["spread"] is not None and lv["tokens_per_param"]]
    right.errorbar([lv["tokens_per_param"] for lv in done], [100 * lv["spread"] for lv in done],
                   yerr=[100 * (lv["noise"] or 0) for lv in done], marker="o", capsize=3)
    right.axhline(100 * MAX_CHANGE, color=REFERENCE_GREY, linestyle="--", label=f"Kaplan et al.: {MAX_CHANGE:.0%}")
    right.set_xscale("log", base=2)
    _dress(right, "tokens per non-embedding parameter (log axis)", "spread across shapes, % (bars: seed noise)")
    fig.suptitle("width against depth at a fixed non-embedding parameter count: the scale series", fontsize=10)
    return fig
