"""Runs from Python, on the path `lrn train` takes: `plan` (what a run or a sweep will read and cost,
nothing trained), `train` (a run, a resume, an extension with a new schedule) and `load`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard

from lrngpt.api.checks import Checkpoint, checked
from lrngpt.api.configs import Overrides, resolve_config
from lrngpt.api.results import Run
from lrngpt.api.sweeps import Axes, MetricCallback, Notes, Shard, sweep
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

SWEEP_FILE_KEYS = {"axes", "base", "study"}  # what a sweep file has and a config file never does


def is_sweep_source(what: object) -> TypeGuard[str | Path]:
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
    """What a run of `cfg` reads and holds (plan()'s document of a run); a small local corpus is prepared,
    and cached, to count its tokens."""
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
    """What a run or a sweep will read and cost, nothing trained or downloaded (`lrn train --dry-run`, `lrn
    sweep --dry-run`). A run (`what` a RunConfig, a preset or a config file; None: the run in `out`, as a
    resume would continue it): parameters by part, the config, the corpus and its revision, train_tokens,
    val_tokens, tokens_read, passes and one_pass_steps (None for a big corpus not prepared yet). A sweep
    (`what` a study preset or a sweep file, `out` its directory): sweep(dry_run=True)'s plan.

    Example: ``lrngpt.plan(lrngpt.config("mlp-tiny"))["one_pass_steps"], lrngpt.plan("embed-dim", scale="tiny", out="runs/w")["points"]``"""
    if is_sweep_source(what):
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
    """Train `config` (a RunConfig, a preset or a config file) into the run directory `out` (`lrn train`); a
    Run whose `result` is the training's summary. `set` overrides keys as config() does, `corpus` and
    `device` are data.corpus and train.device; `resume=True` continues `out` bit-exactly (config None: the
    run's own); `extend=True`, with resume, accepts a new learning-rate schedule; `force=True` replaces an
    earlier lrn run in `out`; `steps` stops at that global step; `on_metric(row)` gets every metrics row.

    Example: ``run = lrngpt.train(lrngpt.config("mlp-tiny"), out="runs/tiny", on_metric=print)``"""
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
    """The Run of another rank: its directory may live on rank 0's machine only, so nothing is read here."""
    run = Run.__new__(Run)
    run.path, run.checkpoint, run.device, run.result = Path(out), "last", "auto", None
    run._dir = RunDir(out)
    return run


@checked
def load(path: str | Path, checkpoint: Checkpoint = "last", device: str = "auto") -> Run:
    """A run directory (`lrn train --out`) with the weights `checkpoint` (last, best or init), loaded on
    `device` (auto, cpu, cuda, cuda:N or mps) on first use.

    Example: ``best = lrngpt.load("runs/mlp64", checkpoint="best"); best.eval()["val_bpb"]``"""
    return Run(path, checkpoint, device)
