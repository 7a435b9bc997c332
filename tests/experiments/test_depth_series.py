"""The width-depth scale series: its shapes hold the non-embedding parameters fixed over a 40x d/L span, the
planner fits a budget from a (fake) probe and refuses a small one naming the smallest that fits, the judge
reads the trend of the spread on made-up levels whose answer is known, and a tiny series runs end to end
through lrngpt.sweep."""

from __future__ import annotations

import json
import math

import pytest
from matplotlib.figure import Figure

import lrngpt
from lrngpt.errors import UserError
from lrngpt.experiments.depth_series import PROTOCOLS, RATIO, SHAPES, non_embedding, plan_series
from lrngpt.experiments.figures import plot_series
from lrngpt.experiments.finding import Verdict
from lrngpt.experiments.grid import resolve_sweep
from lrngpt.experiments.shape_findings import (
    PARAMS_TOLERANCE,
    RATIO_SPAN,
    judge_levels,
    judge_series,
    level_result,
)
from lrngpt.models.build import param_breakdown

SHOWS, CANNOT_TELL, MOVING, NOT_MOVING = Verdict.SHOWS, Verdict.CANNOT_TELL, Verdict.MOVING, Verdict.NOT_MOVING

# ---- the shapes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["cpu", "tiny"])
def test_the_shapes_hold_non_embedding_parameters_to_1_percent_over_a_40x_span(protocol):
    shapes = PROTOCOLS[protocol].get("shapes", SHAPES)
    blocks = []
    for n, d, h in shapes:
        cfg = lrngpt.config("gpt-default", **{"model.n_layer": n, "model.n_embd": d, "model.n_head": h,
                                              "model.context_length": PROTOCOLS[protocol]["set"]["model.context_length"],
                                              "data.vocab_size": PROTOCOLS[protocol]["set"]["data.vocab_size"]})
        m = cfg.model
        assert (m.n_layer, m.n_embd, m.n_head) == (n, d, h) and m.n_embd % m.n_head == 0
        got = param_breakdown(cfg.model_type, m)["blocks"]
        assert got == non_embedding(m.n_layer, m.n_embd)  # the arithmetic in the docs is the model's
        blocks.append(got)
    assert max(blocks) / min(blocks) - 1 <= PARAMS_TOLERANCE
    ratios = [d / n for n, d, _ in shapes]
    assert max(ratios) / min(ratios) >= RATIO_SPAN


# ---- the planner, on a fake probe ------------------------------------------------------------------------


def fake_probe(train_s: float = 2e-5, eval_s: float = 5e-6):
    calls = []

    def probe(cfg, device, max_tokens, steps):
        calls.append((cfg.model.n_layer, cfg.model.n_embd, max_tokens))
        return {"train_s_per_token": train_s * cfg.model.n_layer ** 0.5, "eval_s_per_token": eval_s}
    return probe, calls


def test_the_plan_fits_its_budget_and_each_level_reads_ratio_times_the_one_below():
    probe, calls = fake_probe()
    plan = plan_series(20, probe_fn=probe)
    assert sorted(c[:2] for c in calls) == sorted(tuple(s[:2]) for s in SHAPES)  # every shape timed
    assert plan["est_seconds"] <= 20 * 60
    assert math.isclose(plan["est_seconds"], sum(lv["est_seconds"] for lv in plan["levels"]) +
                        sum(plan["parts"].values()), abs_tol=0.2)
    tpp = [lv["tokens_per_param"] for lv in plan["levels"]]
    assert tpp == sorted(tpp) and all(b / a == RATIO for a, b in zip(tpp, tpp[1:], strict=False))
    mean = sum(s["non_embedding"] for s in plan["shapes"]) / len(plan["shapes"])
    for lv in plan["levels"]:
        assert abs(lv["tokens_read"] / mean / lv["tokens_per_param"] - 1) < 0.05
        sweep = resolve_sweep(lv["source"], lv["scale"], lv["set"],
                              [f"{k}=" + ",".join(":".join(map(str, v)) if isinstance(v, list) else str(v)
                                                   for v in vals) for k, vals in lv["axes"].items()])
        assert len(sweep.points) == len(SHAPES) * 2 and {p.config.train.steps for p in sweep.points} == {lv["steps"]}
    json.dumps(plan)  # JSON-able as it is
    assert "Kaplan" in plan["chapter"] and any("vocabulary 512" in line for line in plan["deviations"])
    assert [(s["n_layer"], s["n_embd"]) for s in plan["shapes"]] == [tuple(s[:2]) for s in SHAPES]
    bigger = plan_series(200, probe_fn=fake_probe()[0])
    assert bigger["levels"][-1]["tokens_per_param"] > plan["levels"][-1]["tokens_per_param"]


def test_a_budget_too_small_is_refused_naming_minutes_that_then_fit():
    slow = fake_probe(train_s=2e-4)[0]
    with pytest.raises(UserError, match=r"give [\d.]+ minutes or more") as err:
        plan_series(1, probe_fn=slow)
    enough = float(str(err.value).split("give ")[1].split(" minutes")[0])
    plan = plan_series(enough, probe_fn=slow)
    assert plan["levels"][-1]["tokens_per_param"] == PROTOCOLS["cpu"]["tops"][-1]


# ---- the judge on made-up levels -------------------------------------------------------------------------


def made_level(name: str, tpp: float, worst: float, seed_range: float, best: float = 1.0) -> dict:
    """A level whose 13-layer shape is `worst` above the 1-layer one (val bpb `best`), seeds `seed_range` apart."""
    rows = []
    for i, (n, d, _h) in enumerate(SHAPES):
        mean = best + worst * i / (len(SHAPES) - 1)
        for seed, v in ((1, mean - seed_range / 2), (2, mean + seed_range / 2)):
            rows.append({"n_layer": n, "n_embd": d, "val_bpb": v, "seed": seed, "non_embedding": non_embedding(n, d),
                         "tokens_read": int(tpp * non_embedding(n, d))})
    return level_result({"label": name, "rows": rows, "preset": "width-depth"})


def test_a_spread_shrinking_beyond_its_noise_is_moving_toward_the_claim():
    f = judge_levels([made_level("tpp-2", 2, 0.30, 0.01), made_level("tpp-8", 8, 0.20, 0.01),
                      made_level("tpp-32", 32, 0.10, 0.01)])
    assert f.verdict == MOVING and f.claim.number == 4
    trend = f.numbers["trend"]
    assert math.isclose(trend["shrink"], 0.20, abs_tol=1e-9) and trend["slope_per_doubling"] < 0
    assert [lv["name"] for lv in f.numbers["levels"]] == ["tpp-2", "tpp-8", "tpp-32"]


def test_a_flat_spread_measured_finely_is_not_moving_and_a_noisy_one_cannot_tell():
    flat = judge_levels([made_level("a", 2, 0.30, 0.005), made_level("b", 32, 0.295, 0.005)])
    assert flat.verdict == NOT_MOVING and "stays" in flat.reason
    noisy = judge_levels([made_level("a", 2, 0.30, 0.08), made_level("b", 32, 0.25, 0.08)])
    assert noisy.verdict == CANNOT_TELL and "within its noise" in noisy.reason


def test_a_growing_spread_is_not_moving_and_a_top_within_3_percent_shows():
    grows = judge_levels([made_level("a", 2, 0.10, 0.01), made_level("b", 32, 0.30, 0.01)])
    assert grows.verdict == NOT_MOVING and "grows" in grows.reason
    shows = judge_levels([made_level("a", 2, 0.30, 0.002), made_level("b", 32, 0.01, 0.002)])
    assert shows.verdict == SHOWS and shows.numbers["levels"][-1]["verdict"] == SHOWS


def test_one_level_or_one_seed_makes_no_trend():
    assert judge_levels([made_level("a", 2, 0.3, 0.01)]).verdict == CANNOT_TELL
    one_seed = made_level("b", 32, 0.1, 0.0)
    one_seed["noise"] = None
    f = judge_levels([made_level("a", 2, 0.3, 0.01), one_seed])
    assert f.verdict == CANNOT_TELL and any("no spread with noise at b" in e for e in f.evidence)


# ---- a tiny series end to end ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_series(tmp_path_factory):
    out = tmp_path_factory.mktemp("series")
    plan = plan_series(5, tiny=True)  # its estimate is mostly fixed overheads (about 1.6 min)
    for lv in plan["levels"]:
        lrngpt.sweep(lv["source"], scale=lv["scale"], set=lv["set"], axes=lv["axes"], out=out / lv["name"],
                     progress=False, points_at_once=1)
    return plan, [out / lv["name"] for lv in plan["levels"]]


@pytest.mark.slow
def test_a_tiny_series_runs_through_lrngpt_sweep_and_is_judged_and_plotted(tiny_series):
    plan, dirs = tiny_series
    assert plan["protocol"] == "tiny" and len(plan["levels"]) == 2
    f = judge_series(dirs)
    # a few steps train no shape past token frequencies: no level counts, so no trend is judged
    assert f.verdict == Verdict.CANNOT_SHOW and f.numbers["trend"] is None
    assert f.reason.startswith("no level trained every shape past token frequencies")
    assert all("(finding 4 there: cannot show at this scale)" in e for e in f.evidence)
    tpp = [lv["tokens_per_param"] for lv in f.numbers["levels"]]
    assert tpp[1] > tpp[0] > 0
    assert all(len(lv["shapes"]) == 3 and lv["noise"] is not None for lv in f.numbers["levels"])
    fig = plot_series(f.numbers["levels"])
    assert isinstance(fig, Figure) and len(fig.axes[0].lines) == 2
    lv = plan["levels"][0]  # again: the finished level resumes as finished, nothing to train
    again = lrngpt.sweep(lv["source"], scale=lv["scale"], set=lv["set"], axes=lv["axes"], out=dirs[0], dry_run=True)
    assert {p["state"] for p in again["points"]} == {"finished"}


def test_points_trained_two_at_once_are_planned_as_the_sweep_trains_them(monkeypatch):
    """A level's sweep trains its points as the packed probe chose: the plan's estimate is the makespan of
    the slowed points on two slots, not their sum, and each level's part trains at that number at once."""
    from lrngpt.experiments import packing
    from lrngpt.experiments.chapter_budget import series_parts

    monkeypatch.setattr(packing, "threads_here", lambda: 2)  # two threads to split, as on the 2-core laptop
    probe = fake_probe()[0]
    packed_calls = []

    def pack(cfg, device, n, threads, max_tokens=None):
        packed_calls.append((cfg.model.n_layer, n, max_tokens))
        t = probe(cfg, device, max_tokens, 2)
        return {k: v * 1.25 for k, v in t.items()}  # two at once: each 1.25x slower, 1.6x the tokens a second

    alone = plan_series(200, probe_fn=probe)
    packed = plan_series(200, probe_fn=probe, pack_fn=pack)
    assert alone["packing"]["points_at_once"] == 1
    assert packed["packing"]["points_at_once"] == 2 and packed["packing"]["slowdown"] == 1.25
    assert {c[2] for c in packed_calls} == {32 * 64}  # at the batch the alone probe timed
    # the same level costs less at two slots: about 1.25 / 2 of the points' part
    assert packed["levels"][-1]["tokens_per_param"] >= alone["levels"][-1]["tokens_per_param"]
    same = [(a, b) for a in alone["levels"] for b in packed["levels"] if a["name"] == b["name"]]
    assert same and all(b["est_seconds"] < 0.8 * a["est_seconds"] for a, b in same)
    assert {p.points_at_once for p in series_parts(packed)} == {2}
    assert {p.points_at_once for p in series_parts(alone)} == {1}
