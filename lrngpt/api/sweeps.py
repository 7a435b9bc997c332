"""Sweeps from Python, on the path `lrn sweep` takes: `sweep` runs a study preset or a sweep file (with a
time budget, a dry run, a shard), `load_sweep` reads a sweep directory, and `Sweep` gives its table,
figures, runs, report and the book chapter's findings, all read from the directory alone.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args, overload

from lrngpt.api.checks import checked
from lrngpt.api.configs import Overrides, run_sets
from lrngpt.api.outputs import write_report
from lrngpt.api.results import Run, table
from lrngpt.core import log as logging
from lrngpt.errors import UserError, option
from lrngpt.experiments.bf16_offer import bf16_offer
from lrngpt.experiments.budget import budget_text, check_passes, resolve_budget
from lrngpt.experiments.dry_run import dry_run_plan
from lrngpt.experiments.figures import PLOTS, png_bytes
from lrngpt.experiments.findings import judge
from lrngpt.experiments.grid import resolve_shard, resolve_sweep
from lrngpt.experiments.runner import run_sweep, summarize
from lrngpt.experiments.summary import collect
from lrngpt.experiments.sweepdir import FIGURE_NAMES, SweepDir
from lrngpt.explorer import write_explorer
from lrngpt.report.html import esc, figure
from lrngpt.report.sweeps import findings_html, results_html, sweep_docs, sweep_headline
from lrngpt.runconfig.values import check_points_at_once

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Axes = Mapping[str, Iterable[Any]] | Iterable[str] | None  # {"model.n_embd": [8, 64]} or ["model.n_embd=8,64"]
Shard = str | tuple[int, int] | None  # "i/n" or (i, n); None: the Slurm array task's, else every point
Notes = Callable[[str], None] | None
MetricCallback = Callable[[dict], None] | None
FigureName = Literal["val_bpb_by_width", "train_vs_val", "val_bpb_by_shape", "val_bpb_by_step"]
assert get_args(FigureName) == FIGURE_NAMES  # the names a checker sees are the ones figures.PLOTS draws


def _axis_list(axes: Axes) -> list[str]:
    if axes is None:
        return []
    if isinstance(axes, Mapping):
        listed = {key: list(values) for key, values in axes.items()}
        for key, values in listed.items():
            if not values:
                raise UserError(f"axes[{key!r}] is an empty list: give it the values to sweep, e.g. "
                                f"{{'model.n_embd': [8, 64]}}, or leave the key out")
        return [f"{key}={','.join(_axis_value(key, v) for v in values)}" for key, values in listed.items()]
    items = [str(a) for a in axes]
    for i, a in enumerate(items):
        if not a.strip():
            raise UserError(f"axes[{i}] is an empty string: give KEY=V1,V2, e.g. 'model.n_embd=8,64'")
    return items


def _axis_value(key: str, value: Any) -> str:
    """One axis value in --axis form: JSON, or for keys linked with + (a shape) its parts joined by :."""
    if "+" in key and isinstance(value, list | tuple):
        return ":".join(json.dumps(v) for v in value)
    return json.dumps(value)


@overload
def sweep(name: str | Path, scale: str | None = None, *, out: str | Path, set: Overrides = None, axes: Axes = None,
          corpus: str | None = None, device: str | None = None, minutes: float | None = None, shard: Shard = None,
          dry_run: Literal[False] = False, on_metric: MetricCallback = None, progress: bool | None = None,
          notes: Notes = None, points_at_once: int | None = None, passes: float | None = None) -> Sweep: ...
@overload
def sweep(name: str | Path, scale: str | None = None, *, out: str | Path, set: Overrides = None, axes: Axes = None,
          corpus: str | None = None, device: str | None = None, minutes: float | None = None, shard: Shard = None,
          dry_run: Literal[True], on_metric: MetricCallback = None, progress: bool | None = None,
          notes: Notes = None, points_at_once: int | None = None, passes: float | None = None) -> dict: ...
@checked
def sweep(name: str | Path, scale: str | None = None, *, out: str | Path, set: Overrides = None, axes: Axes = None,
          corpus: str | None = None, device: str | None = None, minutes: float | None = None, shard: Shard = None,
          dry_run: bool = False, on_metric: MetricCallback = None, progress: bool | None = None,
          notes: Notes = None, points_at_once: int | None = None, passes: float | None = None) -> Sweep | dict:
    """Run a sweep (`lrn sweep NAME --out OUT`): a study preset (embed-dim, embed-dim-long, embed-dim-small-data,
    seed-variance, width-depth) or a sweep file; finished points are skipped, killed ones resumed. Returns a
    Sweep whose `result` is what `lrn sweep --json` prints, or with dry_run=True the plan (lrngpt.plan's):
    each point's state, steps, passes and estimated time here, how many train at once and why, the budget.

    `scale` full, cpu or tiny (None: the file's, else the directory's, else full with a CUDA GPU and cpu
    without); `minutes` fits the study into that many minutes here instead; `set` overrides base config
    keys as in config(), `corpus` and `device` are data.corpus and train.device; `axes` replaces axes,
    {"model.n_embd": [8, 64]} (keys linked with + take a list per value); `shard` "i/n" or (i, n) runs the
    points k with k mod n == i; `on_metric(row)` gets every run's metrics rows (the point under "run");
    `notes(line)` the planning lines (default: the "lrngpt" logger); `points_at_once` N trains N points at a
    time, each in a worker process (None: chosen from a measurement); `passes` (with `minutes`) the most
    passes a run may read its generated text, in (0, 1] (default 0.25). Raises UserError for a bad
    argument, a grid that does not resolve, a budget too short, or an `out` holding another sweep.

    Example: ``sw = lrngpt.sweep("embed-dim", scale="tiny", out="runs/widths", set={"train.steps": 20})``"""
    say = notes or logging.info
    # (i, n) as --shard i/n says it; None: the Slurm array task's shard, else every point
    where, note = resolve_shard("/".join(map(str, shard)) if isinstance(shard, tuple) else shard, os.environ)
    if note:
        say(note)
    if passes is not None:
        check_passes(passes)
        if minutes is None:
            raise UserError(f"{option('passes')} sizes the text of a budget: give {option('minutes')} with it, or "
                            f"leave {option('passes')} out")
    sets = run_sets(set, corpus, device)
    axis_list, at_once, out = _axis_list(axes), check_points_at_once(points_at_once), Path(out)
    budget = resolve_budget(str(name), minutes, scale, sets, axis_list, out, log=say, points_at_once=at_once,
                            passes=passes)
    # a budget's plan: its scale, sets and axes on top of the given ones
    plan_sets, plan_axes = budget.items() if budget is not None else ([], [])
    spec = resolve_sweep(str(name), scale if budget is None else "budget", sets + plan_sets, axis_list + plan_axes,
                         out=out)
    spec.budget = budget.to_dict() if budget is not None else None
    if spec.note:
        say(spec.note)
    if dry_run:
        r = dry_run_plan(spec, out, where, known=budget.point_seconds if budget is not None else None,
                         points_at_once=at_once)
        if budget is not None:
            r["budget"] = budget.to_dict()
            r["bf16"] = bf16_offer(spec.points)  # a CPU with bfloat16 instructions: its measured gain, offered
        return r
    if budget is not None:
        say(budget_text(budget))
    result = run_sweep(spec, out, where, progress=progress, on_metric=on_metric, points_at_once=at_once)
    sw = Sweep(out)
    sw.result = _with_findings(result)
    return sw


def _with_findings(doc: dict) -> dict:
    findings = judge([doc])  # a width study: the chapter's findings judged on this sweep alone
    return {**doc, "findings": [f.as_dict() for f in findings]} if findings else doc


@checked
def load_sweep(path: str | Path) -> Sweep:
    """A sweep directory (`lrn sweep --out`) as it is now, finished or not; UserError for no sweep there.

    Example: ``lrngpt.load_sweep("runs/embed-dim").findings[0]["verdict"]``"""
    return Sweep(path)


class Sweep:
    """A sweep directory: its definition, the finished runs' table, figures, runs and the book chapter's
    findings, read from the directory alone. `result`: what lrngpt.sweep or summarize() returned, else None.

    Example: ``sw = lrngpt.load_sweep("runs/widths"); sw.table[["n_embd", "val_bpb"]]; sw.findings``"""

    COLUMNS = ("name", "n_embd", "n_layer", "seed", "steps", "params", "embedding", "val_bpb", "train_bpb", "gap",
               "passes", "best_val_bpb", "best_val_step", "used_axes", "seconds", "corpus")

    @checked
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.dir = SweepDir(self.path)
        self.definition: dict = self.dir.definition()  # UserError: no sweep here
        self.result: Any = None  # a dict, or None (typed Any so `sw.result["trained"]` checks as written)

    def __repr__(self) -> str:
        return f"Sweep({str(self.path)!r}: {self.definition.get('name')}, {len(self.rows)} of " \
               f"{len(self.definition.get('points') or [])} runs finished)"

    def _doc(self) -> dict:
        return sweep_docs([self.path])[0]

    @property
    def rows(self) -> list[dict]:
        """Every finished run's row as summary.json holds it (plain dicts). Example: ``sw.rows[0]["val_bpb"]``"""
        return collect(self.path)["rows"]

    @property
    def table(self) -> Any:
        """The results table, one row per finished run (a DataFrame with pandas). Example: ``sw.table.sort_values("val_bpb")``"""
        return table([{c: r.get(c) for c in self.COLUMNS} for r in self.rows])

    @property
    def findings(self) -> list[dict]:
        """The book chapter's findings judged on this sweep alone, as `lrn report DIR` does: finding, verdict,
        reason, evidence, next (a width-depth study: Kaplan et al.'s, number 4; else []).

        Example: ``[(f["number"], f["verdict"]) for f in lrngpt.load_sweep("runs/embed-dim").findings]``"""
        return [f.as_dict() for f in judge([self._doc()])]

    @checked
    def summarize(self) -> dict:
        """Gather the finished runs into the summary files and figures again (`lrn sweep --summary-only`).

        Example: ``lrngpt.load_sweep("runs/embed-dim").summarize()["table"]``"""
        self.result = _with_findings(summarize(self.path))
        return self.result

    @checked
    def figure(self, name: FigureName = "val_bpb_by_width") -> Figure | None:
        """One of the chapter's figures as a matplotlib Figure (None while the sweep has no data for it).

        Example: ``sw.figure("train_vs_val")``"""
        plots = {n: plot for n, plot, _ in PLOTS}
        drawn = plots[name]([self._doc()])
        return None if drawn is None else drawn[0]

    @checked
    def run(self, point: str | int) -> Run:
        """One point's Run, by its name (d64-s1337-t30) or its width (64: the first run of that width).

        Example: ``sw.run(64).neighbors(" red")``"""
        if isinstance(point, int):
            names = [r["name"] for r in self.rows if r["n_embd"] == point]
            if not names:
                raise UserError(f"no finished run of width {point} in {self.path}")
            point = names[0]
        return Run(self.dir.run_path(str(point)))

    @checked
    def report(self, out: str | Path | None = None) -> str:
        """Write the sweep's HTML report (`lrn report`) and explorer; the path. Example: ``sw.report()``"""
        return write_report([self.path], out)["path"]

    @checked
    def explore(self, out: str | Path, top: int | None = None) -> str:
        """Write the explorer page stepping through the widths (`lrn embed explore SWEEP`). Example: ``sw.explore("widths.html")``"""
        return write_explorer([self.path], out, top)["path"]

    def _repr_html_(self) -> str:
        doc = self._doc()
        # the study's figure, captioned as in the report: by width, or (a shape study) by shape
        drawn = [(d[0], caption) for name, plot, caption in PLOTS if doc["rows"]
                 and name in ("val_bpb_by_width", "val_bpb_by_shape") and (d := plot([doc])) is not None]
        fig = figure(png_bytes(drawn[0][0]), drawn[0][1]) if drawn else ""
        findings = judge([doc])
        judged = f'<div class="lrngpt-findings">{findings_html(findings)}</div>' if findings else ""
        return (f'<div class="lrngpt-sweep"><h3>Sweep {esc(str(doc["sweep"]))} ({esc(str(self.path))})</h3>'
                f"{sweep_headline([doc])}{judged}{fig}{results_html([doc])}</div>")

