"""The planted-tokens figure: each token's input reads (log scale) against its own movement relative
to its initial length, tied and untied side by side, the planted groups marked, the rule's lines drawn."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from lrngpt.experiments.planted import _read

COLOURS = ("tab:red", "tab:orange", "tab:green", "tab:blue", "tab:purple")


def plot_planted(out: Path) -> Figure:
    """Input reads (symlog: 0 shows) against own movement / initial length, for out/planted.json."""
    r = _read(out)
    fig = Figure(figsize=(10, 4), constrained_layout=True)
    axes = fig.subplots(1, 2, sharey=True)
    for ax, name in zip(axes, ("tied", "untied"), strict=True):
        run = r["runs"][name]
        t = run["tokens"]
        reads = np.asarray(t["input_reads"], dtype=float)
        rel = np.asarray(t["own"], dtype=float) / np.maximum(np.asarray(t["init_norm"], dtype=float), 1e-12)
        rel = np.maximum(rel, 1e-9)  # a row that did not move at all sits at the bottom of the log axis
        ax.scatter(reads, rel, s=3, c="0.7", label="every token")
        for colour, (count, ids) in zip(COLOURS, r["groups"].items(), strict=False):
            ax.scatter(reads[ids], rel[ids], s=30, c=colour, edgecolors="k", label=f"planted: {count} reads")
        ax.axvline(run["n_embd"], color="k", ls="--", lw=0.8, label=f"d = {run['n_embd']}")
        ax.axhline(1.0, color="k", ls=":", lw=0.8, label="own movement = initial length")
        ax.set_xscale("symlog", linthresh=1)
        ax.set_yscale("log")
        ax.set_xlabel("input reads (replayed)")
        ax.set_title(f"{name} (step {run['step']})")
    axes[0].set_ylabel("own movement / initial row length")
    axes[1].legend(fontsize=7, loc="lower right")
    return fig
