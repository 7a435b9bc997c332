"""Training: exact resume, refusals, atomic checkpoints, Ctrl-C, non-finite loss."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
import torch

from lrngpt.core.fsio import _TEMP, clean_stale_temps
from lrngpt.errors import UserError
from lrngpt.store.checkpoint import load_checkpoint
from lrngpt.store.layout import INIT, LAST
from lrngpt.training.schedule import lr_at
from lrngpt.training.trainer import train_run
from tests.cli_run import read_until


def weights(run_dir):
    return load_checkpoint(run_dir / LAST)["model"]


def test_resume_is_bit_exact_with_a_straight_run(tiny_config, tmp_path):
    cfg = lambda: tiny_config("train.steps=20", "train.eval_every=5")  # noqa: E731
    train_run(cfg(), tmp_path / "straight", progress=False)
    train_run(cfg(), tmp_path / "split", stop_at=10, progress=False)
    assert load_checkpoint(tmp_path / "split" / LAST)["step"] == 10
    train_run(cfg(), tmp_path / "split", resume=True, progress=False)
    a, b = weights(tmp_path / "straight"), weights(tmp_path / "split")
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    # the optimizer state too, so a third piece would also agree
    oa = load_checkpoint(tmp_path / "straight" / LAST)["optimizer"]["state"]
    ob = load_checkpoint(tmp_path / "split" / LAST)["optimizer"]["state"]
    assert all(torch.equal(oa[i]["exp_avg"], ob[i]["exp_avg"]) for i in oa)


def test_a_different_seed_gives_different_weights(tiny_config, tmp_path):
    train_run(tiny_config("train.steps=5"), tmp_path / "a", progress=False)
    train_run(tiny_config("train.steps=5", "train.seed=7"), tmp_path / "b", progress=False)
    a, b = weights(tmp_path / "a"), weights(tmp_path / "b")
    assert not torch.equal(a["wte.weight"], b["wte.weight"])


def test_resume_refuses_a_changed_corpus(tiny_config, tmp_path, text_corpus):
    train_run(tiny_config("train.steps=4"), tmp_path / "r", stop_at=2, progress=False)
    other = tmp_path / "other.txt"
    other.write_text("completely different text " * 400)
    with pytest.raises(UserError, match="training data changed since this run started"):
        train_run(tiny_config("train.steps=4", f"data.corpus=text:{other}"), tmp_path / "r", resume=True)


def test_resume_refuses_a_changed_model(tiny_config, tmp_path):
    train_run(tiny_config("train.steps=4"), tmp_path / "r", stop_at=2, progress=False)
    with pytest.raises(UserError, match="model config changed.*n_embd"):
        train_run(tiny_config("train.steps=4", "model.n_embd=32"), tmp_path / "r", resume=True)


def test_steps_below_the_checkpoint_step_is_refused(tiny_config, tmp_path):
    train_run(tiny_config("train.steps=6"), tmp_path / "r", stop_at=4, progress=False)
    with pytest.raises(UserError, match="below the checkpoint's step 4"):
        train_run(tiny_config("train.steps=6"), tmp_path / "r", resume=True, stop_at=3)


def test_a_directory_holding_a_run_is_not_overwritten_without_force(tiny_config, tmp_path):
    train_run(tiny_config("train.steps=2"), tmp_path / "r", progress=False)
    before = (tmp_path / "r" / LAST).read_bytes()
    with pytest.raises(UserError, match="already holds a run"):
        train_run(tiny_config("train.steps=3"), tmp_path / "r")
    assert (tmp_path / "r" / LAST).read_bytes() == before
    train_run(tiny_config("train.steps=3"), tmp_path / "r", force=True, progress=False)
    assert load_checkpoint(tmp_path / "r" / LAST)["step"] == 3


def test_truncated_or_corrupted_checkpoint_is_refused(tiny_config, tmp_path):
    run = tmp_path / "r"
    train_run(tiny_config("train.steps=4"), run, stop_at=2, progress=False)
    data = (run / LAST).read_bytes()
    (run / LAST).write_bytes(data[: len(data) // 2])
    with pytest.raises(UserError, match="truncated or corrupted"):
        train_run(tiny_config("train.steps=4"), run, resume=True)
    (run / LAST).write_bytes(b"garbage" * 100)
    with pytest.raises(UserError, match="truncated or corrupted"):
        load_checkpoint(run / LAST)
    (run / LAST).unlink()  # the step-0 checkpoint is the latest there is: the resume starts from it
    said = []
    train_run(tiny_config("train.steps=4"), run, resume=True, stop_at=2, log=said.append, progress=False)
    assert any(m.startswith("resumed from") and m.endswith(f"{INIT} at step 0") for m in said), said
    (run / LAST).unlink()
    (run / INIT).unlink()
    with pytest.raises(UserError, match=r"has no ckpt_last.pt; it was stopped before its first checkpoint: start it "
                                        r"again with `lrn train --config CONFIG --out .*` \(it replaces"):
        train_run(tiny_config("train.steps=4"), run, resume=True)


def test_step_zero_weights_are_kept_and_differ_from_trained(tiny_config, tmp_path):
    run = tmp_path / "r"
    train_run(tiny_config("train.steps=5"), run, progress=False)
    init, last = load_checkpoint(run / INIT), load_checkpoint(run / LAST)
    assert init["step"] == 0 and last["step"] == 5
    assert not torch.equal(init["model"]["wte.weight"], last["model"]["wte.weight"])


def test_run_directory_holds_config_tokenizer_metrics_and_summary(tiny_config, tmp_path):
    run = tmp_path / "r"
    summary = train_run(tiny_config("train.steps=10", "train.eval_every=5"), run, progress=False)
    assert {p.name for p in run.iterdir()} >= {"config.json", "tokenizer.json", "metrics.jsonl", "summary.json",
                                                 "ckpt_init.pt", "ckpt_last.pt", "ckpt_best.pt"}
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows if "val_bpb" in r and not r.get("final")] == [0, 5, 10]
    assert all(r["tokens_per_s"] > 0 for r in rows if "loss" in r)
    assert summary["val_bpb"] < rows[0]["val_bpb"]  # it learned something
    assert summary["gap"] == pytest.approx(summary["val_bpb"] - summary["train_bpb"])  # the chapter's sign


def test_non_finite_loss_stops_and_keeps_the_last_good_checkpoint(tiny_config, tmp_path):
    run = tmp_path / "r"
    train_run(tiny_config("train.steps=20", "train.eval_every=5"), run, stop_at=5, progress=False)
    good = (run / LAST).read_bytes()
    with pytest.raises(UserError, match="loss became nan"):
        train_run(tiny_config("train.steps=20", "train.lr=1e37", "train.min_lr=0", "train.grad_clip=0"),
              run, resume=True, progress=False, extend=True)  # a new lr is a new schedule: --extend
    assert (run / LAST).read_bytes() == good


def test_learning_rate_warms_up_then_decays_to_min_lr(tiny_config):
    tc = tiny_config("train.steps=100", "train.warmup_steps=10", "train.lr=1.0", "train.min_lr=0.1").train
    assert lr_at(0, tc) == pytest.approx(0.1)
    assert lr_at(9, tc) == pytest.approx(1.0)
    assert lr_at(55, tc) == pytest.approx(0.55)
    assert lr_at(100, tc) == pytest.approx(0.1) == lr_at(500, tc)


CHILD = """
import logging, sys, time
logging.basicConfig(level=logging.INFO, format="%(message)s")  # an application shows the library's lines
from lrngpt.runconfig.schema import load_config
from lrngpt.training.trainer import train_run
cfg = load_config("mlp-tiny", ["data.corpus={corpus}", "data.vocab_size=300", "train.steps=100000",
                                "train.eval_every=100000", "train.save_every={save_every}",
                                "model.n_hidden=512", "train.device=cpu"])
train_run(cfg, sys.argv[1], resume=len(sys.argv) > 2, progress=False)
"""


def _spawn(tmp_path, corpus, run, *extra, save_every=1):
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(corpus=corpus, save_every=save_every))
    return subprocess.Popen([sys.executable, str(script), str(run), *extra], stderr=subprocess.PIPE, text=True)


def test_sigkill_during_saves_leaves_a_loadable_checkpoint(tmp_path, text_corpus):
    run = tmp_path / "r"
    proc = _spawn(tmp_path, text_corpus, run)  # saves after every step: a kill lands mid-save often
    try:
        read_until(proc, "step 20/")  # 20 steps done, each saved: the saves go on
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    ckpt = load_checkpoint(run / LAST)
    assert ckpt["step"] >= 1
    # only the killed process's unfinished temporaries (a checkpoint's, or the ownership record's
    # rewritten beside it), each named for its pid, so the next start clears them
    leftovers = [p for p in run.iterdir() if ".tmp-" in p.name]
    assert all(_TEMP.match(p.name) and int(_TEMP.match(p.name)["pid"]) == proc.pid for p in leftovers), leftovers
    assert sorted(clean_stale_temps(run)) == sorted(leftovers)


def test_ctrl_c_saves_between_steps_and_resume_continues(tmp_path, text_corpus):
    run = tmp_path / "r"
    proc = _spawn(tmp_path, text_corpus, run, save_every=100000)
    try:
        read_until(proc, "step 10/")  # inside the step loop, where Ctrl-C saves
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate()
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode != 0
    assert "interrupted at step" in err and "--resume" in err
    step = load_checkpoint(run / LAST)["step"]
    assert step >= 10
    assert os.path.exists(run / "config.json")


def test_tensorboard_gets_the_same_scalars_as_metrics_jsonl(tiny_config, tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run = tmp_path / "r"
    train_run(tiny_config("train.steps=10", "train.eval_every=5", "train.tensorboard=true"), run, progress=False)
    acc = EventAccumulator(str(run / "tensorboard"))
    acc.Reload()
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    losses = [(r["step"], r["loss"]) for r in rows if "loss" in r]
    assert [(e.step, pytest.approx(e.value)) for e in acc.Scalars("train/loss")] == losses
    vals = [(r["step"], r["val_bpb"]) for r in rows if "val_bpb" in r and not r.get("final")]
    assert [(e.step, pytest.approx(e.value)) for e in acc.Scalars("val/bpb")] == vals
    # train and val bpb in one unit, both in TensorBoard: the training rows carry the batch's bpb
    train_bpb = [(r["step"], r["train_bpb"]) for r in rows if "loss" in r]
    assert len(train_bpb) == 2 and [(e.step, pytest.approx(e.value)) for e in acc.Scalars("train/bpb")] == train_bpb


@pytest.mark.parametrize("corpus,url_env", [("nsmc", "LRN_NSMC_URL"), ("tinystories", "LRN_TINYSTORIES_URL")])
def test_a_download_that_cannot_happen_stops_training_before_the_run_directory_is_taken(
        tiny_config, tmp_path, monkeypatch, corpus, url_env):
    import socket

    with socket.socket() as s:  # a local port nothing listens on: no network
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv(url_env, f"http://127.0.0.1:{port}")
    monkeypatch.setenv("LRN_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(UserError, match=f"127.0.0.1:{port}"):
        train_run(tiny_config(f"data.corpus={corpus}"), tmp_path / "run")
    assert not (tmp_path / "run").exists()
