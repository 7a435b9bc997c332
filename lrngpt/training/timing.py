"""How long a run takes on this machine: a short measured probe, extrapolated (a sweep's dry run
and budget plan, and a long `lrn train` before it starts: lrngpt.training.duration).

`probe(cfg, device)` builds the point's model on the device, takes one warm-up and PROBE_STEPS
timed training steps (forward, backward, AdamW) on random token ids, and times as many
forward passes for the evaluations. A probe step holds at most PROBE_TOKENS tokens (the batch is
cut to fit), and the time per token is scaled back up to the point's batch, so a full-scale point
is probed in seconds. `estimate_seconds` extrapolates to the point's steps and evaluations. It is
an estimate: a busy machine, a warm cache or a bigger batch's better use of the cores change it.
"""

from __future__ import annotations

import time

import torch

from lrngpt.device.memory import check_memory, training_memory
from lrngpt.models.build import build_model, param_breakdown
from lrngpt.runconfig.schema import RunConfig
from lrngpt.training.optimizer import make_optimizer

PROBE_STEPS = 3
PROBE_TOKENS = 512
YEAR = 365.25 * 86400


def probe(cfg: RunConfig, device: str = "cpu", max_tokens: int = PROBE_TOKENS, steps: int = PROBE_STEPS,
          barrier=None) -> dict:
    """Seconds per training token and per evaluated token of `cfg`'s model on `device`, from `steps`
    timed steps of at most `max_tokens` tokens (a budget plan probes its real batch: a cut batch
    uses the cores less well and overstates the time per token). `barrier` (a multiprocessing
    Barrier): each timed part starts when every probe sharing it is ready (points at once)."""
    tc = cfg.train
    seq_len = tc.seq_len
    assert seq_len is not None  # a RunConfig resolves it
    batch = max(1, min(tc.batch_size, max_tokens // seq_len))
    # as training checks it: weights, gradients, AdamW moments and one batch of logits must fit
    params = param_breakdown(cfg.model_type, cfg.model)["total"]
    check_memory(training_memory(params, batch, seq_len, cfg.data.vocab_size),
                 f"timing a model of {params:,} parameters ({batch} x {seq_len} x {cfg.data.vocab_size} logits)",
                 "lower the model's size, train.batch_size or train.seq_len", device)
    model, optimizer, x, y = probe_setup(cfg, device, batch)

    def sync():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    def train_step():
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    def timed(fn) -> float:
        fn()  # warm-up: allocations and first-call costs are not the steady state
        sync()
        if barrier is not None:  # probes at once: timed only while all of them run
            barrier.wait()
        t0 = time.perf_counter()
        for _ in range(steps):
            fn()
        sync()
        return (time.perf_counter() - t0) / (steps * batch * seq_len)

    model.train()
    train_per_token = timed(train_step)
    model.eval()
    with torch.inference_mode():
        eval_per_token = timed(lambda: model(x))
    return {"train_s_per_token": train_per_token, "eval_s_per_token": eval_per_token, "probe_batch": batch,
            "probe_steps": steps}


def probe_setup(cfg: RunConfig, device: str, batch: int) -> tuple:
    """What a probe times: `cfg`'s model (seed 0) on `device`, its AdamW, and one `batch` of random
    token windows as (inputs, targets); the global random generator is left as it was found."""
    rng_state = torch.get_rng_state()
    torch.manual_seed(0)
    model = build_model(cfg.model_type, cfg.model).to(device)
    optimizer = make_optimizer(model, cfg.train)
    seq_len = cfg.train.seq_len
    assert seq_len is not None  # a RunConfig resolves it
    ids = torch.randint(0, cfg.data.vocab_size, (batch, seq_len + 1)).to(device)
    torch.set_rng_state(rng_state)
    return model, optimizer, ids[:, :-1], ids[:, 1:]


def eval_tokens_of(cfg: RunConfig, val_tokens: int | None = None) -> int:
    """Tokens a run evaluates: step 0, the periodic evaluations, the final full val split, train bpb."""
    tc = cfg.train
    periodic = tc.eval_tokens or val_tokens or 0
    n_evals = 1 + tc.steps // max(1, tc.eval_every)
    return n_evals * periodic + (val_tokens or periodic) + (tc.train_eval_tokens or 0)


def estimate_seconds(cfg: RunConfig, timing: dict, val_tokens: int | None = None) -> float:
    """The probe's time per token, extrapolated to the run's training steps and evaluations."""
    tc = cfg.train
    train = tc.steps * tc.tokens_per_step * timing["train_s_per_token"]
    return train + eval_tokens_of(cfg, val_tokens) * timing["eval_s_per_token"]


def clock(seconds: float) -> str:
    """3 s, 4.2 min, 2.5 h, 3.1 days: how an estimate reads."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.1f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds < 2 * YEAR:
        return f"{seconds / 86400:.1f} days"
    years = seconds / YEAR
    return f"{years:,.0f} years" if years < 1e6 else f"{years / 1e6:,.1f} million years" if years < 1e9 \
        else f"{years:.2g} years"
