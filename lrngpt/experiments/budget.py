"""A study planned to fit a time budget on this machine: `lrn sweep STUDY --minutes N`.

From a probe of the grid's smallest and largest model, `Planner` chooses the steps, batch, widths
(down to SMALLEST_WIDTHS at MIN_STEPS: the smallest plan at which the findings can still show), the
corpus size (at most the passes finding 2 asks for) and evaluation sizes, filling at most HEADROOM of
the budget. The plan is stored in DIR/sweep.json (`budget`); the same command resumes it, its
estimates corrected by the pace so far (lrngpt.experiments.time_ledger).
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from lrngpt.corpora.registry import load_corpus
from lrngpt.data.prepared import cached_prepared, data_key, dry_run_prepared
from lrngpt.data.sizing import STORIES_BYTES_PER_TOKEN
from lrngpt.device.distributed import resolve_device
from lrngpt.errors import BudgetTooShort, UserError, option
from lrngpt.experiments import chapter, packing
from lrngpt.experiments.chapter import read_shares
from lrngpt.experiments.dry_run import estimate_points
from lrngpt.experiments.finding import cli_value
from lrngpt.experiments.grid import resolve_sweep
from lrngpt.experiments.presets import STUDIES
from lrngpt.experiments.sweepdir import SweepDir
from lrngpt.experiments.thresholds import (
    FEW_PASSES,
    HEADROOM,
    MANY_PASSES,
    MAX_MINUTES,
    MIN_STEPS,
    OWN_TEXT_PASSES,
)
from lrngpt.experiments.time_ledger import corrected
from lrngpt.runconfig.overrides import parse_override
from lrngpt.runconfig.schema import from_dict
from lrngpt.training import timing as run_timing
from lrngpt.training.timing import clock

PASSES_TARGET = FEW_PASSES  # the reading finding 2 asks for: one constant (lrngpt.experiments.thresholds)
BATCH, CHAPTER_BATCH, CHAPTER_STEPS = 16, chapter.BATCH, chapter.STEPS
GOOD_STEPS, EVALS = 300, 4
FEW_WIDTHS = [4, 16, 64, 256]
SMALLEST_WIDTHS = [16, 64, 256]  # the fewest findings 1 and 2 can show on: two savings to compare, a turn to see
PROBE_MARGIN = 1.0  # the width-depth series' refusal margin: the headroom is kept once, for the whole plan
START_S, PREPARE_S, PREPARE_S_PER_MB, POINT_OVERHEAD_S, SUMMARY_S = 6.0, 3.0, 2.0, 4.0, 10.0


@dataclass
class Budget:
    minutes: float = 0.0
    sets: dict = field(default_factory=dict)  # config overrides the plan adds to the study
    axes: dict = field(default_factory=dict)  # axes it changes (fewer widths)
    est_seconds: float = 0.0
    parts: dict = field(default_factory=dict)  # estimated seconds: start, probe, prepare, points, summary
    passes: float = 0.0  # over the training text
    gives_up: list[str] = field(default_factory=list)
    point_seconds: dict = field(default_factory=dict)  # run name -> estimated seconds (overhead included)
    packing: dict = field(default_factory=dict)  # points at once (lrngpt.experiments.packing.kept)

    def items(self) -> tuple[list[str], list[str]]:
        """The plan as --set and --axis items."""
        return ([f"{k}={cli_value(v)}" for k, v in self.sets.items()],
                [f"{k}={','.join(map(str, v))}" for k, v in self.axes.items()])

    def to_dict(self) -> dict:
        return asdict(self)


def check_minutes(minutes, example: int = 25) -> float:
    """A budget in minutes: positive, finite, at most MAX_MINUTES (checked before any probe)."""
    if isinstance(minutes, bool) or not isinstance(minutes, int | float) or not math.isfinite(minutes) or minutes <= 0:
        raise UserError(f"{option('minutes')} must be a positive number of minutes, e.g. {option('minutes', example)} (got {minutes})")
    if minutes > MAX_MINUTES:
        raise UserError(f"{option('minutes', f'{minutes:g}')} is past the longest budget planned: at most {option('minutes', f'{MAX_MINUTES:g}')} "
                        f"(a week); a longer study runs at its {option('scale')}")
    return float(minutes)


def budget_from_dict(b: dict) -> Budget:
    """A stored plan (sweep.json's `budget`): the fields it holds, the defaults for those it lacks or nulls."""
    return Budget(**{f.name: b[f.name] for f in fields(Budget) if b.get(f.name) is not None})


def check_passes(passes) -> float:
    """The most passes a budget may read its text: a number in (0, 1]."""
    if passes is None:
        return PASSES_TARGET
    if isinstance(passes, bool) or not isinstance(passes, int | float) or not 0 < passes <= 1:  # NaN too
        raise UserError(f"passes must be a number of passes over the training text in (0, 1], e.g. 0.12 (the "
                        f"chapter's) or {PASSES_TARGET} (the default), got {passes!r}")
    return float(passes)


def resolve_budget(source: str, minutes: float | None, scale: str | None, sets: list[str], axes: list[str], out,
                   log=None, points_at_once: int | None = None, passes: float | None = None) -> Budget | None:
    """The budget plan of a sweep: planned now for `minutes`, or the one stored in `out` (so the same
    command resumes it); None for a sweep without a budget."""
    sweep_dir = SweepDir(out)
    doc = sweep_dir.known()
    stored = doc.get("budget") if doc.get("scale") == "budget" else None
    if not (isinstance(stored, dict) and isinstance(stored.get("sets"), dict) and isinstance(stored.get("axes"), dict)):
        stored = None
    if minutes is not None:
        if scale:
            raise UserError(f"{option('minutes')} plans its own scale; leave out {option('scale')} (or leave out {option('minutes')})")
        minutes = check_minutes(minutes)
        if stored is None:
            return plan_budget(source, minutes, sets, axes, log=log, points_at_once=points_at_once, passes=passes,
                               out=str(out))
        if stored.get("minutes") != minutes:  # refused before any probe (the dry run says what the run does)
            points, done = doc.get("points") or [], 0
            for p in points:
                try:
                    done += sweep_dir.point_state(p["name"], p["steps"]) == "finished"
                except (UserError, KeyError, TypeError):  # (a partial definition's point: a bare name)
                    pass
            old = stored.get("minutes")
            old = f"--minutes {old:g}" if isinstance(old, int | float) else "another --minutes"
            raise UserError(f"{out} holds a sweep planned for {old} ({done} of {len(points)} points finished); its "
                            f"points and steps come from that plan, so --minutes {minutes:g} would be another sweep: "
                            f"run the same command with {old} (or without --minutes) to resume it, or give another "
                            f"--out to plan one for {minutes:g} minutes")  # (never "delete it")
    elif stored is None or scale:
        return None
    b = budget_from_dict(stored)  # the stored plan, its estimates corrected by the pace of the runs so far
    rows = sweep_dir.timing()  # a damaged row: refused here, for the dry run as for the run (one reader)
    b.point_seconds = corrected(b.point_seconds, rows)
    return b


Extra = Callable[[dict], float] | None  # seconds a caller adds to a plan, from its points' (the chapter's seeds)


class Planner:
    """One study planned into a time budget: `probe` times the grid's ends, `smallest` is the smallest
    plan at which the findings can still show, `plan` the most that fits (`lrn chapter` uses it too)."""

    def __init__(self, source: str, sets: list[str], axes: list[str], target: float = PASSES_TARGET):
        """The study's settings; a text of the user's own is refused before any probe when it is not prepared
        or too short for one window."""
        if source not in STUDIES:
            raise UserError(f"{option('minutes')} plans a study ({', '.join(STUDIES)}); for a sweep file set its steps yourself")
        first = resolve_sweep(source, "budget", sets, axes)
        self.source, self.sets, self.axes = source, sets, axes
        self.target = target  # at most this many passes over the text
        self.user = dict(parse_override(s) for s in sets)  # the user's --set items, parsed
        self.base, self.widths = first.base, first.axes.get("model.n_embd", [])  # the grid's base, the study's widths
        self.factor = STUDIES[source].get("steps_factor", 1)
        self.own_text = "data.corpus" in self.user  # a text of the user's own (--set data.corpus=...)
        self.seq, self.batch = self.base["train"]["seq_len"], int(self.user.get("train.batch_size", BATCH))
        self.choice: dict = {}  # points at once (lrngpt.experiments.packing.choose), once probed
        self.cached: dict[str, bool] = {}  # corpus -> prepared in the cache already
        self.ends: dict = {}  # parameters -> timing of the grid's ends (packed when the plan packs)
        self.probe_s = 0.0
        self.n_user: int | None = None  # training tokens of the user's own text (None: the generated stories)
        self.n_val_user = 0
        if self.own_text:  # the user's text: its tokens cap the steps
            corpus = self.base["data"]["corpus"]
            data = dry_run_prepared(from_dict(self.base).data)
            if data is None:
                raise UserError(f"{option('minutes')} needs the training tokens of {corpus}: run `lrn data prepare "
                                f"--corpus {corpus}` first (it is big or downloaded)")
            self.n_user, self.n_val_user = len(data.tokens("train")), len(data.tokens("val"))
            if self.n_user < self.seq + 1:  # before the probe: nothing to plan
                raise UserError(f"{corpus} holds {self.n_user:,} training tokens, too few for one window of "
                                f"{self.seq + 1}; give it more text")

    @property
    def grids(self) -> list[list[int] | None]:
        """The widths tried, most first (None: all of the study's); the last is the smallest that can show."""
        out: list[list[int] | None] = [None]
        for few in (FEW_WIDTHS, SMALLEST_WIDTHS):
            grid = [w for w in few if w in self.widths]
            if len(self.widths) > len(few) and len(grid) == len(few) and grid not in out:
                out.append(grid)
        return out

    def estimate(self, steps: int, batch: int, grid: list[int] | None):
        """The sweep of `steps` of `batch` over `grid`, its --set items (evaluations sized to what a run reads, the
        stories to the target), the seconds of each part and point, and its training tokens."""
        read, vf = steps * batch * self.seq, self.base["data"]["val_fraction"]
        out: dict[str, Any] = {"train.steps": steps, "train.batch_size": batch,
                               "train.eval_tokens": int(min(50_000, max(10_000, read // 20))),
                               "train.train_eval_tokens": int(min(200_000, max(20_000, read // 4)))}
        if not STUDIES[self.source].get("reads"):
            out["train.eval_every"] = max(1, steps // EVALS)
        if not self.own_text:
            mb = math.ceil(read / self.target * STORIES_BYTES_PER_TOKEN / (1 - vf) / 1e6)
            out["data.corpus"] = f"stories:{mb}MB"
        plan = {k: v for k, v in out.items() if k not in self.user}
        s, a = Budget(sets=plan, axes={"model.n_embd": grid} if grid else {}).items()
        sweep = resolve_sweep(self.source, "budget", self.sets + s, self.axes + a)
        corpus = sweep.base["data"]["corpus"]
        if self.own_text:
            n_train, n_val, prep = self.n_user, self.n_val_user, 0.0
        else:  # the stories of `mb` megabytes planned above
            n_train, n_val = int(mb * 1e6 * (1 - vf) / STORIES_BYTES_PER_TOKEN), int(mb * 1e6 * vf / STORIES_BYTES_PER_TOKEN)
            if corpus not in self.cached:
                self.cached[corpus] = cached_prepared(data_key(load_corpus(corpus), from_dict(sweep.base).data)) \
                    is not None
            prep = 0.0 if self.cached[corpus] else PREPARE_S + PREPARE_S_PER_MB * mb
        each = {p.name: packing.seconds_of(p.config, list(self.ends.items()), n_val) + POINT_OVERHEAD_S
                for p in sweep.points} if self.ends else {}  # (none before the probe)
        points = packing.wall_seconds(sweep.points, each, self.choice.get("points_at_once", 1)) if each else 0.0
        parts = {"start": START_S, "probe": self.probe_s, "prepare": prep, "points": points,
                 "summary": SUMMARY_S + len(sweep.points)}
        return sweep, plan, parts, each, n_train

    def seconds(self, steps: int, batch: int, grid: list[int] | None, extra: Extra = None) -> float:
        _, _, parts, each, _ = self.estimate(steps, batch, grid)
        return sum(parts.values()) + (extra(each) if extra else 0.0)

    def fit(self, batch: int, grid: list[int] | None, seconds: float, cap: int, extra: Extra = None) -> int:
        """The most steps per run (a multiple of the factor, at most `cap`) that fit `seconds`; 0 if none."""
        return self.factor * bisect.bisect_right(range(1, cap // self.factor + 1), seconds,
                                                 key=lambda k: self.seconds(k * self.factor, batch, grid, extra))

    def probe(self, probe_fn=None, pack_fn=None, points_at_once: int | None = None, log=None,
              seconds: float | None = None) -> None:
        """Time the grid's ends at the planned batch, then choose the points at once (packing.choose). With
        `seconds`, the packed probe is skipped when no packing could fit the smallest plan: the caller refuses."""
        log, t0 = log or (lambda m: None), time.perf_counter()
        sweep = self.estimate(MIN_STEPS * self.factor, self.batch, None)[0]
        cfgs = packing.ends([p.config for p in sweep.points])
        device = resolve_device(cfgs[0].train.device)
        for cfg in cfgs:
            t = self.ends[run_timing.params(cfg)] = (probe_fn or run_timing.probe)(
                cfg, device, max_tokens=cfg.train.tokens_per_step, steps=2)
            log(f"timing the chapter's MLP at d={cfg.model.n_embd} on {device} ({cfg.train.batch_size} x "
                f"{cfg.train.seq_len}) to plan the budget: " + (f"remembered from {clock(t['remembered_s'])} ago"
                                                                if "remembered_s" in t else "measured"))
        self.choice, self.probe_s = packing.one("one point after another"), time.perf_counter() - t0
        if seconds is not None and self.smallest() > seconds * (points_at_once or min(packing.threads_here(),
                                                                                      len(sweep.points))):
            return
        t0 = time.perf_counter()
        alone = [self.ends[k] for k in sorted(self.ends)]  # smallest first, as cfgs
        self.choice = packing.choose(cfgs, alone, len(sweep.points), device, points_at_once, None, log,
                                     pack_fn or packing.probe_packed)
        if self.choice.get("packed"):
            self.ends = dict(zip(sorted(self.ends), self.choice["packed"], strict=True))
        self.probe_s += time.perf_counter() - t0

    def smallest(self, extra: Extra = None) -> float:
        """Seconds of the smallest plan at which the findings can still show: the last grid at MIN_STEPS."""
        return self.seconds(MIN_STEPS * self.factor, self.batch, self.grids[-1], extra)

    def plan(self, seconds: float, minutes: float, extra: Extra = None) -> Budget:
        """The most that fits `seconds`: all the widths at GOOD_STEPS, else fewer down to MIN_STEPS, then a
        batch doubled toward the chapter's; BudgetTooShort when even the smallest does not fit. The steps are at
        most the chapter's, and on the user's own text what reads it at most the target (a text too small for
        MIN_STEPS: up to OWN_TEXT_PASSES, said in gives_up)."""
        batch, cap = self.batch, CHAPTER_STEPS * self.factor
        if self.n_user is not None:
            few = int(self.target * self.n_user // (batch * self.seq)) // self.factor * self.factor
            once = int(OWN_TEXT_PASSES * self.n_user // (batch * self.seq)) // self.factor * self.factor
            cap = min(cap, few if few >= MIN_STEPS * self.factor else max(MIN_STEPS * self.factor, once))
        for i, grid in enumerate(self.grids):
            steps = self.fit(batch, grid, seconds, cap, extra)
            if steps >= (GOOD_STEPS if i == 0 and len(self.grids) > 1 else MIN_STEPS) * self.factor:
                break
        else:
            raise BudgetTooShort(f"{option('minutes', f'{minutes:g}')} is too short for {self.source} here", self.smallest(extra) / 60)
        while "train.batch_size" not in self.user and steps >= cap and batch < CHAPTER_BATCH:
            wider = self.fit(batch * 2, grid, seconds, cap, extra)  # a budget past the chapter's steps: a bigger batch
            if wider < cap:
                break
            batch, steps = batch * 2, wider
        sweep, plan, parts, each, n_train = self.estimate(steps, batch, grid)
        budget = Budget(minutes, plan, {"model.n_embd": grid} if grid else {}, round(sum(parts.values()), 1),
                        {k: round(v, 1) for k, v in parts.items()}, steps * batch * self.seq / max(1, n_train), [],
                        {k: round(v, 1) for k, v in each.items()}, packing.kept(self.choice))
        budget.gives_up = self.gives_up(budget, n_train)
        return budget

    def gives_up(self, b: Budget, n_train: int) -> list[str]:
        """What the plan gives up against the chapter, one line each."""
        steps, batch, factor, seq = b.sets.get("train.steps"), b.sets.get("train.batch_size"), self.factor, self.seq
        out = []
        if steps is not None and steps < CHAPTER_STEPS * factor:
            out.append(f"{steps:,} steps per run instead of the chapter's {CHAPTER_STEPS * factor:,} "
                       f"({steps / (CHAPTER_STEPS * factor):.0%})")
        if batch is not None and batch < CHAPTER_BATCH:
            out.append(f"batch {batch} x {seq} instead of {CHAPTER_BATCH} x {chapter.SEQ_LEN}: each run reads "
                       f"{(steps or 0) * batch * seq:,} tokens instead of {chapter.READ * factor:,}")
        if b.axes.get("model.n_embd"):
            out.append(f"{len(b.axes['model.n_embd'])} widths (d = {', '.join(map(str, b.axes['model.n_embd']))}) "
                       f"instead of {len(self.widths)} (d = {', '.join(map(str, self.widths))})")
        corpus = self.base["data"]["corpus"]
        text = corpus if self.own_text else f"the generated stories ({b.sets.get('data.corpus', corpus)})"
        t, passes = self.target, b.passes
        within = f"at most the {t:g} target" if passes <= t + 1e-9 else \
            f"more than the {t:g} target: the text is too small for {MIN_STEPS * factor} steps under it"
        out.append(f"{text}, about {n_train:,} training tokens, instead of the chapter's {chapter.TRAIN_TOKENS:,}: "
                   f"{passes:.2f} passes, {within} (the chapter: {round(chapter.PASSES, 2)})")
        if passes > PASSES_TARGET:  # what reading more than finding 2's premise allows costs the findings
            (once, twice), need = read_shares(passes), (steps or 0) * (batch or BATCH) * seq / PASSES_TARGET
            out.append(f"finding 2 (no turn with enough data) rests on hardly a token read twice: at {passes:.2f} passes "
                       f"(about {once:.0%} of the targets read, {twice:.0%} twice or more) the judge can say only that it "
                       f"cannot tell or does not show; it needs a text of at least {need:,.0f} training tokens "
                       f"({need / max(1, n_train):.1f}x this one) for these steps")
            out.append(f"at {passes:.1f} passes (at least {MANY_PASSES:g}) the judge reads this sweep as a small-data "
                       "study: finding 3, not findings 1 and 2" if passes >= MANY_PASSES else "finding 1 (each doubling "
                       "saves less) is judged as before, and each run's train bpb is split into the targets it read and "
                       "those it never read, so the reason names memorising where it is")
        out.append(f"periodic evaluations on {b.sets.get('train.eval_tokens', 50_000):,} validation tokens and train "
                   f"bpb on {b.sets.get('train.train_eval_tokens', 200_000):,} instead of 2,000,000 each")
        return out


def busy_note(lead: str = "; ") -> str:
    """What a plan or a refusal says on a machine whose other programs keep more than its cores busy."""
    load = run_timing.load_per_core()
    return f"{lead}the load average is {load:.1f} a core now: a busy machine plans slower" if load > 1.25 else ""


def plan_budget(source: str, minutes: float, sets: list[str], axes: list[str], probe_fn=None, log=None,
                points_at_once: int | None = None, pack_fn=None, passes: float | None = None, out: str = "DIR") -> Budget:
    """The plan for study `source` in `minutes` here, filling at most HEADROOM of them; refused, naming
    the commands that fit (`out` in them), when the smallest plan that can show the findings does not."""
    minutes, target = check_minutes(minutes), check_passes(passes)
    p = Planner(source, sets, axes, target)
    seconds = minutes * 60 * HEADROOM
    p.probe(probe_fn, pack_fn, points_at_once, log, seconds)
    need = p.smallest()
    if need > seconds:
        fits = math.ceil(need / HEADROOM / 60 * 2) / 2
        shown = ", ".join(map(str, p.grids[-1] or p.widths))
        sets_text = "".join(f" --set {s}" for s in sets)
        tiny = estimate_points(resolve_sweep(source, "tiny", [], []).points, quick=True, log=lambda m: None,
                               probe_fn=probe_fn)  # the refusal's command that fits in seconds
        tiny_s = START_S + PREPARE_S + SUMMARY_S + sum((e["est_seconds"] or 0.0) + POINT_OVERHEAD_S for e in tiny.values())
        raise BudgetTooShort(
            f"{option('minutes', f'{minutes:g}')} is too short for {source} here now: its smallest plan at which the findings can "
            f"still show (d = {shown}, {MIN_STEPS * p.factor} steps of {p.batch} x {p.seq} a run) takes about "
            f"{need / 60:.1f} min on this machine{busy_note()}; what fits: `lrn sweep {source} --minutes {fits:g} "
            f"--out {out}{sets_text}` (about {need / 60:.1f} min, {1 - HEADROOM:.0%} of it kept free) or `lrn sweep "
            f"{source} --scale tiny --out {out}` (about {clock(tiny_s)}, too small for the "
            "findings to show)", fits)
    return p.plan(seconds, minutes)


def budget_text(b: Budget) -> str:
    parts = ", ".join(f"{k} {clock(v)}" for k, v in b.parts.items() if v)
    return "\n".join([f"budget {b.minutes:g} min: planned {clock(b.est_seconds)} ({parts}); the chapter's model "
                      "(vocabulary 4,096, context 6, hidden 512, windows of 256) as it is; it gives up:",
                      *(f"  - {line}" for line in b.gives_up)])
