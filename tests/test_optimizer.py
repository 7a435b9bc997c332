"""make_optimizer: torch's fused AdamW on a CPU, the same algorithm as the for-loop one, and a resume
keeps the fused kernel whatever implementation the checkpoint was written with."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import torch
from torch import nn

from lrngpt.training.optimizer import load_optimizer_state, make_optimizer

CFG = SimpleNamespace(lr=1e-2, beta1=0.9, beta2=0.95, weight_decay=0.1)


def model(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Embedding(11, 8), nn.Linear(8, 16), nn.LayerNorm(16), nn.Linear(16, 11))


def train(m: nn.Module, opt: torch.optim.Optimizer, steps: int, seed: int = 1) -> None:
    gen = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        x = torch.randint(0, 11, (4, 5), generator=gen)
        loss = nn.functional.cross_entropy(m(x).flatten(0, 1), x.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()


def test_the_cpu_optimizer_is_fused_adamw_with_decay_on_matrices_only():
    opt = make_optimizer(model(), CFG)
    assert isinstance(opt, torch.optim.AdamW)
    assert [g["fused"] for g in opt.param_groups] == [True, True]
    decayed, plain = opt.param_groups
    assert decayed["weight_decay"] == 0.1 and plain["weight_decay"] == 0.0
    assert sorted(p.dim() for p in decayed["params"]) == [2, 2, 2]
    assert sorted(p.dim() for p in plain["params"]) == [1, 1, 1, 1]


def test_fused_adamw_follows_the_for_loop_one_to_rounding():
    fused_model, loop_model = model(), model()
    fused = make_optimizer(fused_model, CFG)
    groups = [{"params": g["params"], "weight_decay": g["weight_decay"]} for g in make_optimizer(loop_model, CFG).param_groups]
    loop = torch.optim.AdamW(groups, lr=CFG.lr, betas=(CFG.beta1, CFG.beta2))
    assert loop.param_groups[0]["fused"] is None
    train(fused_model, fused, 20)
    train(loop_model, loop, 20)
    start = model()
    for a, b, s in zip(fused_model.parameters(), loop_model.parameters(), start.parameters(), strict=True):
        assert not torch.equal(a, s)  # it trained
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_a_resumed_optimizer_is_bit_exact_with_a_straight_one():
    first_model = model()
    first = make_optimizer(first_model, CFG)
    train(first_model, first, 3)
    # a copy, as a checkpoint file is: state_dict() hands out the live moment tensors
    saved = copy.deepcopy({"model": first_model.state_dict(), "optimizer": first.state_dict()})
    resumed_model = model(seed=5)
    resumed_model.load_state_dict(saved["model"])
    resumed = make_optimizer(resumed_model, CFG)
    load_optimizer_state(resumed, saved["optimizer"])
    train(resumed_model, resumed, 3, seed=2)
    train(first_model, first, 3, seed=2)  # the same three batches after the save, without a reload
    for a, b in zip(resumed_model.parameters(), first_model.parameters(), strict=True):
        assert torch.equal(a, b)


def test_a_checkpoint_of_the_for_loop_adamw_resumes_on_the_fused_kernel():
    old_model = model()
    groups = [{"params": g["params"], "weight_decay": g["weight_decay"]} for g in make_optimizer(old_model, CFG).param_groups]
    old = torch.optim.AdamW(groups, lr=CFG.lr, betas=(CFG.beta1, CFG.beta2))
    train(old_model, old, 3)
    saved = copy.deepcopy(old.state_dict())
    assert saved["param_groups"][0]["fused"] is None
    new = make_optimizer(old_model, CFG)
    load_optimizer_state(new, saved)
    assert [g["fused"] for g in new.param_groups] == [True, True]
    assert all(new.state[p]["step"].item() == 3.0 for p in old_model.parameters())
    before = [p.detach().clone() for p in old_model.parameters()]
    train(old_model, new, 1)
    assert all(not torch.equal(a, b) for a, b in zip(before, old_model.parameters(), strict=True))
