"""Experiment trackers: the training metric stream, also sent to TensorBoard, W&B, MLflow or a CSV file.

`train.logger` names them (validated in lrngpt.runconfig.schema.parse_loggers) (`none`, or any of `tensorboard,wandb,mlflow,csv`, comma-separated;
`train.tensorboard=true` still adds TensorBoard). Every tracker is fed from the one stream of rows
the Trainer writes to metrics.jsonl (`Trainer.metric`), so they all hold the same numbers, under
grouped tags: `train/loss`, `train/bpb`, `train/lr`, `train/tokens_per_s`, `val/bpb`, `val/loss`,
`final/val_bpb`, `final/train_bpb`.

A resumed run continues its tracker runs and never shows a step twice:
- TensorBoard (`RUN_DIR/tensorboard`): the writer opens with `purge_step` = the checkpoint's step
  + 1, so TensorBoard drops what a killed run wrote past its checkpoint, as metrics.jsonl does; the
  writer is flushed before each checkpoint, so nothing up to a checkpoint is lost to a kill.
- W&B and MLflow keep their run id in `RUN_DIR/trackers.json` and continue that run. Their
  history is append-only, so a step they already hold is not sent again (resume is bit-exact
  on CPU: it would carry the same numbers).
- CSV (`RUN_DIR/metrics.csv`, one `step,tag,value` row per number) is cut back like metrics.jsonl.

A sweep point logs its swept keys as hyperparameters (TensorBoard's HPARAMS tab, W&B's config,
MLflow's params, beside the whole config). W&B reads its usual environment (`WANDB_PROJECT`,
default `lrn-gpt`; `WANDB_MODE=offline`); MLflow its tracking URI and experiment
(`MLFLOW_TRACKING_URI`, `MLFLOW_EXPERIMENT_NAME`, default `lrn-gpt`).
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

from lrngpt.core.fsio import atomic_write, read_json_object, write_json
from lrngpt.errors import UserError
from lrngpt.store.rundir import METRICS_CSV as CSV
from lrngpt.store.rundir import TRACKERS as STATE

EXTRA = {"tensorboard": ("tensorboard", "tensorboard"), "wandb": ("wandb", "wandb"),
         "mlflow": ("mlflow", "mlflow")}  # logger: (module, extra of lrngpt that brings it)


def tags(row: dict) -> dict[str, float]:
    """A metrics.jsonl row as grouped tags: train/..., val/..., final/... (numbers only)."""
    final = bool(row.get("final"))
    out = {}
    for key, value in row.items():
        if key in ("step", "final") or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if final:
            out[f"final/{key}"] = float(value)
        else:
            group = "val" if key.startswith("val_") else "train"
            out[f"{group}/{key.removeprefix(group + '_')}"] = float(value)
    return out


def flat_config(d: dict, prefix: str = "") -> dict:
    """{"model": {"n_embd": 64}} -> {"model.n_embd": 64}: how the trackers name hyperparameters."""
    out = {}
    for key, value in d.items():
        if isinstance(value, dict):
            out.update(flat_config(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _import(name: str):
    import importlib

    module, extra = EXTRA[name]
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UserError(f"train.logger {name} needs the {module} package: pip install 'lrngpt[{extra}]'") from None


class _TensorBoard:
    def __init__(self, run_dir: Path, resume_step: int | None, hparams: dict):
        _import("tensorboard")
        from torch.utils.tensorboard import SummaryWriter

        # purge_step: TensorBoard drops every event at or past it that an earlier writer left
        self.writer = SummaryWriter(log_dir=str(run_dir / "tensorboard"),
                                    purge_step=None if resume_step is None else resume_step + 1)
        if hparams and resume_step is None:
            from torch.utils.tensorboard.summary import hparams as hparams_summary

            # the HPARAMS tab: the swept keys of this point against its val bpb (written to this run's
            # own event file, not to the sub-directory add_hparams would make)
            for summary in hparams_summary({k: _scalar(v) for k, v in hparams.items()},
                                           {"val/bpb": 0.0, "final/val_bpb": 0.0}):
                self.writer.file_writer.add_summary(summary)

    def log(self, step: int, values: dict) -> None:
        for tag, value in values.items():
            self.writer.add_scalar(tag, value, step)

    def flush(self) -> None:
        self.writer.flush()

    def close(self, failed: bool) -> None:
        self.writer.close()


def _scalar(value):
    """A value TensorBoard's hparams take: numbers, strings and bools as they are, anything else as JSON."""
    return value if isinstance(value, int | float | str | bool) else json.dumps(value)


class _WandB:
    def __init__(self, run_dir: Path, state: dict, config: dict, hparams: dict, name: str, fresh: bool):
        wandb = _import("wandb")
        saved = state.get("wandb") or {}
        self.run = wandb.init(
            project=os.environ.get("WANDB_PROJECT") or "lrn-gpt", name=name, dir=str(run_dir),
            id=saved.get("id"), resume="allow",  # no id: W&B makes one, kept for a resume
            config={**flat_config(config), **({"swept": sorted(hparams)} if hparams else {})} if fresh else None)
        # W&B drops a step below the one it holds; skip them ourselves (online it knows its last step,
        # offline the one we saved at the last checkpoint)
        self.done = max(int(saved.get("last_step", -1)), int(getattr(self.run, "step", 0) or 0) - 1)
        self.last = self.done
        state["wandb"] = {"id": self.run.id, "last_step": self.done}
        self.state = state

    def log(self, step: int, values: dict) -> None:
        if step <= self.done:
            return
        self.run.log(values, step=step)
        self.last = max(self.last, step)

    def flush(self) -> None:
        self.state["wandb"]["last_step"] = self.last

    def close(self, failed: bool) -> None:
        self.flush()
        self.run.finish(exit_code=1 if failed else 0)


class _MLflow:
    def __init__(self, state: dict, config: dict, hparams: dict, name: str, fresh: bool):
        mlflow = _import("mlflow")
        from mlflow.tracking import MlflowClient

        try:
            self.client = MlflowClient()
            run_id = (state.get("mlflow") or {}).get("run_id")
            run = self._existing(run_id) if run_id else None
            if run is None:
                exp_name = os.environ.get("MLFLOW_EXPERIMENT_NAME") or "lrn-gpt"
                exp = self.client.get_experiment_by_name(exp_name)
                exp_id = exp.experiment_id if exp else self.client.create_experiment(exp_name)
                run = self.client.create_run(exp_id, run_name=name, tags={"lrn.swept": ",".join(sorted(hparams))}
                                             if hparams else None)
                fresh = True
            self.run_id = run.info.run_id
            if fresh:
                params = {**flat_config(config), **{f"swept.{k}": v for k, v in hparams.items()}}
                items = [mlflow.entities.Param(k, json.dumps(v) if not isinstance(v, str) else v)
                         for k, v in params.items()]
                for i in range(0, len(items), 100):  # MLflow takes at most 100 params a batch
                    self.client.log_batch(self.run_id, params=items[i:i + 100])
            else:
                self.client.update_run(self.run_id, status="RUNNING")
            # append-only history: the steps it already holds, per tag, are not sent again
            self.done = {k: max((m.step for m in self.client.get_metric_history(self.run_id, k)), default=-1)
                         for k in run.data.metrics} if not fresh else {}
        except (mlflow.exceptions.MlflowException, ImportError) as e:  # ImportError: a store's driver
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise UserError(f"train.logger mlflow: {first}; set MLFLOW_TRACKING_URI to your tracking server "
                            "or a store that MLflow accepts") from None
        self.metric = mlflow.entities.Metric
        state["mlflow"] = {"run_id": self.run_id, "tracking_uri": self.client.tracking_uri}

    def _existing(self, run_id: str):
        try:
            return self.client.get_run(run_id)
        except Exception:  # another tracking URI: MLflow raises its own error or a store's
            return None

    def log(self, step: int, values: dict) -> None:
        import time

        now = int(time.time() * 1000)
        metrics = [self.metric(k, v, now, step) for k, v in values.items() if step > self.done.get(k, -1)]
        if metrics:
            self.client.log_batch(self.run_id, metrics=metrics)

    def flush(self) -> None:
        pass

    def close(self, failed: bool) -> None:
        self.client.set_terminated(self.run_id, status="FAILED" if failed else "FINISHED")


class _CSV:
    def __init__(self, run_dir: Path, resume_step: int | None):
        self.path = run_dir / CSV
        if resume_step is not None and self.path.exists():  # cut back like metrics.jsonl
            with open(self.path, newline="", encoding="utf-8") as f:
                rows = list(csv.reader(f))[1:]
            keep = [r for r in rows if len(r) == 3 and int(r[0]) <= resume_step and not r[1].startswith("final/")]
            atomic_write(self.path, _csv_text([["step", "tag", "value"], *keep]))
        elif resume_step is None or not self.path.exists():
            atomic_write(self.path, _csv_text([["step", "tag", "value"]]))
        self.file = open(self.path, "a", newline="", encoding="utf-8")
        self.writer = csv.writer(self.file)

    def log(self, step: int, values: dict) -> None:
        self.writer.writerows([step, tag, repr(v)] for tag, v in values.items())

    def flush(self) -> None:
        self.file.flush()

    def close(self, failed: bool) -> None:
        self.file.close()


def _csv_text(rows: list[list]) -> str:
    buf = io.StringIO()
    csv.writer(buf).writerows(rows)
    return buf.getvalue()


class Trackers:
    """The trackers of one run, fed one metrics row at a time (`log`); `flush` before a checkpoint."""

    def __init__(self, names: tuple[str, ...] = (), run_dir: str | Path | None = None, config: dict | None = None,
                 resume_step: int | None = None, hparams: dict | None = None, name: str = ""):
        self.sinks, self.closed = [], False
        if not names:
            return
        run_dir = Path(run_dir)
        self.state_path = run_dir / STATE
        self.state = read_json_object(self.state_path, "tracker state") \
            if resume_step is not None and self.state_path.exists() else {}
        hparams, config, fresh = dict(hparams or {}), config or {}, resume_step is None
        try:
            for n in names:
                if n == "tensorboard":
                    self.sinks.append(_TensorBoard(run_dir, resume_step, hparams))
                elif n == "wandb":
                    self.sinks.append(_WandB(run_dir, self.state, config, hparams, name, fresh))
                elif n == "mlflow":
                    self.sinks.append(_MLflow(self.state, config, hparams, name, fresh))
                elif n == "csv":
                    self.sinks.append(_CSV(run_dir, resume_step))
            self._save_state()
        except BaseException:
            self.close(failed=True)
            raise

    def _save_state(self) -> None:
        if self.state:
            write_json(self.state_path, self.state)

    def log(self, row: dict) -> None:
        values = tags(row)
        for sink in self.sinks:
            sink.log(int(row["step"]), values)

    def flush(self) -> None:
        """Called before each checkpoint: what the trackers hold then matches what a resume restarts from."""
        for sink in self.sinks:
            sink.flush()
        if self.sinks:
            self._save_state()

    def close(self, failed: bool = False) -> None:
        if self.closed:
            return
        self.closed = True
        for sink in self.sinks:
            sink.close(failed)
        if self.sinks:
            self._save_state()
