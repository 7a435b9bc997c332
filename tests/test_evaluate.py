"""Bits per byte: the formula on hand-built cases, special tokens excluded, every target once."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from lrngpt.evaluate import evaluate_bpb, window_starts


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
    from lrngpt.evaluate import spread_windows

    windows = spread_windows(1000, 10, 100)
    assert windows[0][0] == 0 and windows[-1][0] + windows[-1][1] == 999  # first and last window kept
    assert spread_windows(1000, 10, None) == window_starts(1000, 10)
