"""How long a run takes on this machine: a short measured probe (`probe`), extrapolated
(`estimate_seconds`). Probes are cached in CACHE_DIR/probes.json under this machine, the model's
shape, batch and steps, while younger than CACHE_TTL_S and the load per core within LOAD_SLACK.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import torch

from lrngpt.corpora.stat_cache import read_entries, write_entries
from lrngpt.device.memory import check_memory, training_memory
from lrngpt.device.precision import cpu_name
from lrngpt.models.build import build_model, param_breakdown
from lrngpt.runconfig.schema import RunConfig
from lrngpt.training.optimizer import make_optimizer

PROBE_STEPS = 3
PROBE_TOKENS = 512
# Untimed steps before a probe's timed ones: a small GPT's second and third steps still run about 1.35x its
# steady pace on a 2-core EPYC (the fourth on is steady), which a 2-step probe would extrapolate to the run.
WARMUP_STEPS = 3
YEAR = 365.25 * 86400
CACHE_NAME = "probes.json"
# Hours, not days: a probe is the pace of this machine as it is now (a laptop on battery, another program).
CACHE_TTL_S = 6 * 3600.0
# A process gets about 1 / (1 + load per core) of a core, so a probe's pace holds while 1 + the load per core
# is within this factor of what it was: a quiet machine's 0 to 1 (the probe's own threads), a busy one's
# 4.5 to 6 as its programs come and go, but not a quiet probe on a machine turned busy, or back.
LOAD_SLACK = 1.5
# False while a command that promises to write nothing (lrn doctor) probes: remembered probes are read, not written.
_REMEMBER: ContextVar[bool] = ContextVar("remember_probes", default=True)


@contextmanager
def read_only_cache() -> Iterator[None]:
    """Probes inside this block read the cache and never write it (nor create the cache directory)."""
    token = _REMEMBER.set(False)
    try:
        yield
    finally:
        _REMEMBER.reset(token)


def probe(cfg: RunConfig, device: str = "cpu", max_tokens: int = PROBE_TOKENS, steps: int = PROBE_STEPS,
          barrier=None) -> dict:
    """Seconds per training and per evaluated token of `cfg`'s model on `device`, from `steps` timed
    steps of at most `max_tokens` tokens, remembered (`cached`). With `barrier` (packed probes) each
    timed part starts when every probe sharing it is ready; not remembered (the caller does)."""
    seq_len = cfg.train.seq_len
    assert seq_len is not None  # a RunConfig resolves it
    batch = max(1, min(cfg.train.batch_size, max_tokens // seq_len))
    if barrier is not None:
        return _measure(cfg, device, batch, steps, barrier)
    timing = cached(["alone", shape(cfg, device, batch), steps], lambda: _measure(cfg, device, batch, steps, None))
    assert timing is not None  # a probe alone always measures
    return timing


_PARAMS: dict[str, int] = {}


def params(cfg: RunConfig) -> int:
    """`cfg`'s model's parameter count, counted once a shape in this process (a plan asks hundreds of
    times), the model built on the meta device (a millisecond for the chapter's MLP, no weights)."""
    key = json.dumps([cfg.model_type, cfg.model_dict()], sort_keys=True)
    if key not in _PARAMS:
        _PARAMS[key] = param_breakdown(cfg.model_type, cfg.model)["total"]
    return _PARAMS[key]


def shape(cfg: RunConfig, device: str, batch: int) -> list:
    """What a probe's time depends on of `cfg`: the model, the vocabulary, the batch and the device."""
    return [cfg.model_type, cfg.model_dict(), cfg.data.vocab_size, batch, cfg.train.seq_len, device]


def check_fits(cfg: RunConfig, batch: int, device: str, what: str) -> None:
    """Refuse a model whose weights, gradients, AdamW moments and one batch of logits cannot fit `device`."""
    n, seq_len, vocab = params(cfg), cfg.train.seq_len, cfg.data.vocab_size
    assert seq_len is not None  # a RunConfig resolves it
    check_memory(training_memory(n, batch, seq_len, vocab), f"{what} ({n:,} parameters, {batch} x {seq_len} x "
                 f"{vocab} logits per step)", "lower train.batch_size, train.seq_len or the model's size", device)


def _measure(cfg: RunConfig, device: str, batch: int, steps: int, barrier) -> dict:
    seq_len = cfg.train.seq_len
    assert seq_len is not None
    check_fits(cfg, batch, device, "timing a model")  # as training checks it
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
        for _ in range(WARMUP_STEPS):  # allocations and first-call costs are not the steady state
            fn()
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


def machine() -> str:
    """What every probe's time depends on besides its model: the CPU, its cores, torch's threads and version."""
    return f"{cpu_name()} | {os.cpu_count()} cores | {torch.get_num_threads()} threads | torch {torch.__version__}"


def load_per_core() -> float:
    """The 1-minute load average per core (0 where the system has none: Windows)."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except (OSError, AttributeError):
        return 0.0


def _fresh(entry, load: float) -> bool:
    t = entry.get("timing") if isinstance(entry, dict) else None
    times = [entry.get("at"), entry.get("load"), *(t.get(k) for k in ("train_s_per_token", "eval_s_per_token"))] \
        if isinstance(t, dict) else [None]
    return all(isinstance(x, int | float) and math.isfinite(x) and x >= 0 for x in times) and \
        0 <= time.time() - entry["at"] < CACHE_TTL_S and max(1 + entry["load"], 1 + load) <= \
        LOAD_SLACK * min(1 + entry["load"], 1 + load)


def cached(what: list, measure: Callable[[], dict | None]) -> dict | None:
    """The probe `what` (JSON-able: its kind, shape, steps) remembered for this machine, else `measure()`
    remembered (a None, a probe that could not run, is not)."""
    key = hashlib.sha256(json.dumps([machine(), *what], sort_keys=True).encode()).hexdigest()
    load, entries = load_per_core(), read_entries(CACHE_NAME)
    if _fresh(entries.get(key), load):  # said as its age ("remembered_s")
        return {**entries[key]["timing"], "remembered_s": round(time.time() - entries[key]["at"])}
    timing = measure()
    if timing is not None and _REMEMBER.get():
        kept = {k: v for k, v in entries.items() if _fresh(v, load)}
        kept[key] = {"at": time.time(), "load": load, "timing": timing}
        write_entries(CACHE_NAME, kept, machine=machine())
    return timing


def between(ends: list[tuple[int, dict]], params: int) -> dict:
    """The time per token of a model of `params` parameters: linear between the probed (params, timing)
    nearest below and above it (the ends when it lies outside them)."""
    ends = sorted(ends, key=lambda e: e[0])
    lo = max((e for e in ends if e[0] <= params), key=lambda e: e[0], default=ends[0])
    hi = min((e for e in ends if e[0] >= params), key=lambda e: e[0], default=ends[-1])
    f = (params - lo[0]) / max(1, hi[0] - lo[0])
    return {k: lo[1][k] + f * (hi[1][k] - lo[1][k]) for k in ("train_s_per_token", "eval_s_per_token")}


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


def estimate_seconds(cfg: RunConfig, timing: dict, val_tokens: int | None = None,
                     steps: int | None = None) -> float:
    """The probe's time per token, extrapolated to `steps` training steps (train.steps) and the tokens
    evaluated: step 0, the periodic evaluations, the final full val split (`val_tokens`: unknown, as
    many as a periodic one), train bpb."""
    tc, steps = cfg.train, cfg.train.steps if steps is None else steps
    periodic = tc.eval_tokens or val_tokens or 0
    evaluated = (1 + steps // tc.eval_every) * periodic + (val_tokens or periodic) + tc.train_eval_tokens
    return steps * tc.tokens_per_step * timing["train_s_per_token"] + evaluated * timing["eval_s_per_token"]


def clock(seconds: float) -> str:
    """3 s, 4.2 min, 2.5 h, 3.1 days: how an estimate reads."""
    for below, unit, size, digits in ((10, "s", 1, 1), (90, "s", 1, 0), (90 * 60, "min", 60, 1),
                                      (48 * 3600, "h", 3600, 1), (2 * YEAR, "days", 86400, 1)):
        if seconds < below:
            return f"{seconds / size:.{digits}f} {unit}"
    years = seconds / YEAR
    return f"{years:,.0f} years" if years < 1e6 else f"{years / 1e6:,.1f} million years" if years < 1e9 \
        else f"{years:.2g} years"
