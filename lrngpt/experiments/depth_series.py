"""Width against depth as a scale series: the laptop protocol where Kaplan et al.'s claim can show.

Small shapes (SHAPES: about 31K non-embedding parameters, d / L 51 down to 1.08) trained at increasing
tokens per parameter (the levels, RATIO apart), each level one ordinary width-depth sweep.
`plan_series(minutes)` keeps the largest top level of TOPS whose levels fit (docs/width-depth-study.md
has the measurements that chose it); lrngpt.experiments.shape_findings judges the finished levels.
"""

from __future__ import annotations

import math
import time
from typing import Any

from lrngpt.corpora.base import parse_size
from lrngpt.corpora.registry import load_corpus
from lrngpt.data.prepared import cached_prepared, data_key
from lrngpt.device.distributed import resolve_device
from lrngpt.errors import BudgetTooShort, option
from lrngpt.experiments import packing
from lrngpt.experiments.budget import (
    POINT_OVERHEAD_S,
    PREPARE_S,
    PREPARE_S_PER_MB,
    PROBE_MARGIN,
    START_S,
    check_minutes,
)
from lrngpt.experiments.grid import resolve_sweep
from lrngpt.experiments.presets import SHAPE_AXIS, STUDIES
from lrngpt.runconfig.schema import from_dict
from lrngpt.training import timing as run_timing

SOURCE = "width-depth"
# (n_layer, n_embd, n_head): heads of 7 to 17 dimensions that divide the width
SHAPES = [[1, 51, 3], [2, 36, 3], [10, 16, 2], [13, 14, 2]]
SEEDS = [1337, 1338]
RATIO, LEVELS = 4, 3  # a level reads RATIO x the tokens of the one below; a series has LEVELS levels
WARMUP_SHARE = 0.05  # of each run's steps (at least one)
EVALS = 4  # periodic evaluations a run
SERIES_SUMMARY_S = 12.0  # a level's summary and figures, measured at most 10 s here (the budget's SUMMARY_S)
PROTOCOLS: dict[str, dict[str, Any]] = {
    # tokens per non-embedding parameter of the top level, tried largest first
    "cpu": {"scale": "cpu", "tops": [512, 256, 128, 64, 32], "min_steps": 20, "corpus": "stories:10MB",
            "shapes": SHAPES, "levels": LEVELS,
            "set": {"data.vocab_size": 512, "model.context_length": 64, "train.batch_size": 32,
                    "train.eval_tokens": 20_000, "train.train_eval_tokens": 20_000}},
    # tests: three of the shapes (d / L still 47x), two levels, a few steps each
    "tiny": {"scale": "tiny", "tops": [0.04, 0.02, 0.01], "min_steps": 1, "corpus": "stories:300KB",
             "shapes": [SHAPES[0], SHAPES[1], SHAPES[-1]], "levels": 2,
             "set": {"data.vocab_size": 512, "model.context_length": 32, "train.batch_size": 4,
                     "train.eval_tokens": 2_000, "train.train_eval_tokens": 2_000}},
}
# stories at vocabulary 512: `lrn data prepare --corpus stories:20MB --vocab-size 512` gave 8,647,321 training
# tokens of its 18,979,205 bytes (2.19 bytes a token) and 465,634 validation tokens
BYTES_PER_TOKEN_512 = 2.19
CHAPTER = ("the chapter, citing Kaplan et al. (2020): with the non-embedding parameters fixed, d_model / n_layer "
           "varied 40-fold changes the loss by at most 3%; their models (768K to 1.5B non-embedding parameters, "
           "context 1,024, vocabulary 50,257) were trained on up to 23B tokens of WebText2, far more tokens per "
           "parameter than a 2-core laptop gives a chapter-sized model")


def non_embedding(n_layer: int, n_embd: int) -> int:
    """A pre-norm GPT's blocks and final LayerNorm: 12 L d^2 + 4 L d + 2 d (no linear biases)."""
    return 12 * n_layer * n_embd ** 2 + 4 * n_layer * n_embd + 2 * n_embd


def shape_table(shapes: list[list[int]]) -> list[dict]:
    return [{"n_layer": n, "n_embd": d, "n_head": h, "non_embedding": non_embedding(n, d), "ratio": d / n}
            for n, d, h in shapes]


def level(tokens_per_param: float, protocol: dict) -> dict:
    """One level as a sweep of the width-depth study, its steps from the tokens per parameter."""
    shapes = protocol["shapes"]
    params = sum(non_embedding(n, d) for n, d, _ in shapes) / len(shapes)
    per_step = protocol["set"]["train.batch_size"] * protocol["set"]["model.context_length"]
    steps = max(protocol["min_steps"], round(tokens_per_param * params / per_step))
    sets = {**protocol["set"], "data.corpus": protocol["corpus"], "train.steps": steps,
            "train.warmup_steps": max(1, round(steps * WARMUP_SHARE)), "train.eval_every": max(1, steps // EVALS),
            "train.log_every": max(1, steps // EVALS)}
    return {"name": f"tpp-{tokens_per_param:g}", "tokens_per_param": float(tokens_per_param), "source": SOURCE,
            "scale": protocol["scale"], "set": [f"{k}={v}" for k, v in sets.items()],
            "axes": {SHAPE_AXIS: [list(s) for s in shapes], "train.seed": list(SEEDS)},
            "steps": steps, "tokens_read": steps * per_step}


def _tokens(corpus: str, share: float) -> int:
    """The tokens of `share` of the generated stories `corpus` at vocabulary 512."""
    return int(parse_size(corpus.removeprefix("stories:")) * share / BYTES_PER_TOKEN_512)


def plan_series(minutes: float, *, probe_fn=None, pack_fn=None, log=None, tiny: bool = False) -> dict:
    """The levels that fit `minutes` here (JSON-able); BudgetTooShort naming the minutes that fit."""
    minutes, log = check_minutes(minutes, 15), log or (lambda m: None)
    protocol = PROTOCOLS["tiny" if tiny else "cpu"]
    # each shape's timing and the points at once a level trains (packing), then the seconds of preparing the
    # corpus when the shared cache does not hold it yet
    t0, shapes = time.perf_counter(), SHAPE_AXIS + "=" + ",".join(":".join(map(str, s)) for s in protocol["shapes"])
    sweep = resolve_sweep(SOURCE, protocol["scale"], level(protocol["tops"][-1], protocol)["set"],
                          [shapes, f"train.seed={SEEDS[0]}"])
    cfgs = [p.config for p in sweep.points]
    device = resolve_device(cfgs[0].train.device)
    timings = {}  # each shape's own probe
    for cfg in cfgs:
        log(f"timing {cfg.model.n_layer} x {cfg.model.n_embd} on {device} ({cfg.train.batch_size} x "
            f"{cfg.train.seq_len}) to plan the width-depth series")
        timings[(cfg.model.n_layer, cfg.model.n_embd)] = (probe_fn or run_timing.probe)(
            cfg, device, max_tokens=cfg.train.tokens_per_step, steps=2)
    if probe_fn is not None and pack_fn is None:
        choice = packing.one("the plan was timed by the caller's probe alone: one point after another")
    else:
        ends = packing.ends(cfgs)
        choice = packing.choose(ends, [timings[(c.model.n_layer, c.model.n_embd)] for c in ends],
                                len(cfgs) * len(SEEDS), device, None, None, log, pack_fn or packing.probe_packed,
                                probe_tokens=cfgs[0].train.tokens_per_step)
    probe_s, data = time.perf_counter() - t0, from_dict(sweep.base).data
    fixed = probe_s + (0.0 if cached_prepared(data_key(load_corpus(data.corpus), data)) is not None else
                       PREPARE_S + PREPARE_S_PER_MB * max(1.0, parse_size(protocol["corpus"].removeprefix("stories:")) / 1e6))
    n_val, at_once = _tokens(protocol["corpus"], 0.05), choice["points_at_once"]
    slowdown = (choice.get("slowdown") or 1.0) if at_once > 1 else 1.0
    timed = [(run_timing.params(c), timings[(c.model.n_layer, c.model.n_embd)]) for c in cfgs]
    axes = [shapes, "train.seed=" + ",".join(map(str, SEEDS))]
    levels: list[dict] = []
    est = 0.0
    for top in protocol["tops"]:
        levels = [level(top / RATIO ** k, protocol) for k in reversed(range(protocol["levels"]))]
        for lv in levels:  # start-up, each point from its shape's probe on the packed slots, the summary
            points = resolve_sweep(SOURCE, lv["scale"], lv["set"], axes).points
            each = {p.name: packing.seconds_of(p.config, timed, n_val) * slowdown + POINT_OVERHEAD_S for p in points}
            lv["est_seconds"] = round(START_S + SERIES_SUMMARY_S + packing.wall_seconds(points, each, at_once), 1)
        est = fixed + sum(lv["est_seconds"] for lv in levels)
        if est <= minutes * 60:
            break
    else:
        smallest = math.ceil(est * PROBE_MARGIN / 60 * 2) / 2
        raise BudgetTooShort(f"{option('minutes', f'{minutes:g}')} is too short for the width-depth series here: the smallest (tokens per "
                        f"parameter {', '.join(lv['name'].removeprefix('tpp-') for lv in levels)}, {len(protocol['shapes'])} "
                        f"shapes x {len(SEEDS)} seeds a level) takes about {est / 60:.1f} min on this machine; give "
                        f"{smallest:g} minutes or more", smallest)
    return {"minutes": minutes, "est_seconds": round(est, 1), "parts": {"probe": round(probe_s, 1),
                                                                         "prepare": round(fixed - probe_s, 1)},
            "levels": levels, "shapes": shape_table(protocol["shapes"]), "protocol": "tiny" if tiny else "cpu",
            "packing": packing.kept(choice),
            "timing": {f"{n}x{d}": {"train_tokens_per_s": round(1 / t["train_s_per_token"]),
                                    "eval_tokens_per_s": round(1 / t["eval_s_per_token"])}
                       for (n, d), t in timings.items()},
            "chapter": CHAPTER, "deviations": deviations(levels, protocol)}


def deviations(levels: list[dict], protocol: dict) -> list[str]:
    """What the series gives up against Kaplan et al.'s protocol, one line each."""
    chosen = protocol["shapes"]
    shapes = shape_table(chosen)
    params = [s["non_embedding"] for s in shapes]
    s = protocol["set"]
    top = levels[-1]
    study = STUDIES[SOURCE]["set"]
    n_train = _tokens(protocol["corpus"], 0.95)
    return [f"non-embedding parameters {min(params):,} to {max(params):,} instead of Kaplan et al.'s 768K to 1.5B",
            f"{len(chosen)} shapes, d / L {shapes[-1]['ratio']:.3g} to {shapes[0]['ratio']:.3g} "
            f"({shapes[0]['ratio'] / shapes[-1]['ratio']:.0f}x), heads of {min(x[1] // x[2] for x in chosen)} to "
            f"{max(x[1] // x[2] for x in chosen)} dimensions",
            f"vocabulary {s['data.vocab_size']} (BPE on the generated stories) instead of GPT-2's 50,257",
            f"context {s['model.context_length']} instead of 1,024; batch {s['train.batch_size']} sequences",
            f"at most {top['tokens_per_param']:g} tokens per non-embedding parameter ({top['tokens_read']:,} tokens "
            f"a run, {top['tokens_read'] / n_train:.2f} passes of {protocol['corpus']}), not trained to convergence",
            f"{len(SEEDS)} seeds a shape; the study's learning rate and schedule (lr {study['train.lr']:g} to "
            f"{study['train.min_lr']:g}, cosine, warmup {WARMUP_SHARE:.0%} of the steps), not tuned per shape"]
