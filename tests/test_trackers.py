"""train.logger: TensorBoard, CSV, W&B (offline) and MLflow (a local file store) get the rows of
metrics.jsonl under grouped tags; a run that crashes and resumes shows each step once in every
tracker; a sweep point's swept keys are its hyperparameters. No test reaches the network."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from lrngpt.errors import UserError
from lrngpt.runconfig.schema import load_config
from lrngpt.training.trackers import tags
from lrngpt.training.trainer import train

STEPS, EVAL, CRASH = 12, 4, 7  # the last checkpoint before the crash is the evaluation at step 4


def rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def expected(run: Path) -> dict[str, list[tuple[int, float]]]:
    """What metrics.jsonl says each tag holds: [(step, value)] in step order."""
    out: dict[str, list] = {}
    for r in rows(run):
        for tag, value in tags(r).items():
            out.setdefault(tag, []).append((r["step"], value))
    return out


def crash_and_resume(cfg, run: Path, hparams=None) -> None:
    """Train until step CRASH, die there (checkpoint at EVAL), then resume to the end."""
    def log(msg):
        if msg.startswith(f"step {CRASH}/"):
            raise RuntimeError("crash")
    with pytest.raises(RuntimeError, match="crash"):
        train(cfg, run, progress=False, log=log, hparams=hparams)
    assert max(r["step"] for r in rows(run)) == CRASH  # the rows past the checkpoint were written ...
    train(cfg, run, resume=True, progress=False, log=lambda m: None, hparams=hparams)  # ... and are redone


def assert_same(tag: str, got: list, points: list) -> None:
    """An append-only tracker keeps what it got before the crash for steps EVAL+1..CRASH: resume is
    bit-exact, so every number is the same but the timing (tokens_per_s), whose steps are compared."""
    assert [s for s, _ in got] == [s for s, _ in points], tag
    if tag != "train/tokens_per_s":
        assert got == [(s, pytest.approx(v, rel=1e-6)) for s, v in points], tag


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
    for bad, message in (("tensorbord", "unknown logger 'tensorbord'"), ("none,csv", "none stands alone"),
                         ("csv,", "an empty logger name"), ("", "an empty logger name")):
        with pytest.raises(UserError, match="train.logger") as e:
            tiny_config(f"train.logger={bad}")
        assert message in str(e.value) and "tensorboard, wandb, mlflow, csv" in str(e.value)


def test_a_crashed_and_resumed_run_shows_each_step_once_in_tensorboard_and_the_csv(cfg, tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run = tmp_path / "r"
    crash_and_resume(cfg("tensorboard,csv"), run)
    want = expected(run)
    assert [s for s, _ in want["train/loss"]] == list(range(1, STEPS + 1))
    assert [s for s, _ in want["val/bpb"]] == [0, 4, 8, 12]
    assert len(list((run / "tensorboard").glob("events.out.tfevents.*"))) == 2  # one file per process
    acc = EventAccumulator(str(run / "tensorboard"))
    acc.Reload()
    assert set(acc.Tags()["scalars"]) == set(want) == {
        "train/loss", "train/bpb", "train/lr", "train/tokens_per_s", "val/bpb", "val/loss",
        "final/val_bpb", "final/train_bpb"}
    for tag, points in want.items():  # steps 5..7 were written twice; TensorBoard shows them once
        assert [(e.step, pytest.approx(e.value, rel=1e-6)) for e in acc.Scalars(tag)] == points, tag
    with open(run / "metrics.csv", newline="") as f:
        table = list(csv.reader(f))
    assert table[0] == ["step", "tag", "value"]
    got: dict[str, list] = {}
    for step, tag, value in table[1:]:
        got.setdefault(tag, []).append((int(step), float(value)))
    assert got == want


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


# ---- W&B, offline ------------------------------------------------------------------------------

def wandb_records(path: Path):
    """The records of a .wandb file: a LevelDB-style log (32 KiB blocks, 7-byte headers) of protobufs."""
    from wandb.proto import wandb_internal_pb2

    data, pos, buf = path.read_bytes(), 7, b""  # 7: the file's own header (":W&B", magic, version)
    assert data[:4] == b":W&B"
    while pos + 7 <= len(data):
        if 32768 - pos % 32768 < 7:  # a block's tail too short for a header is padding
            pos += 32768 - pos % 32768
            continue
        size, kind = int.from_bytes(data[pos + 4:pos + 6], "little"), data[pos + 6]
        buf += data[pos + 7:pos + 7 + size]
        pos += 7 + size
        if kind in (1, 4):  # a whole record, or the last piece of one
            record = wandb_internal_pb2.Record()
            record.ParseFromString(buf)
            buf = b""
            yield record


def test_wandb_offline_continues_its_run_after_a_crash_with_each_step_once(cfg, tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wandb-home"))
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_PROJECT", "lrn-test")
    run = tmp_path / "r"
    crash_and_resume(cfg("wandb"), run, hparams={"model.n_embd": 16})
    state = json.loads((run / "trackers.json").read_text())
    files = sorted((run / "wandb").glob("offline-run-*/run-*.wandb"))
    assert len(files) == 2 and all(f.name == f"run-{state['wandb']['id']}.wandb" for f in files)  # one W&B run
    history: dict[str, list] = {}
    configs = []
    for f in files:
        for r in wandb_records(f):
            kind = r.WhichOneof("record_type")
            if kind == "history":
                item = {i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in r.history.item}
                for tag, value in item.items():
                    if not tag.startswith("_"):
                        history.setdefault(tag, []).append((item["_step"], value))
            elif kind == "run":
                assert r.run.project == "lrn-test"
                configs.append({u.key: json.loads(u.value_json) for u in r.run.config.update})
    want = expected(run)
    assert set(history) == set(want)
    for tag, points in want.items():
        assert_same(tag, sorted(history[tag]), points)
    assert configs[0]["model.n_embd"] == 16 and configs[0]["swept"] == ["model.n_embd"]
    assert configs[0]["train.steps"] == STEPS


# ---- MLflow, a local file store ----------------------------------------------------------------

def test_mlflow_file_store_continues_its_run_after_a_crash_with_each_step_once(cfg, tmp_path, monkeypatch):
    pytest.importorskip("mlflow")
    from mlflow.tracking import MlflowClient

    uri = f"file://{tmp_path / 'mlruns'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps the file store behind this switch
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "lrn-test")
    run = tmp_path / "r"
    crash_and_resume(cfg("mlflow"), run, hparams={"model.n_embd": 16})
    state = json.loads((run / "trackers.json").read_text())["mlflow"]
    client = MlflowClient(tracking_uri=uri)
    (only,) = client.search_runs([client.get_experiment_by_name("lrn-test").experiment_id])
    assert only.info.run_id == state["run_id"] and only.info.status == "FINISHED"
    want = expected(run)
    assert set(only.data.metrics) == set(want)
    for tag, points in want.items():
        assert_same(tag, sorted((m.step, m.value) for m in client.get_metric_history(only.info.run_id, tag)), points)
    params = only.data.params
    assert params["swept.model.n_embd"] == "16" and params["model.n_embd"] == "16"
    assert params["train.logger"] == "mlflow" and only.data.tags["lrn.swept"] == "model.n_embd"


def test_mlflow_that_cannot_open_its_store_is_one_line(cfg, tmp_path, monkeypatch):
    pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"file://{tmp_path / 'mlruns'}")
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)  # MLflow 3 refuses a file store without it
    with pytest.raises(UserError, match="train.logger mlflow: .*MLFLOW_TRACKING_URI") as e:
        train(cfg("mlflow"), tmp_path / "r", progress=False, log=lambda m: None)
    assert "\n" not in str(e.value)


def test_a_missing_tracker_package_says_which_extra_to_install(cfg, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "wandb", None)
    with pytest.raises(UserError, match=r"pip install 'lrngpt\[wandb\]'"):
        train(cfg("wandb"), tmp_path / "r", progress=False, log=lambda m: None)


def test_force_removes_the_tracker_files_with_the_run(cfg, tmp_path):
    run = tmp_path / "r"
    train(cfg("csv"), run, progress=False, log=lambda m: None)
    (run / "trackers.json").write_text("{}")
    train(load_config("mlp-tiny", [f"data.corpus={json.loads((run / 'config.json').read_text())['data']['corpus']}",
                                   "train.steps=2", "train.eval_every=2", "train.eval_tokens=200",
                                   "train.train_eval_tokens=200"]), run, force=True, progress=False, log=lambda m: None)
    assert not (run / "metrics.csv").exists() and not (run / "trackers.json").exists()
