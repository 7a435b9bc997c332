"""lrngpt.models.dropout: the same distribution as F.dropout, attention equal to SDPA without dropout,
masks from the global generator (so seeded and resumable), and F.dropout itself where torch's draw is fast."""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from lrngpt.models import dropout as dropout_module
from lrngpt.models.dropout import Dropout, causal_attention, dropout


@pytest.fixture
def own_mask(monkeypatch):
    monkeypatch.setattr(dropout_module, "SLOW_CPU_BERNOULLI", True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_dropout_keeps_1_minus_p_scaled_by_its_inverse(own_mask, dtype):
    torch.manual_seed(0)
    x = torch.ones(400, 500, dtype=dtype)
    y = dropout(x, 0.1, True)
    assert y.dtype == dtype
    kept = y != 0
    assert abs(kept.float().mean().item() - 0.9) < 0.003  # 200,000 draws: 4 standard deviations
    assert torch.equal(y[kept], torch.full_like(y[kept], 1 / 0.9))


def test_dropout_gradient_is_the_mask_and_eval_or_p_0_is_the_identity(own_mask):
    x = torch.randn(64, 32, requires_grad=True)
    y = dropout(x, 0.25, True)
    y.sum().backward()
    assert torch.equal(x.grad, (y != 0).float() / 0.75)
    assert dropout(x, 0.25, False) is x and dropout(x, 0.0, True) is x
    module = Dropout(0.25).eval()
    assert module(x) is x and repr(module) == "Dropout(p=0.25, inplace=False)"


def test_masks_follow_the_global_seed(own_mask):
    x = torch.ones(50, 50)
    torch.manual_seed(3)
    a = dropout(x, 0.5, True)
    torch.manual_seed(3)
    b = dropout(x, 0.5, True)
    c = dropout(x, 0.5, True)
    assert torch.equal(a, b) and not torch.equal(b, c)


def test_where_torch_draws_fast_it_is_f_dropout(monkeypatch):
    monkeypatch.setattr(dropout_module, "SLOW_CPU_BERNOULLI", False)
    x = torch.randn(30, 40)
    torch.manual_seed(5)
    ours = dropout(x, 0.3, True)
    torch.manual_seed(5)
    assert torch.equal(ours, F.dropout(x, 0.3, True))


def test_causal_attention_is_sdpa_without_dropout_and_drops_weights_with_it(own_mask):
    torch.manual_seed(1)
    q, k, v = (torch.randn(2, 3, 9, 8, requires_grad=True) for _ in range(3))
    torch.testing.assert_close(causal_attention(q, k, v, 0.0),
                               F.scaled_dot_product_attention(q, k, v, is_causal=True))
    # with v the identity the output rows are the attention weights: each dropped or kept / (1 - p)
    eye = torch.eye(9).expand(2, 3, 9, 9)
    full = causal_attention(q, k, eye, 0.0)
    dropped = causal_attention(q, k, eye, 0.5)
    assert torch.equal(full.triu(1), torch.zeros_like(full))  # causal: no weight on later keys
    lower = torch.ones(9, 9, dtype=torch.bool).tril().expand(2, 3, 9, 9)
    zero = dropped[lower] == 0
    assert torch.allclose(dropped[lower][~zero], 2 * full[lower][~zero])
    assert 0.35 < zero.float().mean().item() < 0.65  # 270 weights, half dropped
    causal_attention(q, k, v, 0.1).sum().backward()
    assert all(t.grad is not None and torch.isfinite(t.grad).all() for t in (q, k, v))
