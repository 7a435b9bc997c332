"""The chapter planned on this machine (`lrn chapter`): each part's protocol and estimate, and the
refusal that names what fits. Nothing here reads or writes a file.

For `--minutes N` the budgeted units are probed in turn, each giving the seconds of its smallest
protocol at which its claim can still show; past HEADROOM of the budget the plan is refused. Each
unit gets its smallest, and what is left is shared by SHARES in their order (`share_out`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from lrngpt.errors import BudgetTooShort, UserError, option
from lrngpt.experiments import chapter, depth_series, planted
from lrngpt.experiments import chapter_plan as cp
from lrngpt.experiments.budget import HEADROOM, Budget, Planner, busy_note
from lrngpt.experiments.budget import check_minutes as budget_minutes
from lrngpt.experiments.chapter_plan import ChapterPlan, Part
from lrngpt.experiments.dry_run import estimate_points
from lrngpt.experiments.grid import resolve_sweep
from lrngpt.training.timing import clock

DEFAULT_MINUTES = 60.0
CHAPTER_PASSES = round(chapter.PASSES, 2)  # 0.12: the chapter's reading (lrn's figure from its steps and text)
WIDTHS = [4, 16, 64, 256]  # the tiny scale's width study: every other doubling
SMALL_TINY_WIDTHS = [8, 64, 512]  # the tiny scale's small-data widths: three, for seconds
PIP_TOP = 1000  # the authors' code keeps the most frequent words (text8's 10,000); a laptop text has fewer
# seconds of the fixed parts, upper bounds measured on the quiet 2-core machine (docs/chapter-on-a-laptop.md)
PIP_S, SUPERPOSITION_S, REPORT_S, START_S = 45.0, 15.0, 20.0, 5.0
SEEDS_S = 6.0  # the seeds sweep's start and summary beside its two runs
# each unit's share of the minutes beyond the smallest protocols, in planning order: the width study last, so
# that it takes what the others leave
SHARES = {"planted": 0.04, "width-depth": 0.24, "small-data": 0.16, "width": 0.56}
# seconds of each unit's smallest protocol, and of the tiny chapter, on the quiet 2-core machine (a refusal
# counts a unit it did not probe at its time here times the pace of the units it did)
REFERENCE_S = {"width": 470.0, "small-data": 650.0, "width-depth": 500.0, "planted": 16.0}
TINY_S = 120.0
SMALLEST_MINUTES = 5.0  # the fixed parts and every sweep's start and summary alone: no machine fits fewer


@dataclass
class Unit:
    """A budgeted part once probed: its smallest protocol's seconds, and its parts planned into some seconds."""
    smallest: float
    fit: Callable[[float], list[Part]]


def check_minutes(minutes) -> float:
    minutes = budget_minutes(minutes, 60)
    if minutes < SMALLEST_MINUTES:
        raise UserError(f"{option('minutes', f'{minutes:g}')} is too short for the whole chapter on any machine: its fixed parts "
                        f"and each study's start and summary alone take about {SMALLEST_MINUTES:g} min; `lrn chapter "
                        f"--scale tiny --out DIR` runs every part in about {clock(TINY_S)} (measured on the quiet "
                        "2-core machine; too small for the claims to show), and `lrn chapter --dry-run` with more "
                        f"{option('minutes')} says what fits here")
    return minutes


def _seeds_extra(each: dict) -> float:
    """The seeds part's seconds, from the width plan's points: its d = 64 run twice more."""
    d64 = next((s for n, s in each.items() if n.startswith(f"d{cp.SEED_WIDTH}-")), 0.0)
    return len(cp.EXTRA_SEEDS) * d64 + SEEDS_S


def budget_part(name: str, source: str, b: Budget) -> Part:
    """A sweep part trained as its budget planned it (its estimate leaves the probe out)."""
    return Part(name, "sweep", cp.CLAIMS[name][0], round(b.est_seconds - b.parts.get("probe", 0.0), 1),
                list(b.gives_up), source=source, scale="budget", set=b.items()[0], axes=dict(b.axes),
                corpus=b.sets.get("data.corpus"), points_at_once=b.packing.get("points_at_once"),
                budget=b.to_dict(), point_seconds=dict(b.point_seconds))


def seeds_part(width: Part, sets: list[str]) -> Part:
    return Part("seeds", "sweep", cp.CLAIMS["seeds"][0], round(_seeds_extra(width.point_seconds), 1),
                [f"seed 1337 is the width study's own d = {cp.SEED_WIDTH} run, reused: the same config is not "
                 "trained twice"], source="seed-variance", scale=width.scale, set=sets,
                axes={"model.n_embd": [cp.SEED_WIDTH], "train.seed": cp.EXTRA_SEEDS}, corpus=width.corpus,
                points_at_once=width.points_at_once)


def series_parts(series: dict) -> list[Part]:
    """The width-depth series' levels, one sweep part each (its corpus's preparation counted in the first)."""
    parts = [Part(f"width-depth/{lv['name']}", "sweep", f"{cp.CLAIMS['width-depth'][0]} ({lv['name']})",
                  round(float(lv["est_seconds"]), 1), source=lv["source"], scale=lv["scale"], set=list(lv["set"]),
                  axes=dict(lv["axes"]), points_at_once=(series.get("packing") or {}).get("points_at_once"))
             for lv in series["levels"]]
    parts[0].est_seconds = round(parts[0].est_seconds + series["parts"].get("prepare", 0.0), 1)
    parts[-1].deviations = list(series.get("deviations") or [])
    return parts


def planted_part(pl: dict) -> Part:
    return Part("planted", "planted", cp.CLAIMS["planted"][0], round(float(pl["est_seconds"]), 1),
                list(pl.get("deviations") or []), plan=pl)


def fixed_parts(corpus: str | None, tiny: bool) -> list[Part]:
    return [Part("pip", "pip", cp.CLAIMS["pip"][0], PIP_S, [] if tiny else [
                f"the {PIP_TOP:,} most frequent tokens as rows, as the authors' code keeps the most frequent words"],
                 corpus=corpus, vocab_size=512 if tiny else 4096, top=None if tiny else PIP_TOP),
            Part("superposition", "superposition", cp.CLAIMS["superposition"][0], SUPERPOSITION_S,
                 steps=100 if tiny else 1000)]


def units(probe_fn, say, pack_fn, left: float) -> Iterator[tuple[str, Unit]]:
    """Each budgeted unit, probed as it is reached (the width study's packed probe skipped when `left`
    cannot hold its smallest plan)."""
    width = Planner("embed-dim", [], [], CHAPTER_PASSES)
    width.probe(probe_fn, pack_fn, None, say, left)

    def fit_width(seconds: float) -> list[Part]:
        part = budget_part("width", "embed-dim", width.plan(seconds, seconds / 60, _seeds_extra))
        return [part, seeds_part(part, [x for x in part.set if not x.startswith("model.n_embd=")])]
    yield "width", Unit(width.smallest(_seeds_extra), fit_width)
    small = Planner("embed-dim-small-data", [], [])
    small.ends, small.choice = width.ends, width.choice  # the same MLP at the same batch: one probe serves
    yield "small-data", Unit(small.smallest(),
                             lambda s: [budget_part("small-data", "embed-dim-small-data", small.plan(s, s / 60))])

    def series(seconds: float, log=None) -> dict:  # its probes said once, when it is first planned
        return depth_series.plan_series(seconds / 60, probe_fn=probe_fn, pack_fn=pack_fn, log=log)
    try:
        smallest = series(1.0, say)["est_seconds"]  # no series fits a second; a machine where one does is welcome
    except BudgetTooShort as e:
        smallest = e.smallest * 60
    yield "width-depth", Unit(smallest, lambda s: series_parts(series(s)))

    def pair(seconds: float) -> dict:
        return planted.planted_plan(seconds / 60, scale="cpu", probe_fn=probe_fn)
    yield "planted", Unit(pair(1e-3)["est_seconds"], lambda s: [planted_part(pair(s))])


def plan_laptop(minutes: float, out: str, say, probe_fn=None, pack_fn=None) -> ChapterPlan:
    """The chapter in `minutes` here; UserError naming what fits when the smallest protocols do not."""
    started = time.perf_counter()
    fixed, budget = START_S + REPORT_S + PIP_S + SUPERPOSITION_S, minutes * 60 * HEADROOM
    probed: dict[str, Unit] = {}
    width_left = (budget - fixed) * REFERENCE_S["width"] / sum(REFERENCE_S.values())  # at the quiet machine's shares
    for name, unit in units(probe_fn, say, pack_fn, width_left):
        probed[name] = unit
        if name != "width" and fixed + time.perf_counter() - started + sum(u.smallest for u in probed.values()) \
                > budget:  # (small-data, next, is timed by the width study's probe: judged with it)
            raise UserError(refusal(minutes, out, {n: u.smallest for n, u in probed.items()},
                                    fixed + time.perf_counter() - started))
    parts = share_out(probed, budget - fixed - (time.perf_counter() - started))
    ordered = [p for name in probed for p in parts[name]]  # in the order probed: width first, planted last
    planning = time.perf_counter() - started
    at_smallest = [n for n in SHARES if sum(p.est_seconds for p in parts[n]) <= probed[n].smallest * 1.02]
    return ChapterPlan("laptop", minutes, out, ordered + fixed_parts(ordered[0].corpus, False),
                       round(fixed + planning + sum(p.est_seconds for p in ordered), 1),
                       shrunk=[f"{n} at its smallest protocol at which its claim can still show" for n in at_smallest]
                       + [busy_note("")] * bool(at_smallest and busy_note()))


def share_out(units: dict[str, Unit], seconds: float) -> dict[str, list[Part]]:
    """Each unit's parts in `seconds`: its smallest plus its SHARES of the rest; what one leaves goes on."""
    surplus = seconds - sum(u.smallest for u in units.values())
    parts: dict[str, list[Part]] = {}
    for i, (name, share) in enumerate(SHARES.items()):
        unit = units[name]
        parts[name] = unit.fit(unit.smallest + max(0.0, surplus) * share / sum(list(SHARES.values())[i:]))
        surplus -= max(0.0, sum(p.est_seconds for p in parts[name]) - unit.smallest)
    return parts


def refusal(minutes: float, out: str, smallest: dict[str, float], fixed: float) -> str:
    """The budget refused, with what fits here now (units not probed counted at the probed ones' pace)."""
    pace = sum(smallest.values()) / sum(REFERENCE_S[n] for n in smallest)
    need = {n: smallest.get(n, REFERENCE_S[n] * pace) for n in REFERENCE_S}
    total = fixed + sum(need.values())
    guessed = [n for n in need if n not in smallest]
    how = ", ".join(f"{n} {s / 60:.1f}" for n, s in need.items()) + " min" + (
        f"; {', '.join(guessed[:-1])}{' and ' * (len(guessed) > 1)}{guessed[-1]} not probed, counted at the pace "
        "of the others" if guessed else "")
    return (f"--minutes {minutes:g} is too short for the chapter here now: the smallest protocols at which its claims "
            f"can still show take about {total / 60:.0f} min on this machine ({how}){busy_note()}; what fits: `lrn "
            f"chapter --minutes {math.ceil(total / HEADROOM / 60 / 5) * 5} --out {out}` (about {total / 60:.0f} min, "
            f"{1 - HEADROOM:.0%} of it kept free), the width study alone, `lrn sweep embed-dim --minutes "
            f"{math.ceil(smallest['width'] / HEADROOM / 60 * 2) / 2:g} --out {out}-width` (about "
            f"{smallest['width'] / 60:.0f} min with its seeds), or `lrn chapter --scale tiny --out {out}` (about "
            f"{clock(TINY_S * pace)}, too small for the claims to show)")


def _scale_sweep(name: str, source: str, scale: str, sets: list[str], axes: dict, say, probe_fn) -> Part:
    sweep = resolve_sweep(source, scale, sets, [f"{k}={','.join(map(str, v))}" for k, v in axes.items()])
    est = {n: round(e["est_seconds"] or 0.0, 1) for n, e in
           estimate_points(sweep.points, log=say, probe_fn=probe_fn).items()}
    return Part(name, "sweep", cp.CLAIMS[name.split("/")[0]][0], round(sum(est.values()), 1), source=source,
                scale=scale, set=list(sets), axes=dict(axes), corpus=sweep.base["data"]["corpus"], point_seconds=est)


def plan_scale(scale: str, out: str, say, corpus: str | None = None, probe_fn=None) -> ChapterPlan:
    """Each study at `scale` (tiny: seconds; full: a GPU job), estimated from a probe of its points."""
    started, tiny = time.perf_counter(), scale == "tiny"
    text = [f"data.corpus={corpus}"] if corpus else []
    width = _scale_sweep("width", "embed-dim", scale, text, {"model.n_embd": WIDTHS} if tiny else {}, say, probe_fn)
    parts = [width, seeds_part(width, text), _scale_sweep("small-data", "embed-dim-small-data", scale, text, {
        "model.n_embd": SMALL_TINY_WIDTHS} if tiny else {}, say, probe_fn)]
    if tiny:
        parts += series_parts(depth_series.plan_series(60.0, probe_fn=probe_fn, log=say, tiny=True))
    else:  # the study at its own scale: one level, judged by finding 4's rule
        parts.append(_scale_sweep("width-depth/full", "width-depth", "full", text, {}, say, probe_fn))
    parts += [planted_part(planted.planted_plan(None, scale="tiny" if tiny else "cpu", probe_fn=probe_fn)),
              *fixed_parts(width.corpus, tiny)]
    planning = time.perf_counter() - started
    return ChapterPlan(scale, None, out, parts,
                       round(START_S + planning + REPORT_S + sum(p.est_seconds for p in parts), 1))
