"""The PIP prediction (lrngpt.analysis.pip) as a figure: the PIP loss by k and, beside a width sweep,
its val bpb by d on a second axis, on one log-2 width axis (two yardsticks: pip.far_apart).
"""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, NullLocator

from lrngpt.errors import UserError


def figure(result: dict) -> Figure:
    """The PIP loss by k and, with a sweep (theory_pip(..., sweep=DIR)), its val bpb by d on a second
    axis, both on one log-2 width axis, the PIP-optimal k and the measured best d marked."""
    curve = (result.get("curve") or {}).get("pip_loss") if isinstance(result, dict) else None
    if not isinstance(curve, list) or len(curve) < 2 or not isinstance(result.get("optimal"), dict):
        raise UserError("theory_pip_figure(): result must be what lrngpt.theory_pip() returns (its curve and "
                        f"optimal width), got {type(result).__name__}"
                        + (f" with keys {sorted(map(str, result))[:6]}" if isinstance(result, dict) else ""))
    fig = Figure(figsize=(6.4, 4.6), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    k = result["optimal"]["k"]
    ks = list(range(1, len(curve)))
    handles = ax.plot(ks, curve[1:], color="C0", label="PIP loss by k (Yin & Shen 2018)")
    if k >= 1:
        handles.append(ax.axvline(k, color="C0", ls=":", label=f"PIP-optimal k = {k}"))
    ax.set_ylabel("PIP loss", color="C0")
    widths = ks
    sw = result.get("sweep")
    if isinstance(sw, dict) and isinstance(sw.get("val_bpb"), dict):
        bpb = sorted((int(w), float(v)) for w, v in sw["val_bpb"].items())
        widths = ks + [w for w, _ in bpb]
        ax2 = ax.twinx()
        handles += ax2.plot([w for w, _ in bpb], [v for _, v in bpb], "o-", color="C1",
                            label=f"the sweep's val bpb by d ({sw.get('corpus')})")
        handles.append(ax2.axvline(sw["best_width"], color="C1", ls="--", label=f"measured best d = {sw['best_width']}"))
        ax2.set_ylabel("val bpb", color="C1")
    ax.set_xscale("log", base=2)
    ticks = [2**i for i in range(max(max(widths), 1).bit_length()) if 2**i >= min(widths)]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(t) for t in ticks])
    ax.set_xlabel("width: k for the PIP loss, d for the sweep (log 2)")
    ax.set_title(f"PIP loss of {result.get('corpus', 'the text')}" + (" beside the sweep" if sw else ""), fontsize=10)
    # below the axes, outside them: inside, the curves (which may run anywhere) crossed it
    fig.legend(handles=handles, fontsize=8, loc="outside lower center", ncols=2)
    return fig
