"""PNG figures of a sweep (matplotlib, Agg: no display needed, no global pyplot state).

    figures/val_bpb_by_width.png   val bpb against width (log2 axis), parameters beside it
    figures/train_vs_val.png       train and val bpb against width (the small-data study)
    figures/val_bpb_by_step.png    periodic val bpb over the steps of every run (metrics.jsonl)
"""

from __future__ import annotations

import io
import math
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from lrngpt.fsio import atomic_write
from lrngpt.run import read_metrics


def _save(fig: Figure, path: Path) -> Path:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    atomic_write(path, buf.getvalue())  # shards sharing DIR may write the same figure at once
    return path


def _nan(values: list) -> list[float]:
    return [math.nan if v is None else v for v in values]


def _figure(ncols: int = 1) -> tuple[Figure, list]:
    fig = Figure(figsize=(5.5 * ncols, 4.2), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def _width_axis(ax, widths: list[int]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(widths)
    ax.set_xticklabels([str(d) for d in widths])
    ax.set_xlabel("embedding width d (log2 axis)")
    ax.grid(alpha=0.3)


def _series(doc: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for e in doc["by_width"]:
        out.setdefault(e["series"], []).append(e)
    return out


def val_by_width(doc: dict, path: Path) -> Path:
    fig, (ax, axp) = _figure(2)
    spread = {(g["series"], g["n_embd"]): (min(g["val_bpb"]), max(g["val_bpb"])) for g in doc["seeds"]}
    widths = sorted({e["n_embd"] for e in doc["by_width"]})
    for label, entries in _series(doc).items():
        ds = [e["n_embd"] for e in entries]
        vs = [e["val_bpb"] for e in entries]
        lo = [v - spread[(label, d)][0] for d, v in zip(ds, vs, strict=True)]
        hi = [spread[(label, d)][1] - v for d, v in zip(ds, vs, strict=True)]
        ax.errorbar(ds, vs, yerr=[lo, hi], marker="o", capsize=3, label=label)
        axp.plot(ds, [e["params"] for e in entries], marker="o", label=f"total ({label})")
    first = next(iter(_series(doc).values()))
    axp.plot([e["n_embd"] for e in first], [e["embedding"] for e in first], marker="s", ls="--",
             label="embedding table")
    for a in (ax, axp):
        _width_axis(a, widths)
        a.legend(fontsize=8)
    ax.set_ylabel("validation bits per byte")
    ax.set_title("val bpb by width (bars: seed min-max)", fontsize=10)
    axp.set_ylabel("parameters")
    axp.set_title("parameters by width", fontsize=10)
    fig.suptitle(f"{doc['sweep']}: val bpb and parameters by embedding width ({doc['scale']} scale)")
    return _save(fig, path)


def train_vs_val(doc: dict, path: Path) -> Path:
    fig, (ax,) = _figure(1)
    widths = sorted({e["n_embd"] for e in doc["by_width"]})
    for label, entries in _series(doc).items():
        ds = [e["n_embd"] for e in entries]
        ax.plot(ds, [e["val_bpb"] for e in entries], marker="o", label=f"val ({label})")
        ax.plot(ds, _nan([e["train_bpb"] for e in entries]), marker="s", ls="--", label=f"train ({label})")
    _width_axis(ax, widths)
    ax.set_ylabel("bits per byte")
    ax.legend(fontsize=8)
    ax.set_title(f"{doc['sweep']}: train vs val bpb by width ({doc['scale']} scale)", fontsize=10)
    return _save(fig, path)


def val_by_step(doc: dict, out: Path, path: Path) -> Path | None:
    fig, (ax,) = _figure(1)
    drawn = 0
    for row in doc["rows"]:
        by_step = {m["step"]: m["val_bpb"] for m in read_metrics(out / "runs" / row["name"])
                   if "val_bpb" in m and not m.get("final")}  # a resumed run may repeat a step: keep the last
        if by_step:
            steps = sorted(by_step)
            ax.plot(steps, [by_step[s] for s in steps], marker=".", label=row["name"])
            drawn += 1
    if not drawn:
        return None
    ax.set_xlabel("step")
    ax.set_ylabel("val bpb (periodic evals)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title(f"{doc['sweep']}: val bpb over steps ({doc['scale']} scale)", fontsize=10)
    return _save(fig, path)


def write_figures(out: Path, doc: dict) -> list[Path]:
    folder = Path(out) / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    paths = [val_by_width(doc, folder / "val_bpb_by_width.png")]
    if any(e["train_bpb"] is not None for e in doc["by_width"]):
        paths.append(train_vs_val(doc, folder / "train_vs_val.png"))
    step_fig = val_by_step(doc, Path(out), folder / "val_bpb_by_step.png")
    if step_fig is not None:
        paths.append(step_fig)
    return paths
