"""The learning-rate schedule: linear warmup, then a cosine to train.min_lr at train.steps.
"""

from __future__ import annotations

import math

SCHEDULE_KEYS = ("steps", "warmup_steps", "lr", "min_lr")  # what decides lr_at


def lr_at(step: int, cfg) -> float:
    """Linear warmup to lr, then cosine decay to min_lr at train.steps (flat after)."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    span = max(1, cfg.steps - cfg.warmup_steps)
    progress = min(1.0, (step - cfg.warmup_steps) / span)
    return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1 + math.cos(math.pi * progress))


def schedule_change(old, new, step: int) -> str | None:
    """How resuming at `step` with train config `new` instead of `old` changes the learning-rate
    schedule, in one clause (None: it does not)."""
    changed = [k for k in SCHEDULE_KEYS if getattr(old, k) != getattr(new, k)]
    if not changed:
        return None
    what = ", ".join(f"train.{k} {getattr(old, k):,g} -> {getattr(new, k):,g}" for k in changed)
    a, b = lr_at(step, old), lr_at(step, new)
    how = (f"lr at step {step:,} would jump from {_rate(a)} to {_rate(b)}" if not math.isclose(a, b, rel_tol=1e-9)
           else f"lr at step {step:,} stays {_rate(a)}, then follows the new schedule")
    return f"{what} changes the learning-rate schedule: {how}"


def _rate(x: float) -> str:
    """1.0e-3, not 1.0e-03."""
    return f"{x:.1e}".replace("e-0", "e-").replace("e+0", "e+")
