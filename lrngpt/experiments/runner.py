"""Running a sweep: `run_sweep(sweep, out, shard)` trains the points of one shard that are not
finished yet (resuming partial ones) and then writes the summary (`summarize`).

The grid (resolving presets and sweep files into points, shards) is lrngpt.experiments.grid;
the directory (sweep.json, runs/, the summary files) is owned by
lrngpt.experiments.sweepdir.SweepDir; the dry run's plan is lrngpt.experiments.dry_run. Each
distinct data configuration of the shard is prepared once and handed to every point that
trains on it.
"""

from __future__ import annotations

import time
from pathlib import Path

from lrngpt.core import log as logging
from lrngpt.core.fsio import check_output
from lrngpt.corpora import fetch
from lrngpt.experiments.dry_run import check_machine, data_key_of, passes_warning, point_passes
from lrngpt.experiments.grid import SweepSpec, shard_points
from lrngpt.experiments.summary import collect, csv_text, markdown
from lrngpt.experiments.sweepdir import SweepDir, summary_bytes
from lrngpt.experiments.timing import (
    account,
    account_text,
    corrected,
    invocation_id,
    invocation_seconds,
    now,
    pace,
    points_run,
)
from lrngpt.store.rundir import RunInUse
from lrngpt.training.duration import plan_duration
from lrngpt.training.timing import clock


def write_definition(sweep: SweepSpec, out: Path) -> None:
    """Create DIR/sweep.json, or check that DIR holds this same sweep (SweepDir.create_or_check)."""
    SweepDir(out).create_or_check(sweep.definition())


def summary_and_figures(out: str | Path, figures: bool = True) -> tuple[dict, dict[str, bytes]]:
    """The summary of DIR's existing run directories, and its figures as {NAME.png: PNG}; nothing written."""
    sweep_dir = SweepDir(out)
    doc = collect(sweep_dir.path)
    pngs: dict[str, bytes] = {}
    if figures and doc["rows"]:
        # matplotlib, PIL, numpy: loaded only when this runs
        from lrngpt.experiments.figures import figure_files

        pngs = figure_files(sweep_dir.path, doc)
        doc["figures"] = [str(sweep_dir.figures_dir / name) for name in pngs]
    return doc, pngs


def summarize(out: str | Path, figures: bool = True, strict: bool = True) -> dict:
    """Gather rows from DIR's existing run directories; write lines, tables and figures (only over
    files that are lrn's, unchanged: SweepDir.write_summary; `strict`: else refuse; not strict: keep
    them as they are, listed in "kept")."""
    doc, pngs = summary_and_figures(out, figures)
    kept = SweepDir(out).write_summary(doc, doc["lines"], markdown(doc), csv_text(doc), pngs, strict=strict)
    doc["kept"] = [str(p) for p in kept]
    return doc


def rendered_summary(out: str | Path) -> dict[Path, bytes]:
    """{path: bytes} of the summary as summarize would write it now (for SweepDir.kept_summary_files)."""
    sweep_dir = SweepDir(out)
    doc, pngs = summary_and_figures(out)
    files = summary_bytes(doc, doc["lines"], markdown(doc), csv_text(doc))
    return {**{sweep_dir.path / n: b for n, b in files.items()}, **{sweep_dir.figures_dir / n: b for n, b in pngs.items()}}


@logging.honours_progress
def run_sweep(sweep: SweepSpec, out: str | Path, shard: tuple[int, int] = (0, 1), log=None,
              progress: bool | None = None, on_metric=None, figures: bool = True) -> dict:
    """Train this shard's unfinished points (resuming partial ones), then summarize DIR.

    Refuses the full scale on a machine without a CUDA GPU (check_machine); a width study whose
    runs read their text more than once says so in one line before the first run. `on_metric` gets
    every metrics row of every run as it is written, with the point's name under "run"; `figures`
    False leaves out the PNGs (the tables and lines are written all the same)."""
    # tokenizers: loaded only when this runs
    from lrngpt.training.trainer import train

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
    for why in sweep_dir.kept_summary_files(lambda: rendered_summary(sweep_dir.path)).values():
        log(f"{tag} note: {why}")  # a lines.txt of yours: said now and kept as it is; the runs still train
    # every point's files are read (and checked) before any training: a damaged one stops the sweep
    # now, with its name, not after hours of work when the summary gathers it
    states = {p.name: sweep_dir.point_state(p.name, p.steps) for p in sweep.points}
    todo = [p for p in mine if states[p.name] != "finished"]
    logging.debug(f"sweep {sweep.name}: shard {shard[0]}/{shard[1]} has {len(mine)} of {len(sweep.points)} points ("
                  + ", ".join(f"{p.name} {states[p.name]}" for p in mine) + ")")
    prepared: dict = {}  # each distinct data configuration prepared once, for the plan and every point
    passes = point_passes(todo, log, prepared=prepared) if todo else {}
    warning = passes_warning(sweep, [v["passes"] for v in passes.values()]) if todo else None
    if warning:
        log(warning)
    trained, skipped, busy = [], [], []
    plan = (sweep.budget or {}).get("point_seconds") or {}  # a budget: each run timed against its estimate
    started = time.perf_counter() - invocation_seconds()  # this invocation's wall clock, from its start
    inv = invocation_id()
    bar = logging.progress(total=len(mine), desc=f"sweep {sweep.name}", unit="point", enabled=progress)
    for p in mine:
        run = sweep_dir.run(p.name)
        state = states[p.name]
        if state == "finished":
            log(f"{tag} skip {p.name}: finished at step {p.steps}")
            skipped.append(p.name)
            bar.update()
            continue
        log(f"{tag} {'resume' if state == 'partial' else 'train'} {p.name} "
            f"(point {p.index + 1} of {len(sweep.points)})")
        t0 = time.perf_counter()
        try:
            train(p.config, run.path, resume=state == "partial", force=state == "new",
                  log=lambda msg, name=p.name: log(f"  {name}: {msg}"), progress=progress,
                  warn_passes=not sweep.width_study,
                  how_to_continue="continue it by running the same `lrn sweep` command again (it resumes this point)",
                  how_to_restart=f"move {run.path} away and run the same `lrn sweep` command again: it trains that "
                                 "point afresh",
                  on_metric=None if on_metric is None else lambda row, name=p.name: on_metric({"run": name, **row}),
                  data=prepared.get(data_key_of(p)), hparams=p.values)
        except RunInUse as e:  # the same sweep started twice: each point is trained by one of them
            log(f"{tag} skip {p.name}: another process is training it ({e.who}); run the same command again "
                "when it ends to gather it")
            busy.append(p.name)
            bar.update()
            continue
        # the run's chapter-format line (its used axes need the weights) is printed once, with the
        # others, when the sweep ends; here only what summary.json holds
        s = run.summary()
        bpb = "n/a" if s["val_bpb"] is None else f"{s['val_bpb']:.4f}"  # null: no bytes to score
        log(f"{tag} done {p.name}: val bpb {bpb}, {_passes(s['passes'])}, {s['seconds']:.0f}s")
        trained.append(p.name)
        if p.name in plan:
            log(f"{tag} {_against_plan(sweep_dir, p.name, time.perf_counter() - t0, plan, todo, inv)}")
        bar.update()
    bar.close()
    if plan:  # before the summary, so that its files hold the account (the summary's own seconds follow)
        sweep_dir.append_timing({"event": "run", "seconds": round(time.perf_counter() - started, 1),
                                 "estimate": sweep.budget.get("est_seconds"), "trained": trained,
                                 "shard": f"{shard[0]}/{shard[1]}", "at": now(), "invocation": inv})
    t0 = time.perf_counter()
    result = summarize(sweep_dir.path, figures, strict=False)
    if plan:
        sweep_dir.append_timing({"event": "summary", "seconds": round(time.perf_counter() - t0, 1), "at": now(),
                                 "invocation": inv})
        result["timing"] = account(sweep.budget, sweep_dir.timing())
        log(f"{tag} {account_text(result['timing'])}")
    result.update(trained=trained, skipped=skipped, busy=busy, shard=f"{shard[0]}/{shard[1]}")
    return result


def _against_plan(sweep_dir: SweepDir, name: str, seconds: float, plan: dict, todo: list, inv: str) -> str:
    """Record a budgeted run's wall time beside its estimate; the plan for the rest, at the pace so far."""
    sweep_dir.append_timing({"event": "point", "name": name, "seconds": round(seconds, 1),
                             "estimate": plan[name], "at": now(), "invocation": inv})
    rows = sweep_dir.timing()
    left = [p.name for p in todo if p.name not in points_run(rows) and p.name in plan]
    rest = corrected({n: plan[n] for n in left}, rows)
    runs = "the run left takes" if len(left) == 1 else f"the {len(left)} runs left take"
    return (f"{name} took {clock(seconds)} against the plan's {clock(plan[name])}; at this pace "
            f"({pace(rows):.2f}x the estimates) {runs} about {clock(sum(rest.values()))}"
            if left else f"{name} took {clock(seconds)} against the plan's {clock(plan[name])}")


def _passes(passes) -> str:
    return "passes -" if passes is None else f"{passes:.2f} passes"
