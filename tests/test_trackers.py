"""train.logger: TensorBoard, CSV, W&B (offline) and MLflow (a local file store) get the rows of
metrics.jsonl under grouped tags. A run fed to all four is SIGKILLed at seeded random moments (past
a checkpoint, in the middle of training, while its trackers close) and resumed each time: read back
from each tracker's own files (W&B's transaction logs, MLflow's store, TensorBoard's event files
through its loaders and record by record, metrics.csv), every step is there exactly once, with the
numbers of metrics.jsonl. A sweep point's swept keys are its hyperparameters. No test reaches the
network."""

from __future__ import annotations

import csv
import json
import os
import random
import signal
import struct
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pytest

from lrngpt.errors import UserError
from lrngpt.runconfig.schema import load_config
from lrngpt.training.trackers import tags
from lrngpt.training.trainer import train_run
from tests.cli_run import GATE, HUNG

ROOT = Path(__file__).parents[1]
STEPS, EVAL = 12, 4
KILL_STEPS, KILL_EVAL = 120, 20  # the killed run: a checkpoint every 20 steps, a metrics row every step


def rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def expected(run: Path) -> dict[str, list[tuple[int, float]]]:
    """What metrics.jsonl says each tag holds: [(step, value)] in step order."""
    out: dict[str, list] = {}
    for r in rows(run):
        for tag, value in tags(r).items():
            out.setdefault(tag, []).append((r["step"], value))
    return out


def assert_once_and_equal(got: dict[str, list], want: dict[str, list], rel: float, timing: bool = True) -> None:
    """Every tag holds each of metrics.jsonl's steps exactly once, with its number. `timing=False`: an
    append-only tracker keeps what a killed run sent past its checkpoint, the same numbers (resume is
    bit-exact) but for train/tokens_per_s, a timing, whose steps alone are compared."""
    assert set(got) == set(want)
    for tag, points in want.items():
        assert sorted(s for s, _ in got[tag]) == [s for s, _ in points], tag  # each step once, none missing
        if timing or tag != "train/tokens_per_s":
            assert sorted(got[tag]) == [(s, pytest.approx(v, rel=rel)) for s, v in points], tag


@pytest.fixture
def cfg(tiny_config):
    def make(logger: str):
        return tiny_config(f"train.steps={STEPS}", f"train.eval_every={EVAL}", "train.log_every=1",
                           f"train.logger={logger}")
    return make


def test_logger_names_are_validated_and_tensorboard_true_is_an_alias(tiny_config):
    assert tiny_config().train.loggers == ()
    assert tiny_config("train.logger=csv,tensorboard,csv").train.loggers == ("csv", "tensorboard")
    assert tiny_config("train.tensorboard=true").train.loggers == ("tensorboard",)
    assert tiny_config("train.logger=csv", "train.tensorboard=true").train.loggers == ("csv", "tensorboard")
    assert tiny_config("train.logger=all").train.loggers == ("tensorboard", "wandb", "mlflow", "csv")
    listed = tiny_config('train.logger=["tensorboard", "csv"]')  # a list, as a JSON or YAML config gives it
    assert listed.train.loggers == ("tensorboard", "csv") and listed.train.logger == "tensorboard,csv"
    for bad, message in (("tensorbord", "unknown logger 'tensorbord'"), ("none,csv", "none stands alone"),
                         ("all,csv", "all stands alone"), ("csv,", "an empty logger name"),
                         ("", "an empty logger name"), ("[]", "a list of logger names"),
                         ('["csv", 3]', "a list of logger names"), ('["csv,tensorboard"]', "a list of logger names")):
        with pytest.raises(UserError, match="train.logger") as e:
            tiny_config(f"train.logger={bad}")
        assert message in str(e.value) and "tensorboard, wandb, mlflow, csv" in str(e.value), str(e.value)


# ---- SIGKILL at seeded random moments, then resume ----------------------------------------------

# A warm interpreter that forks each `lrn` run: the imports (torch, W&B, MLflow, TensorBoard: some 10 s
# of CPU) are paid once, not once per killed process. Nothing in it has started a thread or a tracker.
# A run's gate (tests.cli_run.GATE, installed in the child before main) holds it at one moment for its SIGKILL.
FORK_SERVER = GATE + r"""
import importlib, json, os, sys
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
from lrngpt.cli.main import main

for line in sys.stdin:
    argv, err, gate = json.loads(line)
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
        os.dup2(os.open(os.devnull, os.O_RDWR), 1)
        code = 1
        try:
            if gate:
                install(gate["at"], eval(gate["when"]), gate.get("after", False), err + ".held")
                os.environ.update(gate.get("env", {}))
            code = main(argv)
        finally:
            sys.stderr.flush()
            os._exit(code)
    print(pid, flush=True)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""
WARM = ["torch", "torch._dynamo", "lrngpt.cli.main", "lrngpt.api", "lrngpt.training.trainer", "wandb",
        "wandb.sdk.wandb_run", "wandb.sdk.launch.inputs.internal", "mlflow", "mlflow.tracking", "mlflow.genai",
        "torch.utils.tensorboard", "tensorboard.backend.event_processing.event_file_loader"]


class WarmLrn:
    """`run(argv, ready, gate)`: one `lrn ARGV` forked from the warm interpreter, `gate` installed in it;
    SIGKILLed the moment `ready(stderr lines, held at its gate)` is true (None: it runs to its end).
    Returns (exit code, stderr lines)."""

    def __init__(self, env: dict, tmp: Path):
        self.tmp, self.n = tmp, 0
        self.server = subprocess.Popen([sys.executable, "-c", FORK_SERVER, *WARM], env=env, text=True,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def run(self, argv: list[str], ready, gate: dict | None = None) -> tuple[int, list[str]]:
        self.n += 1
        err = self.tmp / f"stderr-{self.n}.txt"
        held = Path(f"{err}.held")
        self.server.stdin.write(json.dumps([argv, str(err), gate]) + "\n")
        self.server.stdin.flush()
        pid = int(self.server.stdout.readline())
        answer: list[str] = []
        waiter = threading.Thread(target=lambda: answer.append(self.server.stdout.readline()), daemon=True)
        waiter.start()
        t0 = time.monotonic()
        while waiter.is_alive():  # for as long as the child runs, however slowly
            lines = err.read_text().splitlines(keepends=True) if err.exists() else []
            if ready is not None and ready(lines, held.exists()):
                os.kill(pid, signal.SIGKILL)
                break
            if time.monotonic() - t0 > HUNG:  # (only a child stuck for good)
                os.kill(pid, signal.SIGKILL)
                raise AssertionError(f"lrn {' '.join(argv)} hung: {''.join(lines[-5:])}")
            time.sleep(0.002)
        waiter.join()  # the fork server reports its exit
        assert answer, f"lrn {' '.join(argv)} did not end"
        return int(answer[0]), err.read_text().splitlines(keepends=True)

    def close(self) -> None:
        self.server.stdin.close()
        self.server.wait()  # (its stdin closed: it ends)


@pytest.fixture(scope="module")
def killed(text_corpus, tmp_path_factory):
    """One run fed to all four trackers, SIGKILLed before its first checkpoint (a stub: started again
    with the same command), in its training at a seeded random step (plus a random moment after that
    step's line), once W&B's log holds a step past the checkpoint, and once summary.json is written
    and its trackers are closing; each time continued with `lrn train --resume` (never --force), the
    last time to completion. Each kill but the random one lands at a gate where the run waits for it,
    and the random one has a gate a few steps on: no run ends before its kill, however slow the
    machine. Returns (run directory, environment, [(kill, exit code, last metrics step)])."""
    for module in ("tensorboard", "wandb", "mlflow"):
        pytest.importorskip(module)
    tmp = tmp_path_factory.mktemp("killed")
    run = tmp / "run"
    # no inherited W&B settings: an in-process wandb.init of an earlier test leaves WANDB_SERVICE (its
    # service's address, perhaps dead by now) in os.environ, and every child would try to reach it
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    env = {**inherited, "PYTHONPATH": str(ROOT), "WANDB_MODE": "offline", "WANDB_SILENT": "true",
           "WANDB_PROJECT": "lrn-test", "WANDB_DIR": str(tmp / "wandb-home"),
           "MLFLOW_TRACKING_URI": f"file://{tmp / 'mlruns'}", "MLFLOW_ALLOW_FILE_STORE": "true",
           "MLFLOW_EXPERIMENT_NAME": "lrn-test"}
    argv = ["train", "--config", "mlp-tiny", "--out", str(run), "--set", "train.logger=all"]
    for key, value in (("data.corpus", text_corpus), ("data.vocab_size", 300), ("train.steps", KILL_STEPS),
                       ("train.eval_every", KILL_EVAL), ("train.log_every", 1), ("train.eval_tokens", 500),
                       ("train.train_eval_tokens", 500), ("train.device", "cpu")):
        argv += ["--set", f"{key}={value}"]
    rng = random.Random(30)
    first = rng.randint(KILL_EVAL + 5, 2 * KILL_EVAL + 10)
    trainer = "lrngpt.training.trainer:Trainer."

    def at_step(step: int, delay: float):
        seen: list[float] = []

        def ready(lines, held):
            if not seen and any(line.startswith(f"step {step}/") for line in lines):
                seen.append(time.monotonic())
            return held or bool(seen) and time.monotonic() - seen[0] >= delay
        return ready

    earlier: list[set] = []  # the logs of the segments before this one

    def past_checkpoint(lines, held):
        """W&B's log of this segment holds a step past the last checkpoint: the steps a resume must not
        send again (after the issue's kill at 2,322, steps 2,001-2,310 were there twice)."""
        mine = sorted(set((run / "wandb").glob("offline-run-*/run-*.wandb")) - earlier[-1])
        evals = [int(line.split()[1].rstrip(":")) for line in lines if line.startswith("step ") and ": val bpb" in line]
        evals += [int(line.split()[-1]) for line in lines if line.startswith("resumed from ")]  # "... at step N"
        if not held or not evals or not mine:
            return False
        steps = [json.loads(i.value_json) for r in wandb_records(mine[-1]) if r.WhichOneof("record_type") == "history"
                 for i in r.history.item if (i.key or "/".join(i.nested_key)) == "_step"]
        return bool(steps) and max(steps) > max(evals) > 0

    def at_gate(lines, held):
        return held

    # (kill, its gate, when it lands). The W&B kill holds the run halfway to its next checkpoint, the
    # row of that step sent, while W&B's service (told to flush its log every 0.1 s, not every 15 s)
    # writes the steps past the checkpoint; the closing kill holds it as it closes W&B, TensorBoard closed.
    kills = [("before its first checkpoint", {"at": "lrngpt.store.rundir:RunDir.save_checkpoint",
                                              "when": "lambda *a, **k: True"}, at_gate),
             (f"step {first} + {1000 * (delay := rng.uniform(0, 0.05)):.0f} ms",
              {"at": trainer + "metric", "when": f"lambda self, row: 'loss' in row and row['step'] == {first + 5}"},
              at_step(first, delay)),
             ("W&B holds a step past the checkpoint",
              {"at": trainer + "metric", "after": True, "env": {"WANDB__TRANSACTION_LOG_FLUSH_INTERVAL": "0.1"},
               "when": f"lambda self, row: 'loss' in row and row['step'] % {KILL_EVAL} == {KILL_EVAL // 2}"},
              past_checkpoint),
             ("summary.json written, its trackers closing",
              {"at": "lrngpt.training.tracker_wandb:WandBSink.close", "when": "lambda *a, **k: True"}, at_gate),
             ("none", None, None)]
    seen = []
    lrn = WarmLrn(env, tmp)
    try:
        for what, gate, ready in kills:
            resume = any((run / n).exists() for n in ("ckpt_init.pt", "ckpt_last.pt"))  # never --force
            earlier.append(set((run / "wandb").glob("offline-run-*/run-*.wandb")))
            code, lines = lrn.run(argv + (["--resume"] if resume else []), ready, gate)
            assert code == (0 if ready is None else -signal.SIGKILL), (what, "".join(lines[-5:]))
            assert "summary.json" not in what or (run / "summary.json").exists()
            last = max((r["step"] for r in rows(run)), default=None) if (run / "metrics.jsonl").exists() else None
            seen.append((what, code, last))
    finally:
        lrn.close()
    assert "Traceback" not in "".join(lines)
    assert any("sent what they lacked of the finished run" in line for line in lines), lines[-3:]  # after kill 3
    return run, env, seen


def wandb_records(path: Path):
    """The records of a .wandb file, read as the format defines them (LevelDB's log: 32 KiB blocks of
    records with 7-byte headers holding a CRC-32 seeded with the record's type), up to the first record
    that is cut short or fails its checksum. (W&B 0.31 ships no Python reader of its own: `wandb sync`
    is in its Go service and needs a server.)"""
    from wandb.proto import wandb_internal_pb2

    data, pos, buf = path.read_bytes(), 7, b""
    assert data[:4] == b":W&B"
    while pos + 7 <= len(data):
        if 32768 - pos % 32768 < 7:  # a block's tail too short for a header is padding
            pos += 32768 - pos % 32768
            continue
        crc, size, kind = struct.unpack_from("<IHB", data, pos)
        payload = data[pos + 7:pos + 7 + size]
        if not 1 <= kind <= 4 or len(payload) < size or zlib.crc32(payload, zlib.crc32(bytes([kind]))) != crc:
            return
        buf += payload
        pos += 7 + size
        if kind in (1, 4):  # a whole record, or the last piece of one
            record = wandb_internal_pb2.Record()
            record.ParseFromString(buf)
            buf = b""
            yield record


def test_wandb_holds_each_step_once_after_kills_with_the_config_in_every_segment(killed):
    run, _, seen = killed
    state = json.loads((run / "trackers.json").read_text())
    files = sorted((run / "wandb").glob("offline-run-*/run-*.wandb"))
    assert len(files) >= 3 and all(f.name == f"run-{state['wandb']['id']}.wandb" for f in files), files  # one W&B run
    history: dict[str, list] = {}
    held = []  # per segment: how many history rows its log holds (a kill loses what W&B had not written)
    for f in files:
        configs, n = [], 0
        for r in wandb_records(f):
            kind = r.WhichOneof("record_type")
            if kind == "history":
                n += 1
                item = {i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in r.history.item}
                for tag, value in item.items():
                    if not tag.startswith("_"):
                        history.setdefault(tag, []).append((item["_step"], value))
            elif kind == "run":
                assert r.run.project == "lrn-test"
                configs.append({u.key: json.loads(u.value_json) for u in r.run.config.update})
        held.append(n)
        if n or f == files[-1]:  # every segment that holds history carries the lrn config, resumed ones too
            assert configs and configs[0]["train.steps"] == KILL_STEPS and configs[0]["train.logger"] == "all", f
    assert_once_and_equal(history, expected(run), rel=1e-9, timing=False)
    print("W&B history rows per segment:", held, "kills:", seen)


def test_mlflow_holds_each_step_once_after_kills_in_one_run_with_the_config(killed, monkeypatch):
    from mlflow.tracking import MlflowClient

    run, env, _ = killed
    state = json.loads((run / "trackers.json").read_text())["mlflow"]
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 opens a file store only with it
    client = MlflowClient(tracking_uri=env["MLFLOW_TRACKING_URI"])
    (only,) = client.search_runs([client.get_experiment_by_name("lrn-test").experiment_id])
    assert only.info.run_id == state["run_id"] and only.info.status == "FINISHED"
    got = {tag: [(m.step, m.value) for m in client.get_metric_history(only.info.run_id, tag)]
           for tag in only.data.metrics}
    assert_once_and_equal(got, expected(run), rel=1e-12, timing=False)
    assert only.data.params["train.steps"] == str(KILL_STEPS) and only.data.params["train.logger"] == "all"


def _tensorboard_raw(directory: Path) -> dict[str, list]:
    """Every scalar record in the event files, as any reader of the records sees them (no purging)."""
    from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader

    out: dict[str, list] = {}
    for path in sorted(directory.glob("events.out.tfevents.*")):
        for event in LegacyEventFileLoader(str(path)).Load():
            for value in event.summary.value:
                if value.WhichOneof("value") == "simple_value":
                    out.setdefault(value.tag, []).append((event.step, value.simple_value))
    return out


def test_tensorboard_holds_each_step_once_after_kills_in_every_reader(killed):
    from tensorboard.backend.event_processing import event_accumulator, plugin_event_accumulator
    from tensorboard.util import tensor_util

    run, _, _ = killed
    want, directory = expected(run), run / "tensorboard"
    assert_once_and_equal(_tensorboard_raw(directory), want, rel=1e-6)  # the records themselves
    legacy = event_accumulator.EventAccumulator(str(directory))  # the Python loader's scalars
    legacy.Reload()
    assert_once_and_equal({t: [(e.step, e.value) for e in legacy.Scalars(t)] for t in legacy.Tags()["scalars"]},
                          want, rel=1e-6)
    slow = plugin_event_accumulator.EventAccumulator(str(directory))  # what `--load_fast=false` reads
    slow.Reload()
    assert_once_and_equal({t: [(e.step, float(tensor_util.make_ndarray(e.tensor_proto))) for e in slow.Tensors(t)]
                           for t in slow.Tags()["tensors"]}, want, rel=1e-6)
    try:
        import tensorflow as tf
    except ImportError:
        return
    got: dict[str, list] = {}
    for path in sorted(directory.glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                got.setdefault(value.tag, []).append((event.step, value.simple_value))
    assert_once_and_equal(got, want, rel=1e-6)


def test_the_csv_holds_each_step_once_after_kills_with_the_numbers_of_metrics_jsonl(killed):
    run, _, seen = killed
    with open(run / "metrics.csv", newline="") as f:
        table = list(csv.reader(f))
    assert table[0] == ["step", "tag", "value"]
    got: dict[str, list] = {}
    for step, tag, value in table[1:]:
        got.setdefault(tag, []).append((int(step), float(value)))
    assert_once_and_equal(got, expected(run), rel=0)
    assert [s for s, _ in expected(run)["train/loss"]] == list(range(1, KILL_STEPS + 1)), seen


def test_a_sweep_point_writes_its_swept_keys_to_tensorboards_hparams_tab(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams import plugin_data_pb2

    from lrngpt.experiments.grid import resolve_sweep
    from lrngpt.experiments.runner import run_sweep

    sweep = resolve_sweep("embed-dim", "tiny", sets=["train.logger=tensorboard"], axes=["model.n_embd=4,8"])
    run_sweep(sweep, tmp_path, shard=(1, 2), log=lambda m: None)  # the point n_embd=8 only
    (point,) = [p for p in sweep.points if p.values["model.n_embd"] == 8]
    assert point.values == {"model.n_embd": 8, "train.seed": 1337}  # the preset's axes, one value of each
    acc = EventAccumulator(str(tmp_path / "runs" / point.name / "tensorboard"))
    acc.Reload()
    content = acc.PluginTagToContent("hparams")
    start = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_start_info"])
    hparams = start.session_start_info.hparams
    assert {k: v.number_value for k, v in hparams.items()} == {"model.n_embd": 8, "train.seed": 1337}
    experiment = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/experiment"]).experiment
    assert {m.name.tag for m in experiment.metric_infos} == {"val/bpb", "final/val_bpb"}
    assert "val/bpb" in acc.Tags()["scalars"]


@pytest.mark.slow  # MLflow builds its database schema first (Alembic migrations): seconds of CPU
def test_mlflow_with_no_tracking_uri_keeps_the_run_in_a_local_database(cfg, tmp_path, monkeypatch):
    """MLflow 3's default store, sqlite:///mlflow.db in the current directory: the mlflow extra brings
    SQLAlchemy and Alembic for it."""
    for module in ("mlflow", "sqlalchemy", "alembic"):
        pytest.importorskip(module)
    from mlflow.tracking import MlflowClient

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "lrn-test")
    train_run(cfg("mlflow"), tmp_path / "r", progress=False, log=lambda m: None)
    state = json.loads((tmp_path / "r" / "trackers.json").read_text())["mlflow"]
    assert state["tracking_uri"] == f"sqlite:///{tmp_path / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=state["tracking_uri"])
    (only,) = client.search_runs([client.get_experiment_by_name("lrn-test").experiment_id])
    assert only.info.run_id == state["run_id"] and only.info.status == "FINISHED"
    got = {tag: [(m.step, m.value) for m in client.get_metric_history(only.info.run_id, tag)]
           for tag in only.data.metrics}
    assert_once_and_equal(got, expected(tmp_path / "r"), rel=1e-12)


# ---- refusals ----------------------------------------------------------------------------------

def test_mlflow_that_cannot_open_its_store_is_one_line(cfg, tmp_path, monkeypatch):
    pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"file://{tmp_path / 'mlruns'}")
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)  # MLflow 3 refuses a file store without it
    with pytest.raises(UserError, match="train.logger mlflow: .*MLFLOW_TRACKING_URI") as e:
        train_run(cfg("mlflow"), tmp_path / "r", progress=False, log=lambda m: None)
    assert "\n" not in str(e.value)


def test_a_missing_tracker_package_says_which_extra_to_install(cfg, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "wandb", None)
    with pytest.raises(UserError, match=r"pip install 'lrngpt\[wandb\]'"):
        train_run(cfg("wandb"), tmp_path / "r", progress=False, log=lambda m: None)


def test_force_removes_the_tracker_files_with_the_run(cfg, tmp_path):
    run = tmp_path / "r"
    train_run(cfg("csv"), run, progress=False, log=lambda m: None)
    (run / "trackers.json").write_text("{}")
    train_run(load_config("mlp-tiny", [f"data.corpus={json.loads((run / 'config.json').read_text())['data']['corpus']}",
                                   "train.steps=2", "train.eval_every=2", "train.eval_tokens=200",
                                   "train.train_eval_tokens=200"]), run, force=True, progress=False, log=lambda m: None)
    assert not (run / "metrics.csv").exists() and not (run / "trackers.json").exists()
