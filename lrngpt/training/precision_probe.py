"""Seconds per training step in float32 and in bfloat16 autocast, timed in interleaved rounds (median
each), for a budget's bfloat16 offer (lrngpt.experiments.bf16_offer).
"""

from __future__ import annotations

import statistics
import time

import torch

from lrngpt.training.timing import probe_setup

DTYPES = {"float32": None, "bfloat16": torch.bfloat16}
ROUNDS = 3


def dtype_step_seconds(cfg, device: str = "cpu", rounds: int = ROUNDS) -> dict[str, float]:
    """Median seconds of one training step of `cfg`'s model per dtype (float32, bfloat16), after a
    warm-up step of each; the global random generator is left as it was found."""
    model, optimizer, x, y = probe_setup(cfg, device, cfg.train.batch_size)
    kind = torch.device(device).type

    def step(dtype) -> float:
        t0 = time.perf_counter()
        with torch.autocast(device_type=kind, dtype=dtype, enabled=dtype is not None):
            _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if kind == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - t0

    model.train()
    for dtype in DTYPES.values():
        step(dtype)  # warm-up: first-call costs (bfloat16 kernels, allocations) are not the steady state
    times: dict[str, list[float]] = {name: [] for name in DTYPES}
    for _ in range(max(1, rounds)):
        for name, dtype in DTYPES.items():
            times[name].append(step(dtype))
    return {name: statistics.median(ts) for name, ts in times.items()}
