"""Running a sweep: `run_sweep` trains one shard's unfinished points (resuming partial ones), then
writes the summary (`summarize`). Each distinct data configuration is prepared once.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lrngpt.core import log as logging
from lrngpt.core.fsio import check_output
from lrngpt.corpora.registry import fetch
from lrngpt.errors import UserError
from lrngpt.experiments import figures as figures_module
from lrngpt.experiments.dry_run import check_machine, data_key_of, passes_warning, point_passes
from lrngpt.experiments.grid import SweepSpec, shard_points
from lrngpt.experiments.packing import for_sweep, order
from lrngpt.experiments.packing import kept as packing_kept
from lrngpt.experiments.packing import text as packing_text
from lrngpt.experiments.summary import collect, csv_text, markdown
from lrngpt.experiments.sweepdir import SweepDir
from lrngpt.experiments.time_ledger import (
    account,
    account_text,
    corrected,
    invocation_id,
    invocation_seconds,
    now,
    pace,
    points_run,
)
from lrngpt.experiments.workers import run_points
from lrngpt.store.lifecycle import RunInUse
from lrngpt.training import timing as run_timing
from lrngpt.training.duration import plan_duration
from lrngpt.training.timing import clock
from lrngpt.training.trainer import train_run


def summarize(out: str | Path, figures: bool = True, strict: bool = True) -> dict:
    """Gather DIR's runs and write lines, tables and figures over files that are lrn's; `strict`: else
    refuse, not strict: keep them (listed in "kept")."""
    sweep_dir = SweepDir(out)
    doc = collect(sweep_dir.path)
    pngs: dict[str, bytes] = {}
    if figures and doc["rows"]:
        pngs = figures_module.figure_files(sweep_dir.path, doc)  # looked up when called: tests stand in for it
        doc["figures"] = [str(sweep_dir.figures_dir / name) for name in pngs]
    kept = sweep_dir.write_summary(doc, doc["lines"], markdown(doc), csv_text(doc), pngs, strict=strict)
    doc["kept"] = [str(p) for p in kept]
    return doc


@logging.honours_progress
def run_sweep(sweep: SweepSpec, out: str | Path, shard: tuple[int, int] = (0, 1), log=None,
              progress: bool | None = None, on_metric=None, figures: bool = True,
              points_at_once: int | None = None) -> dict:
    """Train this shard's unfinished points (resuming partial ones), then summarize DIR. `on_metric` gets
    every metrics row with the point's name under "run"; `points_at_once` None: measured."""
    log = log or logging.info
    sweep_dir = SweepDir(check_output(out, "dir"))  # before any download or timing
    mine = shard_points(sweep, shard)
    for corpus in dict.fromkeys(p.config.data.corpus for p in mine):
        fetch(corpus)  # a download that cannot happen stops the sweep before it writes anything
    check_machine(sweep)
    for p in mine:  # a point that cannot end within its train.max_days stops the sweep before it writes
        # anything (bounded from below, untimed: each point's training times itself as it starts)
        plan_duration(p.config, p.steps, p.config.train.device, timed=False, what=f"point {p.name}")
    sweep_dir.create_or_check(sweep.definition())
    tag = f"[{sweep.name}, {sweep.scale} scale]"
    for why in sweep_dir.kept_summary_files().values():
        log(f"{tag} note: {why}")  # a lines.txt of yours: said now and kept as it is; the runs still train
    # every point's files are read (and checked) before any training: a damaged one stops the sweep
    # now, with its name, not after hours of work when the summary gathers it
    states = {p.name: sweep_dir.point_state(p.name, p.steps) for p in sweep.points}
    todo = [p for p in mine if states[p.name] != "finished"]
    logging.debug(f"sweep {sweep.name}: shard {shard[0]}/{shard[1]} has {len(mine)} of {len(sweep.points)} points ("
                  + ", ".join(f"{p.name} {states[p.name]}" for p in mine) + ")")
    prepared: dict = {}  # each distinct data configuration prepared once, for the plan and every point
    passes = point_passes(todo, log, prepared=prepared)
    warning = passes_warning(sweep, [v["passes"] for v in passes.values()])
    if warning:
        log(warning)
    packing = for_sweep(sweep.budget, todo, points_at_once,  # forced, else the budget's plan's, else measured now
                        {n: v["val_split_tokens"] for n, v in passes.items()}, logging.debug)
    if todo:
        log(f"{tag} {packing_text(packing)}")
    started = time.perf_counter() - invocation_seconds()  # this invocation's wall clock, from its start
    bar = logging.progress(total=len(mine), desc=f"sweep {sweep.name}", unit="point", enabled=progress)
    run = _Shard(sweep, sweep_dir, tag, log, states, todo, prepared, on_metric, progress, bar, invocation_id())
    skipped = [p for p in mine if states[p.name] == "finished"]
    for p in skipped:
        log(f"{tag} skip {p.name}: finished at step {p.steps}")
        bar.update()
    if packing["points_at_once"] > 1:
        run.train_packed(packing)
    else:
        for p in todo:
            run.train_here(p)
    bar.close()
    result = run.finish(shard, started, figures)
    result.update(trained=run.trained, skipped=[p.name for p in skipped], busy=run.busy,
                  shard=f"{shard[0]}/{shard[1]}", packing=packing_kept(packing))
    return result


@dataclass
class _Shard:
    """This invocation's points: trained here or in workers, each end said, counted, and under a budget
    (its plan's point_seconds) timed against the plan."""
    sweep: SweepSpec
    sweep_dir: SweepDir
    tag: str
    log: Callable[[str], None]
    states: dict[str, str]
    todo: list
    prepared: dict
    on_metric: Callable | None
    progress: bool | None
    bar: Any
    inv: str  # this invocation's id in the timing record
    trained: list[str] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)

    @property
    def plan(self) -> dict:
        return (self.sweep.budget or {}).get("point_seconds") or {}

    def ended(self, p, kind: str, value, seconds: float) -> None:
        """A point's end, however it trained: said, counted, timed against the plan."""
        if kind == "busy":  # the same sweep started twice: each point is trained by one of them
            self.log(f"{self.tag} skip {p.name}: another process is training it ({value}); run the same command "
                     "again when it ends to gather it")
            self.busy.append(p.name)
        elif kind == "done":
            # (its chapter-format line needs the weights: printed with the others when the sweep ends)
            s = self.sweep_dir.run(p.name).summary()
            assert s is not None, "a point that trained has its summary"
            bpb = "n/a" if s["val_bpb"] is None else f"{s['val_bpb']:.4f}"  # null: no bytes to score
            passes = "passes -" if s["passes"] is None else f"{s['passes']:.2f} passes"
            self.log(f"{self.tag} done {p.name}: val bpb {bpb}, {passes}, {s['seconds']:.0f}s")
            self.trained.append(p.name)
            if p.name in self.plan:
                self.log(f"{self.tag} {self.against_plan(p.name, seconds)}")
        self.bar.update()

    def against_plan(self, name: str, seconds: float) -> str:
        """Record a budgeted run's wall time beside its estimate; the plan for the rest, at the pace so far."""
        plan = self.plan
        self.sweep_dir.append_timing({"event": "point", "name": name, "seconds": round(seconds, 1),
                                      "estimate": plan[name], "at": now(), "invocation": self.inv})
        rows = self.sweep_dir.timing()
        left = [p.name for p in self.todo if p.name not in points_run(rows) and p.name in plan]
        rest = corrected({n: plan[n] for n in left}, rows)
        runs = "the run left takes" if len(left) == 1 else f"the {len(left)} runs left take"
        return (f"{name} took {clock(seconds)} against the plan's {clock(plan[name])}; at this pace "
                f"({pace(rows):.2f}x the estimates) {runs} about {clock(sum(rest.values()))}"
                if left else f"{name} took {clock(seconds)} against the plan's {clock(plan[name])}")

    def job(self, p, at_once: str = "") -> dict:
        """A point's training, as train_run takes it (said as it starts)."""
        run, state = self.sweep_dir.run(p.name), self.states[p.name]
        self.log(f"{self.tag} {'resume' if state == 'partial' else 'train'} {p.name} (point {p.index + 1} of "
                 f"{len(self.sweep.points)}{at_once})")
        return dict(resume=state == "partial", force=state == "new", hparams=p.values,
                    data=self.prepared.get(data_key_of(p)), warn_passes=not self.sweep.width_study,
                    how_to_continue="continue it by running the same `lrn sweep` command again (it resumes this "
                                    "point)",
                    how_to_restart=f"move {run.path} away and run the same `lrn sweep` command again: it trains "
                                   "that point afresh")

    def train_here(self, p) -> None:
        """One point trained in this process, with all of torch's threads (one point after another)."""
        job, t0, on_metric = self.job(p), time.perf_counter(), self.on_metric
        try:
            train_run(p.config, self.sweep_dir.run_path(p.name), **job, progress=self.progress,
                      log=lambda msg, name=p.name: self.log(f"  {name}: {msg}"),
                      on_metric=None if on_metric is None else lambda row: on_metric({"run": p.name, **row}))
        except RunInUse as e:
            self.ended(p, "busy", e.who, time.perf_counter() - t0)
            return
        self.ended(p, "done", None, time.perf_counter() - t0)

    def train_packed(self, packing: dict) -> None:
        """The points trained several at once in worker processes; a failure stops the sweep once the rest end."""
        by_name, jobs, failures = {p.name: p for p in self.todo}, [], []
        for p in order(self.todo, lambda q: run_timing.params(q.config)):
            job = self.job(p, f", {packing['points_at_once']} at once")
            if job["data"] is not None:  # a worker maps the arrays itself: its directory, meta and cut go, no cache
                job["data"] = dataclasses.replace(job["data"])
            jobs.append({"name": p.name, "train": {**job, "cfg": p.config, "run_dir": self.sweep_dir.run_path(p.name)}})

        def on_end(name, kind, value, seconds):
            if kind in ("done", "busy"):
                self.ended(by_name[name], kind, value, seconds)
            else:
                failures.append((name, kind, value))

        on_metric = self.on_metric
        run_points(jobs, packing["points_at_once"], packing["threads"], lambda name, msg: self.log(f"  {name}: {msg}"),
                   None if on_metric is None else lambda name, row: on_metric({"run": name, **row}), on_end)
        if failures:
            name, kind, value = failures[0]
            if kind == "raise":  # as the point would have raised it in this process (a UserError, a full disk)
                raise value
            how = f"its worker process ended ({value})" if kind == "killed" else "it was stopped (SIGTERM or Ctrl-C)"
            raise UserError(f"point {name} did not finish: {how}; its run directory holds its last checkpoint: run "
                            "the same `lrn sweep` command again to resume it")

    def finish(self, shard: tuple[int, int], started: float, figures: bool) -> dict:
        """The summary of DIR; under a budget, the seconds recorded and the account of the plan."""
        budget, timed = self.sweep.budget or {}, bool(self.plan and self.sweep.budget)
        if timed:  # before the summary, so that its files hold the account
            self.sweep_dir.append_timing({"event": "run", "seconds": round(time.perf_counter() - started, 1),
                                          "estimate": budget.get("est_seconds"), "trained": self.trained,
                                          "shard": f"{shard[0]}/{shard[1]}", "at": now(), "invocation": self.inv})
        t0 = time.perf_counter()
        result = summarize(self.sweep_dir.path, figures, strict=False)
        if timed:
            self.sweep_dir.append_timing({"event": "summary", "seconds": round(time.perf_counter() - t0, 1),
                                          "at": now(), "invocation": self.inv})
            result["timing"] = account(budget, self.sweep_dir.timing())
            self.log(f"{self.tag} {account_text(result['timing'])}")
        return result
