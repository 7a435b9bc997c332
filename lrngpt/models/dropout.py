"""Dropout with its mask drawn by torch.rand on CPUs where torch's own draw is slow.

torch's CPU `bernoulli_` (F.dropout's, and SDPA's dropout) is vectorised only on Intel CPUs with MKL;
elsewhere one double per element in a serial loop took 0.77 of the GPT's attention forward and backward
at the nsmc preset's shape (benchmarks/bench_gpt.py). `torch.rand(...) >= p` gives the same distribution
from another stream, as reproducible: the global generator, which a checkpoint saves.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F


def _slow_cpu_bernoulli() -> bool:
    """True unless torch has MKL and /proc/cpuinfo says Intel (an Intel Mac gets the slower correct mask)."""
    if not torch.backends.mkl.is_available():
        return True
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            return "GenuineIntel" not in f.read(4096)
    except OSError:
        return True


# read once at import, a constant to torch.compile (a call that opens a file would break its graph)
SLOW_CPU_BERNOULLI = _slow_cpu_bernoulli()


def own_mask(x: torch.Tensor) -> bool:
    return x.device.type == "cpu" and SLOW_CPU_BERNOULLI


def dropout(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """F.dropout(x, p, training), its mask from torch.rand where `own_mask` says so."""
    if not training or p == 0:
        return x
    if not own_mask(x):
        return F.dropout(x, p, True)
    # float32 draws whatever x's dtype: a bfloat16 uniform has 8 bits and would round p
    keep = torch.rand(x.shape, device=x.device).ge_(p).div_(1 - p)
    return x * keep.to(x.dtype)


class Dropout(nn.Dropout):
    """nn.Dropout (same repr, no parameters, so checkpoints are unchanged) through `dropout`."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return dropout(x, self.p, self.training)


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, dropout_p: float) -> torch.Tensor:
    """scaled_dot_product_attention(q, k, v, dropout_p, is_causal=True) for training, with the weights'
    dropout from `dropout`: SDPA would draw it with bernoulli_. q, k, v (B, H, T, hd), T queries and keys."""
    B, H, T, hd = q.shape
    mask = torch.full((T, T), float("-inf"), dtype=q.dtype, device=q.device).triu_(1)
    scores = torch.baddbmm(mask, q.reshape(B * H, T, hd), k.reshape(B * H, T, hd).transpose(1, 2),
                           alpha=1 / math.sqrt(hd))
    weights = dropout(scores.softmax(-1), dropout_p, True)
    return torch.bmm(weights, v.reshape(B * H, T, v.size(-1))).view(B, H, T, v.size(-1))
