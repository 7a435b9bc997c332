"""How many of a sweep's points train at once, chosen from a measurement, never assumed.

The grid's smallest and largest model are timed alone with all T threads and as N copies at once of
T // N threads (`probe_packed`); the gain of N is N x alone over packed seconds per token. A sweep
packs the best N when its gain is at least PACK_GAIN, and trains one point after another otherwise
(one point, a GPU, one thread, or less than MIN_PACK_SECONDS of work). A point's numbers do not depend
on it (tests/experiments/test_packing.py).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import torch

from lrngpt.device.distributed import resolve_device
from lrngpt.errors import UserError
from lrngpt.experiments.workers import probe_at_once
from lrngpt.training import timing as run_timing
from lrngpt.training.timing import clock

PACK_GAIN = 1.1  # the measured gain a sweep packs at: below it the probe's noise could be all of it
MIN_PACK_SECONDS = 60.0  # points that take less one after another are not worth the worker processes


def threads_here() -> int:
    """The intra-op threads one point trains with when it runs alone (torch's count)."""
    return max(1, torch.get_num_threads())


def candidates(threads: int, n_points: int) -> list[int]:
    """The numbers of points at once worth measuring: 2, and every thread its own point."""
    return sorted({n for n in (2, threads) if 2 <= n <= min(threads, n_points)})


def split_threads(threads: int, n: int) -> int:
    return max(1, threads // n)


def order(points: list, params: Callable) -> list:
    """The points as a packed sweep starts them: the largest model first, then by index."""
    return sorted(points, key=lambda p: (-params(p), p.index))


def seconds_of(cfg, timed: list, val_tokens: int | None = None) -> float:
    """A point's seconds, its time per token interpolated by parameters between `timed` (parameters, timing)."""
    return run_timing.estimate_seconds(cfg, run_timing.between(timed, run_timing.params(cfg)), val_tokens)


def wall_seconds(points: list, seconds: dict, n: int) -> float:
    """The wall seconds of `points` taking `seconds` (by name), `n` at once in the order a sweep starts them."""
    return makespan([seconds[p.name] for p in order(points, lambda q: run_timing.params(q.config))], n)


def ends(cfgs: list) -> list:
    """The smallest and the largest model of `cfgs` by parameters (one when they are one)."""
    sized = sorted(cfgs, key=run_timing.params)
    return [sized[0]] + ([sized[-1]] if run_timing.params(sized[-1]) != run_timing.params(sized[0]) else [])


def makespan(seconds: list[float], n: int) -> float:
    """The wall seconds of runs taking `seconds`, each started on the first of `n` slots to come free."""
    slots = [0.0] * max(1, n)  # a heap: the slot to come free first on top
    for s in seconds:
        heapq.heapreplace(slots, slots[0] + s)
    return max(slots)


def one(why: str, forced: int | None = None) -> dict:
    return {"points_at_once": 1, "threads": threads_here(), "why": why, "gain": None, "slowdown": None,
            "forced": forced}


def choose(ends: list, alone: list[dict], n_points: int, device: str, forced: int | None, serial_s: float | None,
           log=None, packed_fn: Callable | None = None, probe_tokens: int | None = None) -> dict:
    """How many of `n_points` train at once, from `alone` (the grid's `ends` probed at all threads) and a
    packed probe of N copies (`packed_fn`); `forced`: --points-at-once."""
    log = log or (lambda m: None)
    threads = threads_here()
    if forced == 1:
        return one("--points-at-once 1: one point after another", forced)
    if not device.startswith("cpu"):
        return one(f"the points train on {device}: one after another (packing splits CPU threads)", forced)
    if n_points < 2:
        return one("one point to train", forced)
    if threads < 2 and not forced:
        return one("torch has 1 thread here: nothing to split between points", forced)
    if not forced and serial_s is not None and serial_s < MIN_PACK_SECONDS:
        return one(f"the points take about {clock(serial_s)} one after another: too short to gain from starting "
                   "worker processes", forced)
    packed_fn = packed_fn or probe_packed
    tried = [min(forced, n_points)] if forced else candidates(threads, n_points)
    alone_s = sum(t["train_s_per_token"] for t in alone)
    cut = {"max_tokens": probe_tokens} if probe_tokens else {}
    best: dict | None = None
    for n in tried:
        k = split_threads(threads, n)
        log(f"timing {n} points at once ({k} thread{'s' if k > 1 else ''} each) to choose how many train at once")
        probed = [packed_fn(cfg, device, n, k, **cut) for cfg in ends]
        packed = [t for t in probed if t is not None]
        if len(packed) < len(probed):  # a probe that could not run: no measurement of n
            continue
        packed_s = sum(t["train_s_per_token"] for t in packed)
        gain = n * alone_s / packed_s if packed_s > 0 else 0.0
        if best is None or gain > best["gain"]:
            best = {"points_at_once": n, "threads": k, "gain": round(gain, 3),
                    "slowdown": round(packed_s / alone_s, 3) if alone_s > 0 else None, "forced": forced,
                    "packed": packed}
    widths = " and ".join(f"d={c.model.n_embd}" for c in ends)
    if best is None and forced:
        n = min(forced, n_points)
        return one(f"--points-at-once {n} (the packed probe of {widths} could not run here)", forced) | \
            {"points_at_once": n, "threads": split_threads(threads, n)}
    if best is None:
        return one(f"the packed probe of {widths} could not run here: one point after another", forced)
    n, k, gain = best["points_at_once"], best["threads"], best["gain"]
    measured = (f"{n} points x {k} thread{'s' if k > 1 else ''} read {gain:.2f}x the tokens per second of one point "
                f"x {threads} threads (measured on {widths})")
    if forced:
        return {**best, "why": f"--points-at-once {n}: {measured}"}
    if gain < PACK_GAIN:
        return one(f"{measured}, under the {PACK_GAIN}x it takes: one point after another", forced) | \
            {"gain": gain, "tried": n}
    return {**best, "why": measured}


def kept(packing: dict) -> dict:
    """What sweep.json, the dry run's --json and the run's result keep of the choice (numbers and the line)."""
    return {k: packing.get(k) for k in ("points_at_once", "threads", "why", "gain", "slowdown", "forced")}


def text(packing: dict) -> str:
    return f"points at once: {packing['points_at_once']} (why: {packing['why']})"


def probe_packed(cfg, device: str, n: int, threads: int, max_tokens: int | None = None, steps: int = 2) -> dict | None:
    """`n` copies of `cfg`'s probe at once in workers of `threads` threads (remembered); None on a failure."""
    tokens = max_tokens or cfg.train.tokens_per_step
    batch = max(1, min(cfg.train.batch_size, tokens // cfg.train.seq_len))
    return run_timing.cached(["packed", n, threads, run_timing.shape(cfg, device, batch), steps],
                             lambda: probe_at_once(cfg, device, n, threads, tokens, steps))


def for_sweep(budget: dict | None, points: list, forced: int | None, val_tokens: dict | None = None, log=None) -> dict:
    """The points at once of a sweep's `points` still to train: `forced`, else its budget's plan's, else measured
    now (nothing is probed when no measurement is needed)."""
    stored = (budget or {}).get("packing")
    if forced is None and isinstance(stored, dict) and isinstance(stored.get("points_at_once"), int):
        n = max(1, min(stored["points_at_once"], len(points) or 1))
        return {**stored, "points_at_once": n, "threads": split_threads(threads_here(), n),
                "why": f"the budget's plan: {stored.get('why')}", "planned": True}
    if not points:
        return one("no point to train", forced)
    cfgs = ends([p.config for p in points])
    try:
        device = resolve_device(cfgs[0].train.device)
    except UserError:  # a GPU sweep planned where there is none (a login node): it is not run here
        return one(f"the points train on {cfgs[0].train.device}, not on this machine", forced)
    if forced == 1 or not device.startswith("cpu") or len(points) < 2 or (threads_here() < 2 and not forced):
        return choose([], [], len(points), device, forced, None)  # answered without a probe
    alone = [run_timing.probe(cfg, device) for cfg in cfgs]  # the dry run's probe: a step of PROBE_TOKENS
    probed = [(run_timing.params(cfg), t) for cfg, t in zip(cfgs, alone, strict=True)]
    serial = sum(seconds_of(p.config, probed, (val_tokens or {}).get(p.name)) for p in points)
    return choose(cfgs, alone, len(points), device, forced, serial, log, probe_tokens=run_timing.PROBE_TOKENS)
