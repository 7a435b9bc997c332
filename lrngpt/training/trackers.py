"""Experiment trackers (`train.logger`): the rows of metrics.jsonl also sent to TensorBoard, W&B,
MLflow or a CSV file, under grouped tags (`train/loss`, `val/bpb`, `final/val_bpb`...).

Each step once after any kill: a resume sends each tracker what it lacks of metrics.jsonl (each
module says how). W&B's and MLflow's run ids are kept in RUN_DIR/trackers.json before the tracker
run is made, so a kill leaves no second run; `complete` finishes the trackers of a run killed after
its last step.
"""

from __future__ import annotations

import csv
import importlib
import io
import os
import secrets
from pathlib import Path
from typing import Any

from lrngpt.core.fsio import atomic_write, damaged, read_json_object, user_path, write_json
from lrngpt.core.validate import show_value
from lrngpt.errors import UserError
from lrngpt.runconfig.schema import RunConfig, flat_keys
from lrngpt.store.layout import METRICS_CSV as CSV
from lrngpt.store.layout import TRACKERS as STATE
from lrngpt.store.rundir import RunDir
from lrngpt.training import tracker_mlflow, tracker_wandb
from lrngpt.training.tracker_mlflow import MLflowSink
from lrngpt.training.tracker_tensorboard import TensorBoardSink
from lrngpt.training.tracker_wandb import ID, WandBSink

MAX_STATE_BYTES = 1 << 20  # trackers.json holds two ids and a URI; anything near this was not written by lrn


def tags(row: dict) -> dict[str, float]:
    """A metrics.jsonl row as grouped tags: train/..., val/..., final/... (numbers only)."""
    out = {}
    for key, value in row.items():
        if key in ("step", "final") or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        group = "final" if row.get("final") else "val" if key.startswith("val_") else "train"
        out[f"{group}/{key if group == 'final' else key.removeprefix(group + '_')}"] = float(value)
    return out


def check(names: tuple[str, ...]) -> None:
    """What would stop a tracker at its start (its package, its settings), found before any work."""
    for n in names:
        try:
            importlib.import_module(n)  # its package (and lrngpt extra) has its name; csv is the stdlib's
        except ImportError:
            raise UserError(f"train.logger {n} needs the {n} package: pip install 'lrngpt[{n}]'") from None
        if n in ("wandb", "mlflow"):  # then what its settings would refuse
            (tracker_wandb if n == "wandb" else tracker_mlflow).check()


# ---- trackers.json ----------------------------------------------------------------------------

def read_state(path: Path) -> dict:
    """RUN_DIR/trackers.json, checked: what a hand edit broke is named, and no id can reach a path."""
    if not (path.exists() or path.is_symlink()):
        return {}
    with user_path(path, "tracker state"):
        size = path.stat().st_size
    if size > MAX_STATE_BYTES:
        raise damaged(path, "tracker state", f"{size:,} bytes, not the small file lrn writes")
    state = read_json_object(path, "tracker state", own=True)
    for key, fields in (("wandb", {"id": ID}), ("mlflow", {"run_id": ID, "token": ID, "tracking_uri": None})):
        entry = state.get(key)
        if entry is not None and not isinstance(entry, dict):
            raise damaged(path, "tracker state", f"{key} must be an object, got {show_value(entry)}")
        for name, pattern in fields.items():
            value = (entry or {}).get(name)
            if value is not None and (not isinstance(value, str) or len(value) > 4096
                                      or (pattern and not pattern.fullmatch(value))):
                what = "a run id (letters, digits, - and _)" if pattern else "a string"
                raise damaged(path, "tracker state", f"{key}.{name} must be {what}, got {show_value(value)}")
    finished = state.get("finished")
    if finished is not None and (not isinstance(finished, int) or isinstance(finished, bool) or finished < 0):
        raise damaged(path, "tracker state", f"finished must be a step, got {show_value(finished)}")
    return state


# ---- CSV --------------------------------------------------------------------------------------

class _CSV:
    def __init__(self, run_dir: Path, rows: list[tuple[int, dict]]):
        """RUN_DIR/metrics.csv, written again from `rows` (metrics.jsonl, cut back to a resume's checkpoint)."""
        self.path = run_dir / CSV
        if self.path.is_dir():
            raise UserError(f"{self.path} is a directory; lrn writes the rows of train.logger csv to that file: "
                            "move the directory away and run the command again")
        text = io.StringIO()  # (replaced in one rename: a kill while it is written leaves the earlier file)
        csv.writer(text).writerows([["step", "tag", "value"],
                                    *([step, tag, repr(v)] for step, row in rows for tag, v in row.items())])
        atomic_write(self.path, text.getvalue())
        with user_path(self.path, "CSV tracker file"):
            self.file = open(self.path, "a", newline="", encoding="utf-8")  # noqa: SIM115 - open for the run
        self.writer = csv.writer(self.file)

    def log(self, step: int, values: dict) -> None:
        with user_path(self.path, "CSV tracker file"):
            self.writer.writerows([step, tag, repr(v)] for tag, v in values.items())

    def flush(self) -> None:
        with user_path(self.path, "CSV tracker file"):
            self.file.flush()

    def close(self, failed: bool) -> None:
        self.file.close()


# ---- all of them --------------------------------------------------------------------------------

class Trackers:
    """The trackers of one run, fed one metrics row at a time (`log`); `flush` before a checkpoint. `rows`:
    on a resume, the rows of metrics.jsonl up to `resume_step`, sent to the trackers that lack them."""

    def __init__(self, names: tuple[str, ...] = (), run_dir: Path | None = None, config: dict | None = None,
                 resume_step: int | None = None, hparams: dict | None = None, name: str = "",
                 rows: list[dict] | None = None):
        self.sinks: list[Any] = []  # TensorBoardSink, WandBSink, MLflowSink, _CSV: log, flush, close
        self.closed, self.state = False, {}
        if not names:
            return
        assert run_dir is not None  # a run with trackers has its directory
        self.state_path = run_dir / STATE
        self.state = read_state(self.state_path) if resume_step is not None else {}
        if self.state.pop("finished", None) is not None:  # until these trackers close after the run's last step
            self._save_state()
        hparams = hparams or {}
        config = flat_keys(config or {})
        sent = [] if resume_step is None else [(int(r["step"]), tags(r)) for r in rows or () if int(r["step"]) <= resume_step]
        try:
            for n in names:
                if n == "tensorboard":
                    self.sinks.append(TensorBoardSink(run_dir, resume_step, hparams, sent))
                elif n == "wandb":
                    swept = {"swept": sorted(hparams)} if hparams else {}
                    given = os.environ.get("WANDB_RUN_ID") or ""  # else 8 characters, as W&B's
                    kept = self._kept("wandb", "id", given if ID.fullmatch(given) else secrets.token_hex(4))
                    self.sinks.append(WandBSink(run_dir, kept["id"], {**config, **swept}, name, sent))
                elif n == "mlflow":
                    params = {**config, **{f"swept.{k}": v for k, v in hparams.items()}}
                    kept = self._kept("mlflow", "token", secrets.token_hex(8))
                    self.sinks.append(MLflowSink(kept, params, sorted(hparams), name, sent))
                    self._save_state()  # (the sink wrote its run's id into its part)
                elif n == "csv":
                    self.sinks.append(_CSV(run_dir, sent))
        except BaseException:
            self.close(failed=True)
            raise

    def _kept(self, key: str, field: str, new: str) -> dict:
        """`key`'s part of trackers.json, `field` (else `new`) saved before the tracker makes its run:
        W&B's run id (a resume finds the same run), MLflow's token (a run made before a kill kept its id)."""
        kept = self.state[key] = self.state.get(key) or {}
        if not kept.get(field) and not kept.get("run_id"):
            kept[field] = new
            self._save_state()
        return kept

    def _save_state(self) -> None:
        if self.state or self.state_path.exists():
            write_json(self.state_path, self.state)

    def log(self, row: dict) -> None:
        values = tags(row)
        for sink in self.sinks:
            sink.log(int(row["step"]), values)

    def flush(self) -> None:
        """Called before each checkpoint: what the trackers hold then matches what a resume restarts from."""
        for sink in self.sinks:
            sink.flush()

    def close(self, failed: bool = False, finished: int | None = None) -> None:
        """Close every tracker (each one, whatever another raised; the first error is raised); `finished`:
        the run's last step, recorded once all of them closed."""
        if self.closed:
            return
        self.closed = True
        error: BaseException | None = None
        for sink in self.sinks:
            try:
                sink.close(failed)
            except BaseException as e:  # the others close too; the first error is the one raised
                error = error or e
        if error is not None:
            raise error
        if self.sinks and finished is not None and not failed:
            self.state["finished"] = finished
            self._save_state()


def complete(cfg: RunConfig, run: RunDir, step: int, log) -> None:
    """A finished run whose trackers were not closed (a kill after its last step): send them what they
    lack of metrics.jsonl and close them."""
    names = cfg.train.loggers
    if not names or read_state(run.path / STATE).get("finished") == step:
        return
    check(names)
    run.lock()
    try:
        trackers = Trackers(names, run.path, cfg.to_dict(), resume_step=step, name=cfg.name or run.path.name,
                            rows=run.metrics())
        trackers.close(finished=step)
    finally:
        run.unlock()
    log(f"trackers ({', '.join(names)}): sent what they lacked of the finished run and closed them")
