"""How long a run will take, said before it starts; a run estimated past train.max_days refused before
anything is written (a guard against a typo: a started run is never cut short). Only runs longer than
TIME_ABOVE_S even on the fastest hardware are timed; under torchrun only the optimistic bound refuses.
"""

from __future__ import annotations

from lrngpt.device.distributed import resolve_device
from lrngpt.errors import UserError
from lrngpt.models import GATED_FFNS
from lrngpt.runconfig.schema import RunConfig
from lrngpt.training import timing as run_timing
from lrngpt.training.timing import clock

OPTIMISTIC_STEP_S = 1e-4  # no training step is faster (kernel launches, Python, the optimizer)
OPTIMISTIC_FLOPS = 1e15  # no device is faster (an H100's dense bfloat16, about 1e15 FLOP/s)
TIME_ABOVE_S = 60.0  # runs that take longer than this even at those rates are timed first
DAY = 86400.0


def params_at_least(cfg: RunConfig) -> int:
    """A lower bound on the model's parameters from its config alone (tables and weight matrices;
    building even a meta-device model costs seconds the first time)."""
    if cfg.model_type == "mlp":  # its exact count, built in a millisecond
        return run_timing.params(cfg)
    m, vocab, d = cfg.model, cfg.data.vocab_size, cfg.model.n_embd
    block = 4 * d * d + (3 if m.ffn in GATED_FFNS else 2) * m.ffn_mult * d * d  # attention, feed-forward
    return (vocab + m.context_length) * d + m.n_layer * block + (0 if m.tie_embeddings else vocab * d)


def optimistic_seconds(cfg: RunConfig, steps: int) -> float:
    """A lower bound on the time of `steps` training steps: the fastest step, or 6 FLOPs per parameter
    (at least params_at_least) and token at the fastest device's rate, whichever is slower."""
    tokens = steps * cfg.train.tokens_per_step
    return max(steps * OPTIMISTIC_STEP_S, 6.0 * params_at_least(cfg) * tokens / OPTIMISTIC_FLOPS)


def plan_duration(cfg: RunConfig, steps: int, device: str, log=None, timed: bool = True,
                  what: str = "this run") -> float | None:
    """Estimated seconds for `steps` more steps, or None for a run too short to time; a run estimated
    past train.max_days is refused. `timed=False` (torchrun): the optimistic bound only."""
    tc = cfg.train
    floor = optimistic_seconds(cfg, steps)  # (no steps left: 0, not timed)
    if floor < TIME_ABOVE_S:
        return None
    if timed:
        device = resolve_device(device)  # (a sweep hands in train.device as the config has it)
        timing = run_timing.probe(cfg, device, max_tokens=tc.tokens_per_step)  # (a module's name: tests patch it)
        per_step = timing["train_s_per_token"] * tc.tokens_per_step
        seconds = run_timing.estimate_seconds(cfg, timing, steps=steps)  # and the evaluations on the way
        a_step = f"{per_step * 1e3:.3g} ms" if per_step < 10 else f"{per_step:.3g} s"
        said = f"about {clock(seconds)} on {device} (timed here: {a_step} a step)"
    else:
        seconds, said = floor, f"at least {clock(floor)} even on the fastest hardware"
    if 0 < tc.max_days * DAY < seconds:
        raise UserError(f"{what} ({steps:,} steps of {tc.batch_size} x {tc.seq_len} tokens) would take {said}, more "
                        f"than train.max_days={tc.max_days:g} days; lower train.steps, or raise train.max_days (0: no "
                        "limit) to train anyway")
    if log is not None and timed:
        log(f"plan: {steps:,} steps of {tc.batch_size} x {tc.seq_len} tokens take {said}"
            + (f"; train.max_days={tc.max_days:g} refuses a run estimated to take longer" if tc.max_days > 0 else ""))
    return seconds if timed else None
