"""The planted-tokens figure: each token's input reads (log scale, 0 included) against its own movement
from ckpt_init.pt, tied and untied side by side, the planted groups and the reference tokens marked,
d and the indicator's threshold drawn."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from lrngpt.analysis.planted import OWN_FACTOR
from lrngpt.analysis.rare_tokens import rounding
from lrngpt.experiments.planted import _read

COLOURS = ("tab:red", "tab:orange", "tab:green", "tab:blue", "tab:purple")
FLOOR = 1e-9  # a row that did not move at all sits here, at the bottom of the log axis


def plot_planted(out: Path) -> Figure:
    """Input reads (symlog: 0 shows) against own movement, for out/planted.json."""
    r = _read(out)
    fig = Figure(figsize=(10, 4), constrained_layout=True)
    axes = fig.subplots(1, 2, sharey=True)
    for ax, name in zip(axes, ("tied", "untied"), strict=True):
        run = r["runs"][name]
        t, ref = run["tokens"], run["reference"]
        reads = np.asarray(t["input_reads"], dtype=float)
        own = np.maximum(np.asarray(t["own"], dtype=float), FLOOR)
        ax.scatter(reads, own, s=3, c="0.7", label="every token")
        ax.scatter(reads[ref], own[ref], s=25, c="k", marker="x", label="reference (no UTF-8 text holds)")
        for colour, (count, ids) in zip(COLOURS, r["groups"].items(), strict=False):
            ax.scatter(reads[ids], own[ids], s=30, c=colour, edgecolors="k", label=f"planted: {count} reads")
        # the threshold at the median row's initial length (the rounding part is per row)
        cut = OWN_FACTOR * own[ref].max() + rounding(run["step"]) * float(np.median(t["init_norm"]))
        ax.axhline(cut, color="k", ls=":", lw=0.8, label=f"threshold: {OWN_FACTOR:g} x the references' largest")
        ax.axvline(run["n_embd"], color="k", ls="--", lw=0.8, label=f"d = {run['n_embd']}")
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlim(-0.3, max(2.0, reads.max() * 2))
        ax.set_yscale("log")
        ax.set_xlabel("input reads (replayed from the run's seed)")
        ax.set_title(f"{name} (step {run['step']})")
    axes[0].set_ylabel("own movement from ckpt_init.pt")
    axes[1].legend(fontsize=7, loc="lower right")
    return fig
