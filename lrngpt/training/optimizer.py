"""AdamW with nanoGPT's weight-decay groups, fused wherever torch has it (the CPU for-loop version
was 5x slower); the two round differently, so a run resumes on the one it was made with.
"""

from __future__ import annotations

import torch
from torch import nn

FUSED_DEVICES = ("cpu", "cuda")  # where torch's fused AdamW runs on float parameters


def make_optimizer(model: nn.Module, cfg) -> torch.optim.AdamW:
    """AdamW; weight decay on matrices and tables only (nanoGPT's convention)."""
    params = list(dict.fromkeys(model.parameters()))  # a tied table is one parameter
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": cfg.weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    fused = bool(params) and all(p.device.type in FUSED_DEVICES and p.is_floating_point() for p in params)
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
