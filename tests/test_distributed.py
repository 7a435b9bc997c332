"""Data parallelism under torchrun (gloo on CPU): same losses as one process, one writer, on one
machine (--standalone) or two (two launches joined by c10d rendezvous)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest
import torch

from lrngpt.store.checkpoint import load_checkpoint
from lrngpt.store.layout import LAST
from tests.cli_run import HUNG


def train_args(out, corpus, extra=()) -> list[str]:
    return ["train", "--config", "mlp-tiny", "--corpus", corpus, "--set", "data.vocab_size=300",
            "--set", "train.steps=12", "--set", "train.log_every=1", "--set", "train.batch_size=8",
            "--set", "train.eval_every=6", "--out", str(out), *extra]


def lrn_train(tmp_path, out, corpus, nproc=None, extra=()):
    args = train_args(out, corpus, extra)
    if nproc:
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc), "-m", "lrngpt.cli.main", *args]
    else:
        cmd = [sys.executable, "-m", "lrngpt.cli.main", *args]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=HUNG)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def losses(run_dir):
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [r["loss"] for r in rows if "loss" in r]


@pytest.mark.slow
def test_two_processes_match_one_process_with_the_same_global_batch(tmp_path, text_corpus):
    lrn_train(tmp_path, tmp_path / "single", text_corpus)
    lrn_train(tmp_path, tmp_path / "ddp", text_corpus, nproc=2)
    single, ddp = losses(tmp_path / "single"), losses(tmp_path / "ddp")
    assert len(single) == len(ddp) == 12
    assert ddp == pytest.approx(single, abs=1e-5)
    a = load_checkpoint(tmp_path / "single" / LAST)["model"]
    b = load_checkpoint(tmp_path / "ddp" / LAST)["model"]
    assert all(torch.allclose(a[k], b[k], atol=1e-5) for k in a)
    # rank 0 alone wrote: one metrics line per step, no duplicate evaluations
    steps = [json.loads(line)["step"] for line in (tmp_path / "ddp" / "metrics.jsonl").read_text().splitlines()]
    assert steps.count(6) == 2  # one log line + one eval line at step 6, from one writer
    # and resume works under DDP
    lrn_train(tmp_path, tmp_path / "ddp", text_corpus, nproc=2, extra=("--resume", "--steps", "12"))
    assert load_checkpoint(tmp_path / "ddp" / LAST)["step"] == 12


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_torchrun_launches_as_two_nodes_match_one_process(tmp_path, text_corpus):
    """Multi-node torchrun (c10d rendezvous, `-m lrngpt`), two launches of one process each on this
    machine. Each "node" has its own LRN_CACHE_DIR, like machine-local caches on a cluster."""
    lrn_train(tmp_path, tmp_path / "single", text_corpus)
    port, procs = free_port(), []
    for node in (0, 1):
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc-per-node", "1",
               "--node-rank", str(node), "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}",
               "--rdzv-id", "lrn-test", "-m", "lrngpt", *train_args(tmp_path / "multi", text_corpus)]
        env = {**os.environ, "OMP_NUM_THREADS": "1", "LRN_CACHE_DIR": str(tmp_path / f"cache-node{node}")}
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
    for proc in procs:
        _, err = proc.communicate(timeout=HUNG)
        assert proc.returncode == 0, err[-3000:]
    single, multi = losses(tmp_path / "single"), losses(tmp_path / "multi")
    assert len(multi) == 12 and multi == pytest.approx(single, abs=1e-5)
    a = load_checkpoint(tmp_path / "single" / LAST)["model"]
    b = load_checkpoint(tmp_path / "multi" / LAST)["model"]
    assert all(torch.allclose(a[k], b[k], atol=1e-5) for k in a)
    steps = [json.loads(line)["step"] for line in (tmp_path / "multi" / "metrics.jsonl").read_text().splitlines()]
    assert steps.count(6) == 2  # one writer for both nodes
    for node in (0, 1):  # each machine prepared its own copy of the data, one process at a time
        assert len(list((tmp_path / f"cache-node{node}" / "data").iterdir())) == 1


def test_a_rank_other_than_zero_writes_nothing(tiny_config, tmp_path, monkeypatch):
    """Rank 1 of 2, simulated in one process: the communication calls are stubbed out."""
    import importlib

    import torch.distributed

    from lrngpt.device import distributed
    from lrngpt.device.distributed import Distributed

    tr = importlib.import_module("lrngpt.training.trainer")  # the module

    monkeypatch.setattr(tr.Distributed, "from_env", classmethod(lambda cls: Distributed(1, 2, 0)))
    monkeypatch.setattr(Distributed, "init", lambda self, device: None)
    monkeypatch.setattr(Distributed, "barrier", lambda self: None)
    monkeypatch.setattr(distributed, "DistributedDataParallel", lambda model, device_ids=None: model)
    monkeypatch.setattr(torch.distributed, "all_reduce", lambda tensor: None)
    tr.train_run(tiny_config("train.steps=4", "train.eval_every=2"), tmp_path / "r", progress=False)
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())
