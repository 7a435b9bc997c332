"""Superposition: the toy model of Elhage et al. (2022), x' = ReLU(W^T W x + b) for n sparse features
through d < n dimensions, loss weighted by decay^i. The paper's setting (n = 20, d = 5, 0.7^i, batch
1024, Adam) at lr 1e-2 for 1,000 steps instead of 1e-3 for 10,000 (measured: the same picture); every
sparsity is one instance of a batched model, so the sweep is one training loop.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from lrngpt.core.validate import check_size
from lrngpt.errors import UserError, option

SPARSITIES = (0.0, 0.7, 0.9, 0.97, 0.99, 0.997, 0.999)  # the paper's: 1 - S = 1, 0.3, 0.1, ..., 0.001
REPRESENTED = 0.5  # ||W_i|| above this: the feature is represented (trained norms sit near 0 or near 1)
MAX_FEATURES = 1000
MAX_WORK = 2 * 10**12  # multiply-adds of a training (6 per weight, example and step): minutes on a CPU
GRAM_UP_TO = 64  # features up to which the result carries W^T W (the figure's top row)


def _check(features: int, dims: int, sparsity, steps: int, batch: int) -> list[float]:
    """The sparsities as floats, once the setting is one the toy model can train in minutes; the public
    API (lrngpt.api.checks) has already checked the types, so only the ranges are left."""
    for name, v, lo in (("features", features, 2), ("dims", dims, 1), ("steps", steps, 1), ("batch", batch, 1)):
        check_size(option(name), v, lo)
    if features > MAX_FEATURES:
        raise UserError(f"{option('features', f'{features:,}')}: the toy model is for a few features; use at most {MAX_FEATURES:,}")
    if dims >= features:
        raise UserError(f"{option('dims', dims)} is not below {option('features', features)}: superposition is about storing n features "
                        f"in fewer dimensions d < n; use e.g. {option('features', '20')} {option('dims', '5')}")
    values = [float(s) for s in sparsity]
    if not values:
        raise UserError(f"{option('sparsity')} is empty: give values like 0,0.9,0.99")
    for s in values:
        if not 0 <= s < 1:  # (NaN is not either)
            raise UserError(f"{option('sparsity', s)}: the share of the time a feature is 0 must be in [0, 1) "
                            "(1 would be a feature that never fires)")
    work = 6 * steps * len(values) * batch * features * dims
    if work > MAX_WORK:
        raise UserError(f"{steps:,} steps of {len(values)} models x batch {batch:,} x {features:,} features x {dims:,} dims "
                        f"is {work:,} multiply-adds, more than {MAX_WORK:,} (hours on a CPU); use fewer {option('steps')}, "
                        f"{option('features')} or {option('dims')}")
    return values


def train_toy(features: int = 20, dims: int = 5, sparsity=SPARSITIES, steps: int = 1000, batch: int = 1024,
              decay: float = 0.7, lr: float = 1e-2, seed: int = 0) -> dict:
    """Train one toy model per sparsity (all at once) and measure which features each represents."""
    sparsities = _check(features, dims, sparsity, steps, batch)
    threads = torch.get_num_threads()
    # one thread: the tensors hold ~10^5 numbers, too few for a thread pool to pay for its wake-ups
    # (benchmarks/bench_superposition.py prints the ratio; on a busy 2-core machine 2 threads were 10x slower)
    torch.set_num_threads(1)
    try:
        n_inst = len(sparsities)
        gen = torch.Generator().manual_seed(seed)
        w = torch.empty(n_inst, dims, features)
        for i in range(n_inst):  # Xavier normal per instance, from the one generator
            w[i] = torch.randn(dims, features, generator=gen) * math.sqrt(2.0 / (dims + features))
        w.requires_grad_(True)
        b = torch.zeros(n_inst, features, requires_grad=True)
        importance = decay ** torch.arange(features, dtype=torch.float32)
        p_on = 1.0 - torch.tensor(sparsities).reshape(n_inst, 1, 1)
        opt = torch.optim.Adam([w, b], lr=lr)
        for _ in range(steps):
            shape = (n_inst, batch, features)
            u = torch.rand(shape, generator=gen)  # on below p, then u / p is uniform on [0, 1)
            x = torch.where(u < p_on, u / p_on, 0.0)
            h = torch.einsum("idn,ibn->ibd", w, x)
            out = torch.relu(torch.einsum("idn,ibd->ibn", w, h) + b[:, None, :])
            per_instance = (importance * (x - out) ** 2).sum(-1).mean(-1)
            opt.zero_grad(set_to_none=True)
            per_instance.sum().backward()  # instances are independent
            opt.step()
        return measure(w.detach(), b.detach(), sparsities, per_instance.tolist(), {
            "features": features, "dims": dims, "steps": steps, "batch": batch, "importance_decay": decay,
            "lr": lr, "seed": seed})
    finally:
        torch.set_num_threads(threads)


def measure(w: torch.Tensor, b: torch.Tensor, sparsities: list[float], losses: list[float], setting: dict) -> dict:
    """Per sparsity: ||W_i||, each feature's interference, how many are represented, d / ||W||_F^2."""
    dims = w.shape[1]
    rows = []
    for k, s in enumerate(sparsities):
        wk = w[k].double()
        norms = wk.norm(dim=0)
        unit = wk / norms.clamp_min(1e-12)
        overlap = unit.T @ wk  # (n, n): W_i/||W_i|| . W_j
        interference = (overlap.square().sum(dim=1) - overlap.diagonal().square())  # j != i
        rep = norms > REPRESENTED
        frob2 = float(wk.square().sum())
        rows.append({
            "sparsity": s, "feature_probability": 1 - s, "loss": losses[k],
            "represented": int(rep.sum()), "represented_share": float(rep.double().mean()),
            "more_than_dims": int(rep.sum()) > dims,
            "mean_interference": float(interference[rep].mean()) if rep.any() else 0.0,
            "max_interference": float(interference[rep].max()) if rep.any() else 0.0,
            "dimensions_per_feature": dims / frob2 if frob2 > 0 else None,
            "norms": norms.tolist(), "interference": interference.tolist(), "bias": b[k].tolist(),
            "gram": (wk.T @ wk).tolist() if wk.shape[1] <= GRAM_UP_TO else None})
    return {**setting, "represented_threshold": REPRESENTED, "sparsities": rows}


def figure(result: dict):
    """The paper's picture: per sparsity, W^T W (n x n) above and ||W_i|| per feature below, each bar
    coloured by the feature's interference (dark: alone in its direction, light: shares it)."""
    rows = result["sparsities"]
    fig = Figure(figsize=(2.2 * len(rows) + 0.6, 5.2), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, len(rows), squeeze=False, height_ratios=[1.0, 1.1])
    cmap = colormaps["viridis"]
    for c, row in enumerate(rows):
        top, bottom = axes[0][c], axes[1][c]
        if row["gram"] is not None:
            top.imshow(np.asarray(row["gram"]), cmap="RdBu_r", vmin=-1, vmax=1)
        top.set_xticks([])
        top.set_yticks([])
        top.set_title(f"1-S = {row['feature_probability']:.3g}\n{row['represented']}/{result['features']} represented",
                      fontsize=9)
        n = len(row["norms"])
        colour = [cmap(min(v, 1.0)) for v in row["interference"]]  # the paper's colours: dark alone, yellow shared
        bottom.barh(range(n), row["norms"], color=colour)
        bottom.invert_yaxis()
        bottom.set_xlim(0, max(1.2, max(row["norms"]) * 1.05))
        bottom.axvline(REPRESENTED, color="grey", lw=0.6, ls=":")
        bottom.set_yticks([] if c else [0, n - 1])
        bottom.tick_params(labelsize=7)
        bottom.set_xlabel("||W_i||", fontsize=8)
    axes[0][0].set_ylabel("W^T W", fontsize=9)
    axes[1][0].set_ylabel("feature i (importance falls)", fontsize=8)
    fig.suptitle(f"{result['features']} features in {result['dims']} dimensions, x' = ReLU(W^T W x + b)\n"
                 "bars: ||W_i||, dark when feature i has its direction alone, yellow when it shares it", fontsize=10)
    return fig
