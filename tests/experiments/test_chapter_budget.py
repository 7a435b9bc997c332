"""`lrn chapter --minutes N`: the parts' shares move to the part that needs the time, each part shrinks
toward the smallest protocol at which its claim can still show before the whole is refused, and a
refusal stops probing as soon as the budget cannot fit and names what fits. The probe here is a
stand-in with known times per token, so nothing depends on this machine's speed."""

from __future__ import annotations

import re

import pytest

from lrngpt.errors import UserError
from lrngpt.experiments import chapter_budget as cb
from lrngpt.experiments import depth_series, planted
from lrngpt.experiments.budget import HEADROOM, MAX_MINUTES, MIN_STEPS, SMALLEST_WIDTHS
from lrngpt.experiments.chapter_plan import Part
from lrngpt.models.build import param_breakdown


def probe_at(seconds_per_token_at_2_5m: float, calls: list | None = None):
    """The chapter's models timed in proportion to their parameters (a GPT three times slower a parameter)."""
    def probe(cfg, device="cpu", max_tokens=512, steps=3):
        if calls is not None:
            calls.append(cfg.model_type)
        per = seconds_per_token_at_2_5m * param_breakdown(cfg.model_type, cfg.model)["total"] / 2.5e6
        per *= 3 if cfg.model_type == "gpt" else 1
        return {"train_s_per_token": per, "eval_s_per_token": per / 3}
    return probe


def unit(name: str, smallest: float, most: float | None = None, step: float | None = None) -> cb.Unit:
    """A unit whose plan takes the seconds it is given, at most `most`, in whole `step`s."""
    def fit(seconds: float) -> list[Part]:
        took = min(seconds, most or seconds)
        return [Part(name, "sweep", "", (took // step) * step if step else took)]
    return cb.Unit(smallest, fit)


def test_each_unit_gets_its_smallest_and_what_one_leaves_goes_to_the_units_after_it():
    units = {"planted": unit("planted", 20, most=30), "width-depth": unit("width-depth", 300, step=300),
             "small-data": unit("small-data", 800), "width": unit("width", 400)}  # small-data: more than its share
    parts = cb.share_out(units, 3000)
    took = {n: sum(p.est_seconds for p in ps) for n, ps in parts.items()}
    assert all(took[n] >= u.smallest for n, u in units.items())
    assert took["planted"] == 30 and took["width-depth"] == 600  # capped, and a discrete protocol: they leave time
    assert sum(took.values()) == pytest.approx(3000)  # which the width study, last, takes
    assert took["width"] > 400 + (3000 - 1520) * cb.SHARES["width"]


def test_the_hour_plans_every_part_within_its_headroom():
    plan = cb.plan_laptop(60, "ch", lambda m: None, probe_fn=probe_at(2e-4))
    names = [p.name for p in plan.parts]
    assert names[:3] == ["width", "seeds", "small-data"] and names[-3:] == ["planted", "pip", "superposition"]
    assert any(n.startswith("width-depth/") for n in names)
    assert 0.9 * 60 * 60 * HEADROOM <= plan.est_seconds <= 60 * 60 * HEADROOM  # used, and 12% kept free
    assert plan.shrunk == []
    width = plan.parts[0]
    assert width.scale == "budget" and width.budget["sets"]["train.steps"] == int(
        next(s for s in width.set if s.startswith("train.steps=")).split("=")[1])


def test_a_slower_machine_shrinks_the_parts_to_their_smallest_protocols_instead_of_refusing():
    plan = cb.plan_laptop(60, "ch", lambda m: None, probe_fn=probe_at(4e-4))
    assert plan.est_seconds <= 60 * 60 * HEADROOM  # planned, and saying what it gave up
    assert "width-depth at its smallest protocol at which its claim can still show" in plan.shrunk
    small = next(p for p in plan.parts if p.name == "small-data")
    assert small.axes == {"model.n_embd": SMALLEST_WIDTHS} and small.budget["sets"]["train.steps"] >= MIN_STEPS


def test_a_machine_too_slow_is_refused_after_probing_only_what_it_had_to_naming_what_fits():
    calls: list[str] = []
    with pytest.raises(UserError) as e:
        cb.plan_laptop(60, "runs/ch", lambda m: None, probe_fn=probe_at(2e-3, calls))
    text = str(e.value)
    assert calls == ["mlp", "mlp"]  # the width study's two ends: the GPTs of width-depth and planted never timed
    assert "width-depth and planted not probed, counted at the pace of the others" in text and "\n" not in text
    total = float(re.search(r"take about (\d+) min on this machine", text)[1])
    fits = int(re.search(r"`lrn chapter --minutes (\d+) --out runs/ch` \(about (\d+) min", text)[1])
    assert fits * HEADROOM >= total - 1
    alone = float(re.search(r"`lrn sweep embed-dim --minutes ([\d.]+) --out runs/ch-width` \(about", text)[1])
    assert alone < fits
    assert re.search(r"`lrn chapter --scale tiny --out runs/ch` \(about [\d.]+ (s|min), too small", text)


@pytest.mark.parametrize("minutes, needle", [(1e308, f"at most minutes={MAX_MINUTES:g}"), (3, "on any machine"),
                                             (float("nan"), "e.g. minutes=60"), (True, "positive number")])
def test_minutes_no_plan_could_use_are_refused_before_any_probe(minutes, needle):
    with pytest.raises(UserError, match=re.escape(needle)):
        cb.check_minutes(minutes)
    assert cb.check_minutes(cb.SMALLEST_MINUTES) == cb.SMALLEST_MINUTES


def smallest_that_can_show(part: str) -> dict:
    """The smallest protocol the laptop plan may shrink `part` to: below it, "cannot show at this scale"."""
    if part in ("width", "seeds", "small-data"):
        return {"widths": SMALLEST_WIDTHS, "steps": MIN_STEPS}
    return {"steps": planted.PROTOCOLS["cpu"]["min_steps"]} if part == "planted" else {}


def test_the_laptop_plan_shrinks_no_part_below_the_smallest_protocol_at_which_its_claim_can_show():
    plan = cb.plan_laptop(60, "ch", lambda m: None, probe_fn=probe_at(4e-4))
    assert sum(p.name.startswith("width-depth/") for p in plan.parts) == depth_series.LEVELS
    for part in plan.parts:
        least = smallest_that_can_show(part.name)
        if part.budget:
            assert part.budget["sets"]["train.steps"] >= least["steps"]  # no widths axis: all of the study's
            assert set(least["widths"]) <= set(part.axes.get("model.n_embd", least["widths"]))
        if part.plan:
            assert part.plan["steps"] >= least["steps"]
