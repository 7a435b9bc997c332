"""Runs from Python, on the path `lrn train` takes: `plan` (what a run or a sweep will read and cost,
nothing trained), `train` (a run, a resume, an extension with a new schedule) and `load`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lrngpt.api.checks import Checkpoint, checked, positive
from lrngpt.api.configs import Overrides, resolve_config
from lrngpt.api.results import Run
from lrngpt.api.sweeps import Axes, Notes, Shard, sweep
from lrngpt.corpora.registry import pinned_source
from lrngpt.data.prepared import dry_run_prepared
from lrngpt.data.sizing import sizing
from lrngpt.device.distributed import Distributed
from lrngpt.errors import UserError, option
from lrngpt.experiments.presets import STUDIES
from lrngpt.models.build import param_breakdown
from lrngpt.runconfig.help import width_line
from lrngpt.store.rundir import RunDir
from lrngpt.training.trainer import train_run

if TYPE_CHECKING:
    from lrngpt.runconfig.schema import RunConfig

MetricCallback = Callable[[dict], None] | None
SWEEP_FILE_KEYS = {"axes", "base", "study"}  # what a sweep file has and a config file never does


def is_sweep_source(what: object) -> bool:
    """Whether `what` names a sweep (a study preset or a sweep file) rather than a run's config."""
    if not isinstance(what, str | Path):
        return False
    if str(what) in STUDIES:
        return True
    path = Path(what)
    if path.suffix != ".json" or not path.is_file():
        return False
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False  # the config reader names what is wrong with the file
    return isinstance(doc, dict) and bool(SWEEP_FILE_KEYS & set(doc)) and not {"data", "model", "train"} & set(doc)


def plan_run(cfg: RunConfig) -> dict:
    """What a run of `cfg` reads and holds, nothing trained or downloaded: its parameters by part, the
    config, the corpus (and its pinned revision), the training and validation tokens (None for a big
    or downloaded corpus not prepared yet; a small local one is prepared, and cached, to count them),
    the tokens its steps read, the passes over the training text and the steps of one pass; for a GPT,
    `shape`: its depth, width and heads in one line (and how model.aspect_ratio gave the width)."""
    data = dry_run_prepared(cfg.data, log=lambda m: None)
    source = pinned_source(cfg.data.corpus)
    tc = cfg.train
    size = sizing(tc.steps, tc.tokens_per_step, len(data.tokens("train")) if data is not None else None,
                  len(data.tokens("val")) if data is not None else None)
    return {"params": param_breakdown(cfg.model_type, cfg.model), "config": cfg.to_dict(), "corpus": cfg.data.corpus,
            "revision": source["revision"] if source else None, "shape": width_line(cfg), **size}


@checked
def plan(what: RunConfig | str | Path | None, scale: str | None = None, *, out: str | Path | None = None,
         set: Overrides = None, axes: Axes = None, corpus: str | None = None, device: str | None = None,
         minutes: float | None = None, shard: Shard = None, notes: Notes = None,
         points_at_once: int | None = None) -> dict:
    """What a run or a sweep will read and cost, nothing trained or downloaded (`lrn train --dry-run`,
    `lrn sweep --dry-run`).

    A run (`what` a RunConfig, a preset or a config file; None: the run in `out`, as a resume would
    continue it): parameters by part, the config, the corpus and its revision, train_tokens,
    val_tokens, tokens_read, passes over the training text and one_pass_steps (None for a big or
    downloaded corpus not prepared yet). A sweep (`what` a study preset or a sweep file, `out` its
    directory; the arguments of sweep()): this shard's points with their state, steps, passes and
    estimated time on this machine, how many train at once and why (`points_at_once`), and the budget's
    plan with `minutes`. Raises UserError for a bad
    argument, an option that does not apply (scale, axes, minutes or shard for a run), or a config or
    grid that does not resolve.

    Example: ``lrngpt.plan(lrngpt.config("mlp-tiny"))["one_pass_steps"], lrngpt.plan("embed-dim", scale="tiny", out="runs/w")["points"]``"""
    if is_sweep_source(what):
        assert isinstance(what, str | Path)  # (is_sweep_source says so; for the type checker)
        if out is None:
            raise UserError("plan() of a sweep needs out=, its directory (lrn sweep --out DIR)")
        return sweep(what, scale, out=out, set=set, axes=axes, corpus=corpus, device=device, minutes=minutes,
                     shard=shard, notes=notes, points_at_once=points_at_once, dry_run=True)
    given = [n for n, v in (("scale", scale), ("axes", axes), ("minutes", minutes), ("shard", shard),
                            ("points_at_once", points_at_once)) if v is not None]
    if given:
        raise UserError(f"plan(): {given[0]} applies to a sweep (a study preset or a sweep file), not to a run's "
                        "config; leave it out")
    return plan_run(resolve_config(what, set, corpus, device, resume_from=out if what is None else None))


@checked
def train(config: RunConfig | str | Path | None, out: str | Path | None = None, *, resume: bool = False,
          extend: bool = False, force: bool = False, steps: int | None = None, set: Overrides = None,
          corpus: str | None = None, device: str | None = None, on_metric: MetricCallback = None,
          progress: bool | None = None) -> Run:
    """Train `config` into the run directory `out` (`lrn train --config ... --out OUT`); a Run whose
    `result` is the summary the training returned.

    `config` is a RunConfig (lrngpt.config), a preset or a config file, checked again first (a field
    changed after it was built fails as --set would); `set` overrides its keys as config() does,
    `corpus` and `device` are data.corpus and train.device. `resume=True` continues `out` from its
    last checkpoint, bit-exactly on CPU (config None: the run's own config.json); a finished run does
    nothing (result["already_finished"]). `extend=True`, with resume, accepts a new learning-rate
    schedule (another train.steps, warmup_steps, lr or min_lr) from the checkpoint's step on, recorded
    in the run; without it such a resume is refused. `force=True` replaces an earlier lrn run in `out`
    (only its files). `steps` stops at that global step (the schedule follows train.steps);
    `on_metric(row)` gets every row as it is written to metrics.jsonl. A progress bar shows in a
    notebook or on a terminal; log lines go to the "lrngpt" logger. Raises UserError for a bad
    argument, a config that does not check, an `out` lrn may not write, or a resume that does not fit.

    Example: ``run = lrngpt.train(lrngpt.config("mlp-tiny"), out="runs/tiny", on_metric=print)``"""
    positive(steps, option('steps'))
    cfg = resolve_config(config, set, corpus, device, resume_from=out if config is None and resume else None)
    if out is None:
        raise UserError(f"give {option('out', 'RUN_DIR')}, the directory the run writes to (out= in Python)")
    if extend and not resume:
        raise UserError(f"{option('extend', True)} continues a run with a new schedule; give it with {option('resume', True)}")
    summary = train_run(cfg, out, resume=resume, force=force, stop_at=steps, progress=progress, on_metric=on_metric,
                        extend=extend)
    if not Distributed.from_env().master:  # another rank of a torchrun job: rank 0 wrote the run and reports it
        return _unreported(out)
    run = Run(out)
    run.result = summary
    return run


def _unreported(out: str | Path) -> Run:
    """The Run of another rank: its directory may live on rank 0's machine only, so nothing is read here
    (where it is shared, the methods read it as on rank 0)."""
    run = Run.__new__(Run)
    run.path, run.checkpoint, run.device, run.result = Path(out), "last", "auto", None
    run._dir, run._loaded, run._resolved = RunDir(out), None, None
    return run


@checked
def load(path: str | Path, checkpoint: Checkpoint = "last", device: str = "auto") -> Run:
    """A finished or running run directory (`lrn train --out`) with the weights `checkpoint`: last,
    best (the best periodic val bpb) or init (untrained), loaded on `device` (auto: a CUDA GPU, else
    MPS, else the CPU; or cpu, cuda, cuda:N, mps) on first use. Raises UserError for a path that holds
    no run or a checkpoint name other than last, best or init.

    Example: ``best = lrngpt.load("runs/mlp64", checkpoint="best"); best.eval()["val_bpb"]``"""
    return Run(path, checkpoint, device)
