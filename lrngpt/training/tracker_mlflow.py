"""MLflow for train.logger: one MLflow run per lrn run; a resume asks the store for each tag's history
and sends only what it lacks. `check` finds what would stop MLflow before the run directory is taken.
"""

from __future__ import annotations

import json
import os
import socket
import time
from unittest import mock
from urllib.parse import unquote, urlparse

from lrngpt.core.fsio import check_output
from lrngpt.errors import UserError
from lrngpt.training.tracker_wandb import first_line

CONNECT_TIMEOUT = 10  # seconds for each of a server's first answers
DATABASES = ("sqlite", "postgresql", "mysql", "mssql")  # MLflow reads these through SQLAlchemy (and Alembic)
LOCAL = "MLFLOW_TRACKING_URI=sqlite:///mlflow.db"  # the store to suggest: a local database, no server


def _describe(e: BaseException) -> str:
    """MLflow's error in a few words: a server that did not answer is said so, not as urllib3's retry log."""
    text = str(e).lower()
    if "api request to" not in text:
        return first_line(e)
    if "timed out" in text or "timeout" in text:
        return f"the tracking server did not answer within {_timeout():g}s"
    return f"the request to the tracking server failed ({'connection refused' if 'refused' in text else first_line(e)[:120]})"


def check() -> str:
    """The tracking URI MLflow will use, once what would stop it at its start is ruled out."""
    import mlflow

    uri = mlflow.get_tracking_uri()  # MLFLOW_TRACKING_URI, or MLflow's default (sqlite:///mlflow.db here)
    parsed = urlparse(uri)
    scheme = parsed.scheme.split("+")[0]
    if scheme in DATABASES:
        for module in ("sqlalchemy", "alembic"):
            try:
                __import__(module)
            except ImportError:
                raise UserError(f"train.logger mlflow: the tracking URI {uri} is a database, which MLflow opens "
                                f"through SQLAlchemy and Alembic ({module} is missing): pip install "
                                "'lrngpt[mlflow]' (it brings both), or set MLFLOW_TRACKING_URI to a tracking "
                                "server") from None
        if scheme == "sqlite":
            path = unquote(uri.partition(":///")[2])
            if path and path != ":memory:":
                _local(path, "file")
    elif scheme in ("", "file"):
        allow = getattr(__import__("mlflow.environment_variables").environment_variables,
                        "MLFLOW_ALLOW_FILE_STORE", None)
        if allow is not None and not allow.get():
            raise UserError(f"train.logger mlflow: the tracking URI {uri} is a file store, which MLflow "
                            f"{mlflow.__version__} opens only with MLFLOW_ALLOW_FILE_STORE=true; set that, or use "
                            f"a database: {LOCAL}")
        _local(unquote(parsed.path) if scheme else uri, "dir")
    elif scheme in ("http", "https"):
        _reach(uri, parsed)
    return uri


def _local(path: str, kind: str) -> None:
    """A local store's path that cannot be one (a file above it, a directory where the database goes)."""
    try:
        check_output(path, kind, flag="MLFLOW_TRACKING_URI", example="mlflow.db")
    except UserError as e:
        raise UserError(f"train.logger mlflow: {e.text}") from None


def _reach(uri: str, parsed) -> None:
    """A tracking server that takes no connection is told at once, not after MLflow's minutes of retries."""
    try:
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        socket.create_connection((parsed.hostname or "", port), timeout=_timeout()).close()
    except (OSError, ValueError) as e:  # refused, unreachable, no such host, timed out; a bad port
        raise UserError(f"train.logger mlflow: cannot reach the tracking server {uri} ({getattr(e, 'strerror', None) or e} within "
                        f"{_timeout():g}s); start it or fix MLFLOW_TRACKING_URI, or use a local store: {LOCAL}") from None


def _timeout() -> float:
    try:
        return float(os.environ.get("MLFLOW_HTTP_REQUEST_TIMEOUT") or CONNECT_TIMEOUT)
    except ValueError:
        return CONNECT_TIMEOUT


def _quick_answers():
    """A server's first answers within CONNECT_TIMEOUT, no retries (unless the user set MLflow's own)."""
    return mock.patch.dict(os.environ, {
        "MLFLOW_HTTP_REQUEST_TIMEOUT": os.environ.get("MLFLOW_HTTP_REQUEST_TIMEOUT") or str(CONNECT_TIMEOUT),
        "MLFLOW_HTTP_REQUEST_MAX_RETRIES": os.environ.get("MLFLOW_HTTP_REQUEST_MAX_RETRIES") or "0"})


class MLflowSink:
    def __init__(self, saved: dict, params: dict, swept: list[str], name: str, sent: list[tuple[int, dict]]):
        """The MLflow run `saved` names (its id, or the token it was tagged with before a kill), else a new
        one, its id and tracking URI then added to `saved`; sent what the store lacks of `sent` (the rows
        a resume restarts from)."""
        import mlflow
        from mlflow.tracking import MlflowClient

        uri = check()
        self.metric = mlflow.entities.Metric
        try:
            with _quick_answers():
                self.client = MlflowClient(tracking_uri=uri)
                exp_name = os.environ.get("MLFLOW_EXPERIMENT_NAME") or "lrn-gpt"
                exp = self.client.get_experiment_by_name(exp_name)
                exp_id = exp.experiment_id if exp else self.client.create_experiment(exp_name)
                token = saved.get("token")
                run = self._find(exp_id, saved.get("run_id"), token)
                if run is None:
                    run_tags = {**({"lrn.token": token} if token else {}),
                                **({"lrn.swept": ",".join(swept)} if swept else {})}
                    run = self.client.create_run(exp_id, run_name=name, tags=run_tags or None)
                else:
                    self.client.update_run(run.info.run_id, status="RUNNING")
                self.run_id = run.info.run_id
                # the config as params (those a killed start did not get to); MLflow never changes a param
                items = [mlflow.entities.Param(k, v if isinstance(v, str) else json.dumps(v))
                         for k, v in params.items() if k not in run.data.params]
                for i in range(0, len(items), 100):  # MLflow takes at most 100 params a batch
                    self.client.log_batch(self.run_id, params=items[i:i + 100])
                self.held = {tag: {m.step for m in self.client.get_metric_history(self.run_id, tag)}
                             for tag in {*(tag for _, values in sent for tag in values), *run.data.metrics}}
        except (mlflow.exceptions.MlflowException, ImportError, OSError, ValueError) as e:  # ImportError: a driver
            raise UserError(f"train.logger mlflow: {_describe(e)}; check MLFLOW_TRACKING_URI ({uri}) and that "
                            f"its server answers, or use a local store: {LOCAL}") from None
        saved.update(run_id=self.run_id, tracking_uri=uri)  # for trackers.json
        self._send(sent)

    def _find(self, exp_id: str, run_id: str | None, token: str | None):
        """The run `run_id` names (None: not in this store, another tracking URI), else the one a start
        killed before it kept the run's id made (tagged with the `token` kept before)."""
        if run_id:
            try:
                return self.client.get_run(run_id)
            except Exception:  # MLflow raises its own error or a store's
                return None
        found = self.client.search_runs([exp_id], filter_string=f"tags.`lrn.token` = '{token}'", max_results=1)
        return found[0] if found else None

    def log(self, step: int, values: dict) -> None:
        self._send([(step, values)])

    def _send(self, rows: list[tuple[int, dict]]) -> None:
        """The (tag, step) pairs of `rows` that the store lacks, in batches of MLflow's largest."""
        now = int(time.time() * 1000)
        metrics = [self.metric(k, v, now, step) for step, values in rows for k, v in values.items()
                   if step not in self.held.get(k, ())]
        for i in range(0, len(metrics), 1000):
            self.client.log_batch(self.run_id, metrics=metrics[i:i + 1000])

    def flush(self) -> None:
        pass  # log_batch returned: the store holds it

    def close(self, failed: bool) -> None:
        self.client.set_terminated(self.run_id, status="FAILED" if failed else "FINISHED")

