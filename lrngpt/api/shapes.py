"""Width against depth: nanochat's width-from-depth rule and the width-depth study's finding, as plain data."""

from __future__ import annotations

from pathlib import Path

from lrngpt.api.checks import HasPath, checked, positive
from lrngpt.experiments.shape_findings import judge_shapes
from lrngpt.experiments.summary import collect
from lrngpt.models import nanochat_shape


@checked
def width_from_depth(n_layer: int, aspect_ratio: int = 64, head_dim: int = 128) -> dict:
    """nanochat's rule, as `--set model.aspect_ratio=A` applies it: the width n_layer x aspect_ratio rounded
    up to a multiple of head_dim, and width / head_dim heads.

    Example: ``lrngpt.width_from_depth(20)["n_embd"]`` (1280) and ``lrngpt.width_from_depth(4)["n_head"]`` (2)"""
    for name, value in (("n_layer", n_layer), ("aspect_ratio", aspect_ratio), ("head_dim", head_dim)):
        positive(value, name)
    n_embd, n_head = nanochat_shape(n_layer, aspect_ratio, head_dim)
    return {"n_layer": n_layer, "aspect_ratio": aspect_ratio, "head_dim": head_dim, "n_embd": n_embd, "n_head": n_head,
            "rule": f"{n_layer} x {aspect_ratio} = {n_layer * aspect_ratio:,}, rounded up to a multiple of {head_dim}: "
                    f"{n_embd:,} ({n_head} heads of {head_dim})"}


@checked
def width_depth_finding(sweep: HasPath | str | Path) -> dict:
    """Kaplan et al.'s width-against-depth finding judged on a sweep (a Sweep or its directory), as `lrn
    sweep width-depth` judges it: verdict, reason, evidence and numbers.

    Example: ``f = lrngpt.width_depth_finding("runs/width-depth"); f["verdict"], f["numbers"]["change"]``"""
    path = Path(sweep.path if isinstance(sweep, HasPath) else sweep)
    return judge_shapes(collect(path)).as_dict()
