"""A study planned to fit a time budget on this machine: `lrn sweep STUDY --minutes N`.

The chapter's model stays as it is (mlp-chapter: vocabulary 4,096, a context of 6 tokens, hidden
512, windows of 256 tokens, its learning rates and initialisation). From a measured probe of the
smallest and the largest model of the grid at the planned batch (lrngpt.training.timing),
the plan chooses:

    batch   16 x 256 (the cpu scale's); doubled toward the chapter's 64 only when the budget
            affords more than the chapter's 4,000 steps at the smaller batch
    steps   as many as the budget affords (x the study's steps factor), at most the chapter's
    widths  the study's; when all of them would get fewer than GOOD_STEPS steps, a width study of
            more than four widths keeps 4, 16, 64, 256 (every other doubling)
    corpus  stories:SIZE, big enough that a run reads at most PASSES_TARGET = 0.25 passes of its
            training tokens (the chapter reads 0.12: the findings judge's FEW_PASSES, the same
            constant); a text of your own (--set data.corpus=...) caps the steps at that target
            instead, and a text too small for MIN_STEPS steps there is read up to OWN_TEXT_PASSES
            (one pass; MIN_STEPS at the least): the plan says what that costs the findings
    evals   4 periodic evaluations of read/20 tokens (10k to 50k), train bpb over read/4 (20k to 200k),
            the full validation split at the end

The estimate counts what the sweep's wall clock holds: start-up (START_S), the probe itself (the
sweep probes again before it trains), data preparation when the corpus is not cached
(PREPARE_S + PREPARE_S_PER_MB), each point's steps and evaluations from the probe plus
POINT_OVERHEAD_S (building the model, checkpoints), and the summary and figures (SUMMARY_S).
The constants are upper bounds measured on the 2-core development machine while it was shared.
A budget whose smallest plan (4 widths x MIN_STEPS steps) does not fit is refused, naming the
smallest budget that does. The plan is stored in DIR/sweep.json (`budget`), so running the
command again resumes the same points instead of planning anew; what the runs really took is
recorded beside it in DIR/timing.jsonl (lrngpt.experiments.time_ledger), and a resumed plan's estimates
for the runs still to go are corrected by the pace measured so far.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any

from lrngpt.corpora.registry import load_corpus
from lrngpt.data.prepared import cached_prepared, data_key, dry_run_prepared
from lrngpt.data.sizing import STORIES_BYTES_PER_TOKEN
from lrngpt.device.distributed import resolve_device
from lrngpt.errors import BudgetTooShort, UserError
from lrngpt.experiments import chapter, packing
from lrngpt.experiments.chapter import read_shares
from lrngpt.experiments.grid import resolve_sweep
from lrngpt.experiments.presets import STUDIES
from lrngpt.experiments.sweepdir import SweepDir
from lrngpt.experiments.thresholds import FEW_PASSES, MANY_PASSES, MIN_STEPS, OWN_TEXT_PASSES
from lrngpt.experiments.time_ledger import corrected, pace
from lrngpt.models.build import param_breakdown
from lrngpt.runconfig.overrides import parse_override
from lrngpt.runconfig.schema import from_dict
from lrngpt.training import timing as run_timing
from lrngpt.training.timing import clock

PASSES_TARGET = FEW_PASSES  # the reading finding 2 asks for: one constant (lrngpt.experiments.thresholds)
BATCH, CHAPTER_BATCH, CHAPTER_STEPS = 16, chapter.BATCH, chapter.STEPS
GOOD_STEPS, EVALS = 300, 4
FEW_WIDTHS = [4, 16, 64, 256]
# The smallest budget a refusal names is the smallest plan's estimate times this: three probed steps vary
# between invocations (8.3 and 9.4 min for the same plan, a minute apart on the quiet 2-core machine), and
# a budget named as enough must not be refused when it is given.
PROBE_MARGIN = 1.2
START_S, PREPARE_S, PREPARE_S_PER_MB, POINT_OVERHEAD_S, SUMMARY_S = 6.0, 3.0, 2.0, 4.0, 10.0
CHAPTER = {"steps": chapter.STEPS, "batch": chapter.BATCH, "read": chapter.READ, "train_tokens": chapter.TRAIN_TOKENS,
           "passes": round(chapter.PASSES, 2)}


@dataclass
class Budget:
    minutes: float
    sets: dict  # config overrides the plan adds to the study
    axes: dict  # axes it changes (fewer widths)
    est_seconds: float
    parts: dict  # estimated seconds: start, probe, prepare, points, summary
    passes: float | None
    gives_up: list[str] = field(default_factory=list)
    point_seconds: dict = field(default_factory=dict)  # run name -> estimated seconds (overhead included)
    packing: dict = field(default_factory=dict)  # points at once (lrngpt.experiments.packing.record)
    passes_target: float = PASSES_TARGET  # at most this many passes over the text (`lrn chapter`: the chapter's 0.12)

    def items(self) -> tuple[list[str], list[str]]:
        """The plan as --set and --axis items."""
        return ([f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in self.sets.items()],
                [f"{k}={','.join(map(str, v))}" for k, v in self.axes.items()])

    def record(self) -> dict:
        return {"minutes": self.minutes, "sets": self.sets, "axes": self.axes, "est_seconds": self.est_seconds,
                "parts": self.parts, "passes": self.passes, "gives_up": self.gives_up,
                "passes_target": self.passes_target, "point_seconds": self.point_seconds, "packing": self.packing}


def check_minutes(minutes) -> float:
    if not isinstance(minutes, int | float) or not math.isfinite(minutes) or minutes <= 0:
        raise UserError(f"--minutes must be a positive number of minutes, e.g. --minutes 25 (got {minutes})")
    return float(minutes)


def stored_budget(out) -> dict | None:
    """The plan a budgeted sweep in `out` was started with (None: none there)."""
    try:
        doc = SweepDir(out).definition(partial=True)
    except UserError:
        return None
    b = doc.get("budget") if isinstance(doc, dict) and doc.get("scale") == "budget" else None
    ok = isinstance(b, dict) and isinstance(b.get("sets"), dict) and isinstance(b.get("axes"), dict)
    return b if ok else None


def from_record(b: dict) -> Budget:
    return Budget(b.get("minutes", 0.0), b["sets"], b["axes"], b.get("est_seconds", 0.0), b.get("parts", {}),
                  b.get("passes"), list(b.get("gives_up", [])), dict(b.get("point_seconds") or {}),
                  dict(b.get("packing") or {}) if isinstance(b.get("packing"), dict) else {},
                  _target(b.get("passes_target")))


def _target(v) -> float:
    """A stored passes target, else the default (a record from before it was stored)."""
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) and 0 < v <= 1 else PASSES_TARGET


def check_passes(passes) -> float:
    """The most passes a budget may read its text: a number in (0, 1]."""
    if passes is None:
        return PASSES_TARGET
    if isinstance(passes, bool) or not isinstance(passes, int | float) or not math.isfinite(passes) \
            or not 0 < passes <= 1:
        raise UserError(f"passes must be a number of passes over the training text in (0, 1], e.g. 0.12 (the "
                        f"chapter's) or {PASSES_TARGET} (the default), got {passes!r}")
    return float(passes)


def resolve_budget(source: str, minutes: float | None, scale: str | None, sets: list[str], axes: list[str], out,
                   log=None, points_at_once: int | None = None, passes: float | None = None) -> Budget | None:
    """The budget plan of a sweep: planned now for `minutes`, or the one stored in `out` when it holds a
    budgeted sweep and no other scale is asked for (so running the command again resumes the same
    points); None for a sweep without a budget. Both front ends (lrn sweep, lrngpt.sweep) call this."""
    stored = stored_budget(out)
    if minutes is not None:
        if scale:
            raise UserError("--minutes plans its own scale; leave out --scale (or leave out --minutes)")
        minutes = check_minutes(minutes)
        if stored is not None and stored.get("minutes") == minutes:
            return corrected_record(stored, out)
        if stored is not None:  # before any probe: the dry run says what the real run does
            raise UserError(other_budget(out, stored, minutes))
        return plan_budget(source, minutes, sets, axes, log=log, points_at_once=points_at_once, passes=passes)
    if stored is not None and not scale:
        return corrected_record(stored, out)
    return None


def corrected_record(stored: dict, out) -> Budget:
    """The stored plan, its runs' estimates corrected by what the runs trained so far took (measured
    for those, the estimate x that pace for the rest: lrngpt.experiments.time_ledger)."""
    b = from_record(stored)
    rows = SweepDir(out).timing()  # a damaged row: refused here, for the dry run as for the run (one reader)
    if b.point_seconds and pace(rows) is not None:
        b.point_seconds = corrected(b.point_seconds, rows)
    return b


def other_budget(out, stored: dict, minutes: float) -> str:
    """The refusal for --minutes N over a sweep planned for other minutes: resume it, or a new --out
    (never "delete it": its finished runs are the point of running it again)."""
    sweep_dir = SweepDir(out)
    points = sweep_dir.definition(partial=True).get("points") or []
    done = 0
    for p in points:
        try:
            done += isinstance(p, dict) and sweep_dir.point_state(p["name"], p["steps"]) == "finished"
        except (UserError, KeyError, TypeError):
            pass
    old = stored.get("minutes")
    old = f"--minutes {old:g}" if isinstance(old, int | float) else "another --minutes"
    return (f"{out} holds a sweep planned for {old} ({done} of {len(points)} points finished); its points and steps "
            f"come from that plan, so --minutes {minutes:g} would be another sweep: run the same command with {old} "
            f"(or without --minutes) to resume it, or give another --out to plan one for {minutes:g} minutes")


def _probe_ends(sweep, probe_fn, log) -> tuple[dict, float, list]:
    """Timings of the grid's smallest and largest model at the planned batch; seconds the probe took;
    the configs probed (smallest first)."""
    t0 = time.perf_counter()
    sized = sorted(((param_breakdown(c.model_type, c.model)["total"], c) for c in
                    (p.config for p in sweep.points)), key=lambda x: x[0])
    ends, cfgs = {}, []
    for params, cfg in [sized[0], sized[-1]] if sized[0][0] != sized[-1][0] else [sized[0]]:
        device = resolve_device(cfg.train.device)
        log(f"timing the chapter's MLP at d={cfg.model.n_embd} on {device} ({cfg.train.batch_size} x "
            f"{cfg.train.seq_len}) to plan the budget")
        ends[params] = probe_fn(cfg, device, max_tokens=cfg.train.tokens_per_step, steps=2)
        cfgs.append(cfg)
    return ends, time.perf_counter() - t0, cfgs


def _packing(cfgs: list, ends: dict, n_points: int, forced: int | None, pack_fn, log) -> tuple[dict, dict, float]:
    """How many points the plan trains at once (lrngpt.experiments.packing.choose, from a probe of the
    same two models packed); the packed timings by parameter count; the seconds that took."""
    t0 = time.perf_counter()
    device = resolve_device(cfgs[0].train.device)
    alone = [ends[k] for k in sorted(ends)]  # smallest first, as cfgs
    if pack_fn is None and forced is None:
        return packing.one("the plan was timed by the caller's probe alone: one point after another"), ends, 0.0
    choice = packing.choose(cfgs, alone, n_points, device, forced, None, log, pack_fn)
    packed = dict(zip(sorted(ends), choice["packed"], strict=True)) if choice.get("packed") else ends
    return choice, packed, time.perf_counter() - t0


def _megabytes(corpus: str) -> int:
    return int(corpus.removeprefix("stories:").removesuffix("MB"))


def _timing(ends: dict, params: int) -> dict:
    (p0, lo), (p1, hi) = min(ends.items()), max(ends.items())
    f = (params - p0) / max(1, p1 - p0)
    return {k: lo[k] + f * (hi[k] - lo[k]) for k in ("train_s_per_token", "eval_s_per_token")}


@dataclass
class _Planner:
    """What every estimate of one plan shares: the study, the user's --set items, the grid's base config
    and, for a text of the user's own, its token counts."""
    source: str
    minutes: float
    sets: list[str]
    axes: list[str]
    target: float  # at most this many passes over the text
    user: dict  # the user's --set items, parsed
    base: dict  # the grid's base config dict
    widths: list  # the study's widths
    n_user: int | None = None  # training tokens of the user's own text (None: the generated stories)
    n_val_user: int = 0
    choice: dict = field(default_factory=dict)  # points at once (lrngpt.experiments.packing.choose), once probed
    cached: dict[str, bool] = field(default_factory=dict)  # corpus -> prepared in the cache already

    @property
    def study(self) -> dict:
        return STUDIES[self.source]

    @property
    def factor(self) -> int:
        return self.study.get("steps_factor", 1)

    @property
    def own_text(self) -> bool:
        return "data.corpus" in self.user

    @property
    def seq(self) -> int:
        return self.base["train"]["seq_len"]

    def sets_for(self, steps: int, batch: int) -> dict:
        """The --set items of `steps` of `batch`: evaluations sized to what a run reads, the stories to the target."""
        read = steps * batch * self.seq
        out: dict[str, Any] = {"train.steps": steps, "train.batch_size": batch,
                               "train.eval_tokens": int(min(50_000, max(10_000, read // 20))),
                               "train.train_eval_tokens": int(min(200_000, max(20_000, read // 4)))}
        if not self.study.get("reads"):
            out["train.eval_every"] = max(1, steps // EVALS)
        if not self.own_text:
            mb = math.ceil(read / self.target * STORIES_BYTES_PER_TOKEN / (1 - self.base["data"]["val_fraction"]) / 1e6)
            out["data.corpus"] = f"stories:{mb}MB"
        return {k: v for k, v in out.items() if k not in self.user}

    def estimate(self, steps: int, batch: int, grid: list[int] | None, ends: dict | None, probe_s: float):
        """The sweep of `steps` of `batch` over `grid` (None: the study's widths), its --set items, the
        estimated seconds of each part and of each point (none before the probe: `ends` None)."""
        plan = self.sets_for(steps, batch)
        s, _ = Budget(self.minutes, plan, {}, 0, {}, None, passes_target=self.target).items()
        sweep = resolve_sweep(self.source, "budget", self.sets + s,
                              self.axes + ([f"model.n_embd={','.join(map(str, grid))}"] if grid else []))
        corpus = sweep.base["data"]["corpus"]
        if self.own_text:
            n_val, prep = self.n_val_user, 0.0
        else:
            mb = _megabytes(corpus)
            n_val = int(mb * 1e6 * sweep.base["data"]["val_fraction"] / STORIES_BYTES_PER_TOKEN)
            if corpus not in self.cached:
                self.cached[corpus] = cached_prepared(data_key(load_corpus(corpus), from_dict(sweep.base).data)) \
                    is not None
            prep = 0.0 if self.cached[corpus] else PREPARE_S + PREPARE_S_PER_MB * mb
        each = {}
        at_once = self.choice["points_at_once"] if ends is not None else 1
        if ends is not None:
            sizes = {p.name: param_breakdown(p.config.model_type, p.config.model)["total"] for p in sweep.points}
            # in the order the runner starts them: largest first when packed, by index one after another
            started = packing.order(sweep.points, lambda q: sizes[q.name]) if at_once > 1 else sweep.points
            for p in started:
                t = _timing(ends, sizes[p.name])
                each[p.name] = run_timing.estimate_seconds(p.config, t, n_val) + POINT_OVERHEAD_S
        parts = {"start": START_S, "probe": probe_s, "prepare": prep,
                 "points": packing.makespan(list(each.values()), at_once),
                 "summary": SUMMARY_S + len(sweep.points)}
        return sweep, plan, parts, each

    def fit(self, batch: int, grid: list[int] | None, ends: dict, probe_s: float, cap: int) -> int:
        """The most steps per run (a multiple of the factor, at most `cap`) that fit; 0 if none."""
        lo, hi = 0, cap // self.factor
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if sum(self.estimate(mid * self.factor, batch, grid, ends, probe_s)[2].values()) <= self.minutes * 60:
                lo = mid
            else:
                hi = mid - 1
        return lo * self.factor

    def step_cap(self, batch: int) -> int:
        """The most steps per run: the chapter's, and for the user's own text what reads it at most the target
        (a text too small for MIN_STEPS there: up to OWN_TEXT_PASSES, and the plan says what that costs)."""
        cap = CHAPTER_STEPS * self.factor
        if self.n_user is not None:
            few = int(self.target * self.n_user // (batch * self.seq)) // self.factor * self.factor
            if few >= MIN_STEPS * self.factor:
                cap = min(cap, few)
            else:  # a small text: read more often than finding 2's premise allows, and said so (gives_up)
                once = int(OWN_TEXT_PASSES * self.n_user // (batch * self.seq)) // self.factor * self.factor
                cap = min(cap, max(MIN_STEPS * self.factor, once))
        return cap


def _planner(source: str, minutes: float, sets: list[str], axes: list[str], target: float) -> _Planner:
    """The plan's shared state; a text of the user's own is read (its token counts cap the steps) and
    refused, before any probe, when it is not prepared or too short for one window."""
    if source not in STUDIES:
        raise UserError(f"--minutes plans a study ({', '.join(STUDIES)}); for a sweep file set its steps yourself")
    user = dict(parse_override(s) for s in sets)
    first = resolve_sweep(source, "budget", sets, axes)
    p = _Planner(source, minutes, sets, axes, target, user, first.base, first.axes.get("model.n_embd", []))
    if p.own_text:  # the user's text: its tokens cap the steps
        corpus = p.base["data"]["corpus"]
        data = dry_run_prepared(from_dict(p.base).data)
        if data is None:
            raise UserError(f"--minutes needs the training tokens of {corpus}: run `lrn data prepare "
                            f"--corpus {corpus}` first (it is big or downloaded)")
        p.n_user, p.n_val_user = len(data.tokens("train")), len(data.tokens("val"))
        if p.n_user < p.seq + 1:  # before the probe: nothing to plan
            raise UserError(f"{corpus} holds {p.n_user:,} training tokens, too few for one window of "
                            f"{p.seq + 1}; give it more text")
    return p


def _choose(p: _Planner, grids: list, batch: int, ends: dict, probe_s: float, cap: int) -> tuple[int, list | None]:
    """(steps, grid): all the widths with GOOD_STEPS each, else fewer widths with MIN_STEPS; a budget that
    fits neither is refused, naming the smallest that does."""
    for i, grid in enumerate(grids):
        steps = p.fit(batch, grid, ends, probe_s, cap)
        if steps >= (MIN_STEPS if i == len(grids) - 1 else GOOD_STEPS) * p.factor:
            return steps, grid
    need = sum(p.estimate(MIN_STEPS * p.factor, batch, grids[-1], ends, probe_s)[2].values())
    smallest = math.ceil(need * PROBE_MARGIN / 60 * 2) / 2  # to the half minute, past the probe's noise
    shown = ", ".join(map(str, grids[-1] or p.widths))
    raise BudgetTooShort(f"--minutes {p.minutes:g} is too short to train the chapter's model meaningfully here: the "
                         f"smallest plan (d = {shown}, {MIN_STEPS * p.factor} steps of {batch} x {p.seq} each) takes "
                         f"about {need / 60:.1f} min on this machine; give --minutes {smallest:g} or more", smallest)


def plan_budget(source: str, minutes: float, sets: list[str], axes: list[str], probe_fn=None, log=None,
                points_at_once: int | None = None, pack_fn=None, passes: float | None = None) -> Budget:
    """The plan for `source` (a study) in `minutes` on this machine; refuses a budget too small. The points
    run `points_at_once` at a time, or as many as a packed probe (`pack_fn`, lrngpt.experiments.packing's by
    default; none when a `probe_fn` is given without one) shows to be faster, and the wall time is planned
    so (`packing.makespan`)."""
    minutes, log, target = check_minutes(minutes), log or (lambda m: None), check_passes(passes)
    p = _planner(source, minutes, sets, axes, target)
    widths, factor, seq = p.widths, p.factor, p.seq
    grids = [None] + ([[w for w in FEW_WIDTHS if w in widths] or widths[::2]] if len(widths) > 4 else [])
    batch = int(p.user.get("train.batch_size", BATCH))
    probe_sweep = p.estimate(MIN_STEPS * factor, batch, None, None, 0.0)[0]
    alone, probe_s, cfgs = _probe_ends(probe_sweep, probe_fn or run_timing.probe, log)
    pack_fn = pack_fn or (packing.probe_packed if probe_fn is None else None)
    p.choice, ends, pack_s = _packing(cfgs, alone, len(probe_sweep.points), points_at_once, pack_fn, log)
    probe_s += pack_s
    cap = p.step_cap(batch)
    steps, grid = _choose(p, grids, batch, ends, probe_s, cap)
    while "train.batch_size" not in p.user and steps >= cap and batch < CHAPTER_BATCH:
        wider = p.fit(batch * 2, grid, ends, probe_s, cap)  # a budget past the chapter's steps: a bigger batch
        if wider < cap:
            break
        batch, steps = batch * 2, wider
    sweep, plan, parts, each = p.estimate(steps, batch, grid, ends, probe_s)
    axes_out = {"model.n_embd": grid} if grid else {}
    read = steps * batch * seq
    n_train = p.n_user if p.n_user is not None else \
        int(_megabytes(plan["data.corpus"]) * 1e6 * (1 - p.base["data"]["val_fraction"]) / STORIES_BYTES_PER_TOKEN)
    budget = Budget(minutes, plan, axes_out, round(sum(parts.values()), 1), {k: round(v, 1) for k, v in parts.items()},
                    read / max(1, n_train), [], {k: round(v, 1) for k, v in each.items()}, packing.record(p.choice),
                    target)
    budget.gives_up = gives_up(budget, widths, factor, seq, p.own_text, p.base["data"]["corpus"], n_train)
    return budget


def gives_up(b: Budget, widths: list, factor: int, seq: int, own_text: bool, corpus: str, n_train: int) -> list[str]:
    """What the plan gives up against the chapter, one line each."""
    steps, batch = b.sets.get("train.steps"), b.sets.get("train.batch_size")
    out = []
    if steps is not None and steps < CHAPTER["steps"] * factor:
        out.append(f"{steps:,} steps per run instead of the chapter's {CHAPTER['steps'] * factor:,} "
                   f"({steps / (CHAPTER['steps'] * factor):.0%})")
    if batch is not None and batch < CHAPTER["batch"]:
        out.append(f"batch {batch} x {seq} instead of {CHAPTER['batch']} x {chapter.SEQ_LEN}: each run reads "
                   f"{(steps or 0) * batch * seq:,} tokens instead of {CHAPTER['read'] * factor:,}")
    if b.axes.get("model.n_embd"):
        out.append(f"{len(b.axes['model.n_embd'])} widths (d = {', '.join(map(str, b.axes['model.n_embd']))}) "
                   f"instead of {len(widths)} (d = {', '.join(map(str, widths))})")
    text = corpus if own_text else f"the generated stories ({b.sets.get('data.corpus', corpus)})"
    t, passes = b.passes_target, b.passes
    assert passes is not None, "a plan just made knows its passes"
    within = f"at most the {t:g} target" if passes <= t + 1e-9 else \
        f"more than the {t:g} target: the text is too small for {MIN_STEPS * factor} steps under it"
    out.append(f"{text}, about {n_train:,} training tokens, instead of the chapter's {CHAPTER['train_tokens']:,}: "
               f"{passes:.2f} passes, {within} (the chapter: {CHAPTER['passes']})")
    out += findings_cost(passes, (steps or 0) * (batch or BATCH) * seq, n_train)
    out.append(f"periodic evaluations on {b.sets.get('train.eval_tokens', 50_000):,} validation tokens and train bpb "
               f"on {b.sets.get('train.train_eval_tokens', 200_000):,} instead of 2,000,000 each")
    return out


def findings_cost(passes: float, read: int, n_train: int) -> list[str]:
    """What reading a text more than finding 2's premise allows costs the chapter's findings, one line each."""
    if passes <= PASSES_TARGET:
        return []
    once, twice = read_shares(passes)
    need = read / PASSES_TARGET
    out = [f"finding 2 (no turn with enough data) rests on hardly a token read twice: at {passes:.2f} passes (about "
           f"{once:.0%} of the targets read, {twice:.0%} twice or more) the judge can say only that it cannot tell or "
           f"does not show; it needs a text of at least {need:,.0f} training tokens ({need / max(1, n_train):.1f}x this "
           "one) for these steps"]
    if passes >= MANY_PASSES:
        out.append(f"at {passes:.1f} passes (at least {MANY_PASSES:g}) the judge reads this sweep as a small-data study: "
                   "finding 3, not findings 1 and 2")
    else:
        out.append("finding 1 (each doubling saves less) is judged as before, and each run's train bpb is split into "
                   "the targets it read and those it never read, so the reason names memorising where it is")
    return out


def budget_text(b: Budget) -> str:
    parts = ", ".join(f"{k} {clock(v)}" for k, v in b.parts.items() if v)
    return "\n".join([f"budget {b.minutes:g} min: planned {clock(b.est_seconds)} ({parts}); the chapter's model "
                      "(vocabulary 4,096, context 6, hidden 512, windows of 256) as it is; it gives up:",
                      *(f"  - {line}" for line in b.gives_up)])
