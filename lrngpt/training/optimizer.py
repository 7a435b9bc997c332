"""The optimizer: AdamW with nanoGPT's weight-decay groups (training and the timing probe share it).

It is torch's fused AdamW (one kernel per parameter tensor) wherever torch has one for the parameters'
device: on a CPU the default for-loop AdamW launches about ten small kernels per tensor, which at the
cpu preset's shape was 5x the fused one's time and a tenth of the whole training step
(benchmarks/bench_gpt.py). The fused kernel rounds differently from the for-loop one, so a run
started before this change and resumed after it is not bit-exact with either; a run resumes on the
implementation it was made with here (`load_optimizer_state`).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

FUSED_DEVICES = ("cpu", "cuda")  # where torch's fused AdamW runs on float parameters


def uses_fused(params: Sequence[torch.Tensor]) -> bool:
    return bool(params) and all(p.device.type in FUSED_DEVICES and p.is_floating_point() for p in params)


def make_optimizer(model: nn.Module, cfg) -> torch.optim.AdamW:
    """AdamW; weight decay on matrices and tables only (nanoGPT's convention)."""
    params = list(dict.fromkeys(model.parameters()))  # a tied table is one parameter
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": cfg.weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    fused = uses_fused(params)
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), fused=fused or None)


def load_optimizer_state(optimizer: torch.optim.Optimizer, state: dict) -> None:
    """optimizer.load_state_dict, keeping the implementation (fused or not) that make_optimizer chose:
    torch would take it from the saved groups, so a checkpoint written before AdamW was fused would
    switch a resumed run back to the slower for-loop kernels."""
    chosen = [{k: g.get(k) for k in ("fused", "foreach")} for g in optimizer.param_groups]
    optimizer.load_state_dict(state)
    for group, flags in zip(optimizer.param_groups, chosen, strict=True):
        group.update(flags)
        if group.get("fused"):  # the fused kernel keeps `step` as float32 on the parameter's device
            for p in group["params"]:
                st = optimizer.state.get(p)
                if st and isinstance(st.get("step"), torch.Tensor):
                    st["step"] = st["step"].to(dtype=torch.float32, device=p.device)
