"""Bits per byte: the formula on hand-built cases, special tokens excluded, every target once."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from lrngpt.inference.evaluate import evaluate_bpb, window_starts


class FixedLM(nn.Module):
    """Logits that do not depend on the input: log-probabilities `logp` at every position."""

    def __init__(self, logp: torch.Tensor):
        super().__init__()
        self.logp = logp

    def forward(self, idx, targets=None):
        return self.logp.expand(*idx.shape, -1).clone(), None


def test_uniform_model_gives_log2_v_over_bytes_per_token():
    V = 8
    tokens = np.array([0, 3, 5, 3, 0, 7, 1, 2, 6], dtype=np.uint16)  # id 0 is the special token
    token_bytes = np.array([0, 1, 2, 3, 1, 2, 3, 4])
    model = FixedLM(torch.full((V,), -math.log(V)))
    r = evaluate_bpb(model, tokens, token_bytes, seq_len=3, batch_size=2)
    targets = tokens[1:]
    kept = targets[token_bytes[targets] > 0]  # the target 0 (special) is excluded from both sums
    expected = len(kept) * math.log(V) / (math.log(2) * token_bytes[kept].sum())
    assert r["bpb"] == pytest.approx(expected, rel=1e-6)  # float32 logits
    assert r["tokens"] == len(kept) == 7
    assert r["bytes"] == token_bytes[kept].sum()
    assert r["loss"] == pytest.approx(math.log(V))


def test_hand_built_probabilities_give_the_formula():
    # p(token) fixed: target 1 has p=1/2, target 2 has p=1/4; token 1 is 1 byte, token 2 is 2 bytes
    logp = torch.log(torch.tensor([0.25, 0.5, 0.25]))
    tokens = np.array([1, 2, 1, 2, 2])
    token_bytes = np.array([0, 1, 2])
    r = evaluate_bpb(FixedLM(logp), tokens, token_bytes, seq_len=2, batch_size=4)
    nll = math.log(4) + math.log(2) + math.log(4) + math.log(4)  # targets 2, 1, 2, 2
    n_bytes = 2 + 1 + 2 + 2
    assert r["bpb"] == pytest.approx(nll / (math.log(2) * n_bytes), rel=1e-6)  # float32 logits


def test_windows_cover_every_target_exactly_once():
    for n, T in [(2, 5), (10, 3), (11, 5), (100, 7), (257, 256)]:
        covered = [s + i + 1 for s, length in window_starts(n, T) for i in range(length)]
        assert covered == list(range(1, n))


def test_max_tokens_caps_the_evaluation_and_mode_is_restored():
    model = FixedLM(torch.zeros(4))
    model.train()
    tokens = np.arange(1, 101) % 3 + 1
    r = evaluate_bpb(model, tokens, np.array([0, 1, 1, 1]), seq_len=8, max_tokens=20)
    assert r["tokens"] == 19
    assert model.training


def test_max_tokens_spreads_windows_over_the_split_not_a_prefix():
    # token 1 costs 1 bit, token 2 costs 2 bits; the first half is all 1s, the second all 2s
    tokens = np.concatenate([np.full(500, 1), np.full(500, 2)])
    logp = torch.log(torch.tensor([0.25, 0.5, 0.25]))
    r = evaluate_bpb(FixedLM(logp), tokens, np.array([0, 1, 1]), seq_len=10, max_tokens=100)
    assert r["tokens"] == 99  # ten windows of the 10-token grid; the last one has 9 targets
    assert r["bpb"] == pytest.approx(1.5, abs=0.01)  # a 100-token prefix would give exactly 1.0
    from lrngpt.inference.evaluate import capped_windows

    windows = capped_windows(1000, 10, 100)
    assert windows[0][0] == 0 and windows[-1][0] + windows[-1][1] == 999  # first and last window kept
    assert capped_windows(1000, 10, None) == window_starts(1000, 10)


def test_prefix_windows_score_exactly_the_first_max_tokens_targets():
    """train.eval_windows=prefix: the chapter's "first 2M tokens"; the same half-1s, half-2s split."""
    tokens = np.concatenate([np.full(500, 1), np.full(500, 2)])
    logp = torch.log(torch.tensor([0.25, 0.5, 0.25]))
    r = evaluate_bpb(FixedLM(logp), tokens, np.array([0, 1, 1]), seq_len=10, max_tokens=100, windows="prefix")
    assert r["tokens"] == 100 and r["bpb"] == pytest.approx(1.0, abs=1e-6)  # only 1s: the prefix (spread: 1.5)
    r = evaluate_bpb(FixedLM(logp), tokens, np.array([0, 1, 1]), seq_len=10, max_tokens=995, windows="prefix")
    assert r["tokens"] == 995 and r["bpb"] == pytest.approx((499 + 2 * 496) / 995)
    from lrngpt.inference.evaluate import capped_windows

    assert capped_windows(1000, 10, 95, "prefix")[-1] == (90, 5)  # the last window cut to fit
    assert capped_windows(1000, 10, None, "prefix") == window_starts(1000, 10)
    with pytest.raises(ValueError):
        capped_windows(1000, 10, 95, "middle")


# ---- the context each target gets: window (training-shaped) or full (its true history) ---------

def _mlp(vocab=7, block=3):
    from lrngpt.models.mlp import MLPLM, MLPConfig

    torch.manual_seed(0)
    return MLPLM(MLPConfig(vocab_size=vocab, pad_id=0, block_size=block, n_embd=4, n_hidden=8)).eval()


def _by_hand(model, tokens, token_bytes, start_of) -> float:
    """bpb scoring each target t from the model's context over tokens start_of(t)..t-1, one at a time."""
    nll = n_bytes = 0.0
    for t in range(1, len(tokens)):
        if token_bytes[tokens[t]] == 0:
            continue
        x = torch.as_tensor(np.asarray(tokens[start_of(t) : t], dtype=np.int64))[None]
        with torch.no_grad():
            logp = torch.log_softmax(model(x)[0][0, -1].double(), -1)
        nll -= logp[int(tokens[t])].item()
        n_bytes += token_bytes[tokens[t]]
    return nll / (math.log(2) * n_bytes)


def test_full_context_is_exactly_each_target_scored_from_its_true_history():
    model, block, seq_len = _mlp(), 3, 5
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 7, 43)
    token_bytes = np.array([0, 1, 2, 1, 3, 1, 2])
    full = evaluate_bpb(model, tokens, token_bytes, seq_len, batch_size=3, context="full")
    truth = _by_hand(model, tokens, token_bytes, lambda t: max(0, t - block))  # the block tokens before t
    assert full["bpb"] == pytest.approx(truth, rel=1e-6)
    # window: a target's context stops at its window's start (seq_len grid) and is padded before it
    window = evaluate_bpb(model, tokens, token_bytes, seq_len, batch_size=3)
    padded = _by_hand(model, tokens, token_bytes, lambda t: max((t - 1) // seq_len * seq_len, t - block))
    assert window["bpb"] == pytest.approx(padded, rel=1e-6)
    assert window == evaluate_bpb(model, tokens, token_bytes, seq_len, batch_size=3, context="window")
    assert abs(window["bpb"] - full["bpb"]) > 1e-3  # the two differ on this case
    assert (full["tokens"], full["bytes"]) == (window["tokens"], window["bytes"])  # the same targets


def test_full_context_with_spread_windows_scores_the_same_targets_as_window():
    model = _mlp()
    tokens = np.random.default_rng(1).integers(1, 7, 400)
    token_bytes = np.array([0, 1, 1, 1, 1, 1, 1])
    for cap in (30, 100):
        w = evaluate_bpb(model, tokens, token_bytes, 8, max_tokens=cap)
        f = evaluate_bpb(model, tokens, token_bytes, 8, max_tokens=cap, context="full")
        assert f["tokens"] == w["tokens"] < cap + 8  # about cap: whole windows of 8


def test_gpt_full_context_is_a_sliding_window_with_stride_half_the_context():
    from lrngpt.inference.evaluate import context_plan
    from lrngpt.models.gpt import GPT, GPTConfig

    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=7, context_length=8, n_embd=8, n_head=2, n_layer=1, dropout=0.0)).eval()
    assert context_plan(model, 8, "full") == (4, 4) and context_plan(model, 8, "window") == (8, 0)
    assert context_plan(_mlp(block=6), 256, "full") == (256, 5)
    tokens = np.random.default_rng(2).integers(1, 7, 30)
    token_bytes = np.array([0, 1, 2, 1, 3, 1, 2])
    full = evaluate_bpb(model, tokens, token_bytes, 8, context="full")
    # target t sits in the window of stride 4 starting at s = (t-1)//4*4, which is fed from s-4 (or 0)
    truth = _by_hand(model, tokens, token_bytes, lambda t: max(0, (t - 1) // 4 * 4 - 4))
    assert full["bpb"] == pytest.approx(truth, rel=1e-5)
    with pytest.raises(ValueError, match="window, full"):
        evaluate_bpb(model, tokens, token_bytes, 8, context="whole")


def test_lrn_eval_context_window_is_todays_number_and_full_gives_every_target_its_history(tiny_config, tmp_path,
                                                                                           capsys):
    import json

    from lrngpt.cli.main import main
    from lrngpt.data.prepared import data_cache_dir, load_prepared
    from lrngpt.store.rundir import load_run
    from lrngpt.training.trainer import train_run

    summary = train_run(tiny_config("train.steps=10"), tmp_path / "run", progress=False, log=lambda m: None)
    out = {}
    for context in ("window", "full"):
        assert main(["eval", str(tmp_path / "run"), "--split", "val", "--context", context, "--json"]) == 0
        out[context] = json.loads(capsys.readouterr().out)
    assert main(["eval", str(tmp_path / "run"), "--split", "val", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == out["window"]  # the default
    assert out["window"]["val_bpb"] == pytest.approx(summary["val_bpb"], rel=1e-9) and out["full"]["context"] == "full"
    run = load_run(tmp_path / "run")
    val = load_prepared(data_cache_dir() / summary["data_key"]).tokens("val")[:400]
    block = run.config.model.block_size
    tb = run.tokenizer.token_bytes
    cut = evaluate_bpb(run.model, val, tb, run.config.train.seq_len, context="full")
    assert cut["bpb"] == pytest.approx(_by_hand(run.model, val, tb, lambda t: max(0, t - block)), rel=1e-5)
    with pytest.raises(SystemExit, match="2"):
        main(["eval", str(tmp_path / "run"), "--context", "whole"])


def test_sampler_replay_counts_exactly_the_targets_training_read():
    from lrngpt.data.sampler import BatchSampler

    tokens = np.arange(5_000)  # each token is its own position, so a batch shows where it was drawn from
    seen = np.zeros(len(tokens), dtype=np.int64)
    live = BatchSampler(tokens, batch_size=4, seq_len=16, seed=3)
    for _ in range(25):
        _, y = live.next()
        np.add.at(seen, y.numpy().ravel(), 1)
    replayed = BatchSampler(tokens, batch_size=4, seq_len=16, seed=3).reads(25)
    assert np.array_equal(replayed, seen)
    assert replayed.sum() == 25 * 4 * 16


def test_marked_and_unmarked_targets_recombine_to_the_whole():
    tokens = np.concatenate([np.full(500, 1), np.full(500, 2)])
    logp = torch.log(torch.tensor([0.25, 0.5, 0.25]))
    mark = np.arange(len(tokens)) < 500  # the 1s (1 bit each) against the 2s (2 bits each)
    r = evaluate_bpb(FixedLM(logp), tokens, np.array([0, 1, 1]), seq_len=10, mark=mark)
    assert r["marked"]["bpb"] == pytest.approx(1.0, rel=1e-6) and r["unmarked"]["bpb"] == pytest.approx(2.0, rel=1e-6)
    assert r["marked"]["tokens"] + r["unmarked"]["tokens"] == r["tokens"] == 999
    whole = (r["marked"]["bpb"] * r["marked"]["bytes"] + r["unmarked"]["bpb"] * r["unmarked"]["bytes"]) / r["bytes"]
    assert whole == pytest.approx(r["bpb"], rel=1e-9)


def test_eval_by_reads_splits_the_train_bpb_of_a_run(tiny_config, tmp_path):
    from lrngpt.data.prepared import prepare
    from lrngpt.data.sampler import BatchSampler
    from lrngpt.inference.evaluate import evaluate_run
    from lrngpt.training.trainer import train_run

    cfg = tiny_config("train.steps=20")
    train_run(cfg, tmp_path / "r", progress=False)
    r = evaluate_run(tmp_path / "r", split="train", device="cpu", by_reads=True, log=lambda m: None)
    tc = cfg.train
    reads = BatchSampler(prepare(cfg.data, log=lambda m: None).tokens("train"), tc.batch_size, tc.seq_len,
                         tc.seed).reads(20)
    assert r["read_share"] == pytest.approx(float((reads[1:] > 0).mean()))
    assert 0 < r["train_tokens_read"] < r["train_tokens"] and r["train_tokens_read"] + r["train_tokens_unread"] == r["train_tokens"]
    assert min(r["train_bpb_read"], r["train_bpb_unread"]) <= r["train_bpb"] <= max(r["train_bpb_read"], r["train_bpb_unread"])
