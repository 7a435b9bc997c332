"""The Python API: what a notebook types, on the same code path as `lrn`.

    import lrngpt
    cfg = lrngpt.config("mlp-tiny", **{"train.steps": 60})      # a checked RunConfig
    run = lrngpt.train(cfg, out="runs/tiny")                      # a Run (shown inline in Jupyter)
    run.eval()["val_bpb"], run.sample("Once upon a time", max_new_tokens=30)
    sweep = lrngpt.sweep("embed-dim", scale="tiny", out="runs/widths", set={"train.steps": 20})
    sweep.table                                                   # a DataFrame when pandas is there

Each function here calls the library function the matching `lrn` command calls (`train` is
lrngpt.training.trainer.train, `sweep` lrngpt.experiments.runner.run_sweep, `Run.eval` lrngpt.inference.evaluate.evaluate_run),
so a notebook and the command line compute the same numbers. Results are plain data (dicts, lists,
floats) or, for tables, a pandas DataFrame when pandas is importable; figures are matplotlib
`Figure`s; a `Run` and a `Sweep` render as the report's headline and figure under a cell. Bad input
raises `lrngpt.UserError` with the one-line message `lrn` prints. Nothing here imports torch until
it is needed, so `import lrngpt` stays cheap. `Run` and `Sweep` live in lrngpt/api/results.py, the
lessons, theory and costs (plain data) in lrngpt/api/lessons.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lrngpt.api.lessons import (
    cost_gpt,
    cost_mlp,
    cost_models,
    lesson_lookup,
    lesson_lookup_grad,
    lesson_renumber,
    lesson_softmax_bottleneck,
    lesson_tying,
    theory_fourth_root,
    theory_jl,
    theory_random_cosine,
)
from lrngpt.api.results import Run, Sweep, table
from lrngpt.errors import UserError

if TYPE_CHECKING:
    from lrngpt.runconfig.schema import RunConfig

Overrides = Mapping[str, Any] | Iterable[str] | str | None
MetricCallback = Callable[[dict], None]
__all__ = ["Run", "Sweep", "UserError", "config", "cost_gpt", "cost_mlp", "cost_models", "lesson_lookup",
           "lesson_lookup_grad", "lesson_renumber", "lesson_softmax_bottleneck", "lesson_tying", "load",
           "load_sweep", "plan", "sweep", "table", "theory_fourth_root", "theory_jl", "theory_random_cosine", "train"]


def _override_list(overrides: Overrides) -> list[str]:
    """`set=` as "KEY=VALUE" strings: a mapping's values are written as JSON, which --set parses back."""
    if overrides is None:
        return []
    if isinstance(overrides, str):
        return [overrides]
    if isinstance(overrides, Mapping):
        return [f"{key}={json.dumps(value)}" for key, value in overrides.items()]
    items = list(overrides)
    for item in items:
        if not isinstance(item, str):
            raise UserError(f"set= takes a mapping {{'train.steps': 50}} or strings 'KEY=VALUE', got {item!r}")
    return items


def config(name_or_path: str | Path | RunConfig, set: Overrides = None, **overrides: Any) -> RunConfig:
    """A checked run config: a preset name (`lrn config list`), a JSON file or a RunConfig, with overrides.

    Overrides are the keys of `lrn config keys`, given as `set={"model.n_embd": 128}`, as
    `set=["model.n_embd=128"]` (the --set form) or as keyword arguments `**{"model.n_embd": 128}`;
    a bad key or value raises UserError with the message `--set` gives.

    Example: ``cfg = lrngpt.config("mlp-cpu", **{"model.n_embd": 128, "train.steps": 200})``"""
    from lrngpt.runconfig.schema import RunConfig, config_from, read_config_dict

    items = _override_list(set) + _override_list(overrides)
    if isinstance(name_or_path, RunConfig):
        return config_from(name_or_path.to_dict(), items, "the config")
    if not isinstance(name_or_path, str | Path):
        raise UserError(f"config() takes a preset name, a .json path or a RunConfig, got {type(name_or_path).__name__}")
    return config_from(read_config_dict(str(name_or_path)), items, str(name_or_path))


def _as_config(cfg: RunConfig | str | Path) -> RunConfig:
    return cfg if not isinstance(cfg, str | Path) else config(cfg)


def plan(cfg: RunConfig | str | Path) -> dict:
    """What a run of `cfg` reads: training and validation tokens, tokens per step, the passes its
    train.steps make over the training text and the steps of one pass. Prepares (and caches) the data.

    Example: ``steps = lrngpt.plan(cfg)["one_pass_steps"]``"""
    from lrngpt.data.prepared import prepare
    from lrngpt.runconfig.schema import validated

    cfg = validated(_as_config(cfg))
    data = prepare(cfg.data)
    n_train, per_step = len(data.tokens("train")), cfg.train.tokens_per_step
    return {"corpus": cfg.data.corpus, "train_tokens": n_train, "val_tokens": len(data.tokens("val")),
            "tokens_per_step": per_step, "steps": cfg.train.steps,
            "passes": cfg.train.steps * per_step / max(1, n_train), "one_pass_steps": max(1, n_train // per_step)}


def train(config: RunConfig | str | Path | None, out: str | Path, resume: bool = False, force: bool = False,
          on_metric: MetricCallback | None = None, steps: int | None = None,
          progress: bool | None = None) -> Run:
    """Train `config` into the run directory `out` (what `lrn train --config ... --out OUT` does); a Run.

    The config is checked again first, so a field changed after it was built fails as --set
    would. `resume=True` continues `out` from its last checkpoint (config None: the run's own);
    `force=True` replaces an earlier run there; `steps` stops at that global step (the schedule
    follows train.steps); `on_metric(row)` gets every row as it is written to metrics.jsonl.
    A progress bar shows in a notebook or on a terminal; log lines go to the "lrngpt" logger.

    Example: ``run = lrngpt.train(lrngpt.config("mlp-tiny"), out="runs/tiny", on_metric=print)``"""
    from lrngpt.store.rundir import RunDir
    from lrngpt.training.trainer import train as train_run

    if config is None:
        if not resume:
            raise UserError("give a config (lrngpt.config(NAME)); only resume=True may leave it out")
        RunDir(out).check_is_run()
        cfg = RunDir(out).config()
    else:
        cfg = _as_config(config)
    train_run(cfg, out, resume=resume, force=force, stop_at=steps, progress=progress, on_metric=on_metric)
    return Run(out)


def load(path: str | Path, checkpoint: str = "last", device: str = "cpu") -> Run:
    """A finished or running run directory (`lrn train --out`) with the weights `checkpoint`:
    last, best (the best periodic val bpb) or init (untrained). Weights load on first use.

    Example: ``best = lrngpt.load("runs/mlp64", checkpoint="best"); best.eval()["val_bpb"]``"""
    return Run(path, checkpoint, device)


def sweep(name: str | Path, scale: str | None = "tiny", *, out: str | Path, set: Overrides = None,
          axes: Mapping[str, list] | Iterable[str] | None = None, on_metric: MetricCallback | None = None,
          progress: bool | None = None, minutes: float | None = None) -> Sweep:
    """Run a sweep (`lrn sweep NAME --scale SCALE --out OUT`): a study preset (embed-dim, embed-dim-long,
    embed-dim-small-data, seed-variance) or a sweep file; finished points are skipped, killed ones resumed.

    `set` overrides base config keys as in config(); `axes` replaces axes, {"model.n_embd": [8, 64]};
    `on_metric(row)` gets every run's metrics rows, the point's name under "run". scale None: the
    machine's default (full with a CUDA GPU, else cpu); `minutes` plans the study for that budget
    instead, as `lrn sweep --minutes` does (the scale is then the plan's).

    Example: ``sw = lrngpt.sweep("embed-dim", scale="tiny", out="runs/widths", set={"train.steps": 20})``"""
    from lrngpt.experiments.runner import resolve_sweep, run_sweep

    if isinstance(axes, Mapping):
        axes = [f"{key}={','.join(json.dumps(v) for v in values)}" for key, values in axes.items()]
    budget = None
    if minutes is not None:  # `lrn sweep --minutes`: the same plan
        from lrngpt.experiments.budget import resolve_budget

        budget = resolve_budget(str(name), minutes, None, _override_list(set), list(axes or []), Path(out))
    plan_sets, plan_axes = budget.items() if budget is not None else ([], [])
    resolved = resolve_sweep(str(name), "budget" if budget else scale, _override_list(set) + plan_sets,
                             list(axes or []) + plan_axes, out=Path(out))
    resolved.budget = budget.record() if budget else None
    run_sweep(resolved, out, progress=progress, on_metric=on_metric)
    return Sweep(out)


def load_sweep(path: str | Path) -> Sweep:
    """A sweep directory (`lrn sweep --out`) as it is now, finished or not.

    Example: ``lrngpt.load_sweep("runs/embed-dim").table``"""
    return Sweep(path)
