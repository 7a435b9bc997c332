"""The optimizer: AdamW with nanoGPT's weight-decay groups (training and the timing probe share it)."""

from __future__ import annotations

import torch
from torch import nn


def make_optimizer(model: nn.Module, cfg) -> torch.optim.AdamW:
    """AdamW; weight decay on matrices and tables only (nanoGPT's convention)."""
    params = list(dict.fromkeys(model.parameters()))  # a tied table is one parameter
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": cfg.weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))
