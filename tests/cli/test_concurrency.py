"""Two processes, one run directory: one writer wins; kill -9 at random moments loses nothing."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
import torch

from lrngpt.core.ownership import is_run
from lrngpt.store.checkpoint import load_checkpoint
from lrngpt.store.layout import LAST
from lrngpt.store.rundir import RunDir
from tests.cli_run import HUNG, held_at, wait_for


def lrn(*args: str) -> list[str]:
    return [sys.executable, "-m", "lrngpt", *args]


def train_args(corpus: str, out, *extra: str) -> list[str]:
    return lrn("train", "--config", "mlp-tiny", "--corpus", corpus, "--out", str(out), "--device", "cpu",
               "--set", "data.vocab_size=300", *extra)


def test_two_trainers_on_one_directory_one_runs_the_other_exits_2(text_corpus, tmp_path):
    out = tmp_path / "same"
    first = subprocess.Popen(train_args(text_corpus, out, "--set", "train.steps=400"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: is_run(out), first, "its run record")
        # the first held still while the second starts (a loaded machine could otherwise let the first
        # finish before the second, slower to import torch, reaches the directory)
        first.send_signal(signal.SIGSTOP)
        try:
            second = subprocess.run(train_args(text_corpus, out, "--set", "train.steps=400"),
                                    capture_output=True, text=True, timeout=HUNG)
        finally:
            first.send_signal(signal.SIGCONT)
        assert second.returncode == 2
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1 and f"is in use by process {first.pid} on " in lines[0], second.stderr
        _, err = first.communicate()
        assert first.returncode == 0, err
    finally:
        first.kill()
        first.wait()
    steps = [r["step"] for r in RunDir(out).metrics() if "loss" in r]
    assert steps == sorted(set(steps))  # one writer: no interleaved rows


# Where each kill lands, in turn, each run resumed from what the one before left: between two checkpoints,
# as a checkpoint begins, just after one, and inside one (its temporary file written, not yet renamed in).
KILLS = [("lrngpt.training.trainer:Trainer.metric", "lambda self, row: row['step'] == 7 and 'loss' in row", False),
         ("lrngpt.store.rundir:RunDir.save_checkpoint", "lambda self, payload, *a: payload['step'] == 30", False),
         ("lrngpt.store.rundir:RunDir.save_checkpoint", "lambda self, payload, *a: payload['step'] == 42", True),
         ("os:replace", "lambda src, dst: str(dst).endswith('ckpt_last.pt')", False)]


@pytest.mark.slow
def test_sigkill_at_each_moment_then_resume_equals_a_straight_run(text_corpus, tmp_path):
    sets = ("--set", "train.steps=60", "--set", "train.save_every=3", "--set", "train.eval_every=20",
            "--set", "train.log_every=1")
    straight = subprocess.run(train_args(text_corpus, tmp_path / "straight", *sets), capture_output=True,
                              text=True, timeout=HUNG)
    assert straight.returncode == 0, straight.stderr
    run = tmp_path / "killed"
    for i, (at, when, after) in enumerate(KILLS):
        held = tmp_path / f"held-{i}"
        child = held_at(train_args(text_corpus, run, *sets, *("--resume",) * (i > 0))[3:], at, when, held, after,
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        wait_for(held.exists, child, f"its moment {when}")
        child.send_signal(signal.SIGKILL)
        child.wait()
    final = subprocess.run(train_args(text_corpus, run, *sets, "--resume"), capture_output=True, text=True,
                           timeout=HUNG)
    assert final.returncode == 0, final.stderr
    a, b = (load_checkpoint(d / LAST)["model"] for d in (tmp_path / "straight", run))
    assert all(torch.equal(a[k], b[k]) for k in a)
    rows = lambda d: [(r["step"], "loss" in r, "val_bpb" in r) for r in RunDir(d).metrics()]  # noqa: E731
    assert rows(run) == rows(tmp_path / "straight")
