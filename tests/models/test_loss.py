"""lrngpt.models.loss.cross_entropy: F.cross_entropy(ignore_index=-1)'s value and gradient, float32
under bfloat16 logits, and a clear error for a second backward (the first overwrites what it saved)."""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from lrngpt.models.loss import cross_entropy


def logits_and_targets(n: int = 50, v: int = 13, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    logits = 3 * torch.randn(n, v, generator=gen)
    targets = torch.randint(0, v, (n,), generator=gen)
    targets[::4] = -1
    return logits, targets


def value_and_grad(fn, logits, targets, scale: float = 1.0):
    x = logits.clone().requires_grad_()
    loss = fn(x, targets)
    (scale * loss).backward()
    return loss.detach(), x.grad


def test_value_and_gradient_are_f_cross_entropys_with_ignored_targets():
    logits, targets = logits_and_targets()
    ref = lambda x, t: F.cross_entropy(x, t, ignore_index=-1)  # noqa: E731
    for scale in (1.0, 0.25):
        ours, ours_grad = value_and_grad(cross_entropy, logits, targets, scale)
        theirs, theirs_grad = value_and_grad(ref, logits, targets, scale)
        torch.testing.assert_close(ours, theirs)
        torch.testing.assert_close(ours_grad, theirs_grad)
        assert torch.equal(ours_grad[::4], torch.zeros_like(ours_grad[::4]))  # ignored rows: no gradient
        assert ours_grad[1].abs().sum() > 0


def test_without_gradients_it_is_f_cross_entropy_and_all_ignored_is_nan():
    logits, targets = logits_and_targets()
    with torch.no_grad():
        assert torch.equal(cross_entropy(logits, targets), F.cross_entropy(logits, targets, ignore_index=-1))
    x = logits.clone().requires_grad_()
    assert torch.isnan(cross_entropy(x, torch.full((50,), -1)))


def test_bfloat16_logits_give_a_float32_loss_and_a_bfloat16_gradient():
    logits, targets = logits_and_targets()
    x = logits.to(torch.bfloat16).requires_grad_()
    loss = cross_entropy(x, targets)
    assert loss.dtype == torch.float32
    loss.backward()
    assert x.grad.dtype == torch.bfloat16
    expected = F.cross_entropy(x.detach().float(), targets, ignore_index=-1)
    torch.testing.assert_close(loss.detach(), expected)


def test_a_second_backward_is_refused_not_wrong():
    logits, targets = logits_and_targets()
    x = logits.clone().requires_grad_()
    loss = cross_entropy(x, targets)
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="cannot be differentiated twice"):
        loss.backward()
