"""The chapter-on-a-laptop protocol's pure parts: the shares of the budget, the verdicts of the studies
that are not sweeps, the seed run reused between studies, and the stored plan read back strictly."""

from __future__ import annotations

import json
import math

import pytest

from lrngpt.errors import UserError
from lrngpt.experiments import chapter_plan as cp


def test_the_shares_leave_the_fixed_parts_their_seconds_and_fit_the_budget():
    s = cp.shares(60)
    fixed = cp.PIP_S + cp.SUPERPOSITION_S + cp.REPORT_S + cp.START_S + cp.PLAN_S
    assert set(s) == {"width", "small-data", "width-depth", "planted"}
    assert sum(s.values()) == pytest.approx((60 - fixed / 60) * sum(cp.SHARES.values()), abs=0.05)
    assert sum(cp.SHARES.values()) < 1  # what is left pays for the seeds, which cost what the width plan's d = 64 does


@pytest.mark.parametrize("minutes", [0, -1, float("nan"), float("inf"), True, "60"])
def test_minutes_that_are_not_minutes_are_refused_with_an_example(minutes):
    with pytest.raises(UserError, match="--minutes must be a positive number of minutes, e.g. --minutes 60"):
        cp.check_minutes(minutes)


def test_a_budget_too_short_for_the_whole_chapter_names_the_smallest_and_the_one_study_command():
    with pytest.raises(UserError, match=r"--minutes 5 is too short .* give --minutes 20 or more .*`lrn sweep STUDY"):
        cp.check_minutes(5)
    assert cp.check_minutes(20) == 20.0


def _toy(represented: list[int], dims: int = 5) -> dict:
    return {"features": 20, "dims": dims, "sparsities": [{"sparsity": s, "represented": r} for s, r in
                                                         zip([0.0, 0.9, 0.99], represented, strict=True)]}


def test_superposition_shows_when_sparse_features_outnumber_the_dimensions():
    v = cp.superposition_verdict(_toy([5, 8, 13]))
    assert v.verdict == "shows" and v.reason is None
    assert v.numbers == {"dims": 5, "dense": 5, "sparsest": 13, "at": 0.99, "steps": None}


def test_superposition_does_not_show_when_sparsity_adds_no_feature_beyond_the_dimensions():
    v = cp.superposition_verdict(_toy([5, 5, 5]))
    assert v.verdict == "does not show" and "kept 5 and the sparsest kept 5 in 5 dimensions" in v.reason


def _pip(k: int, best: int | None, lo: int, hi: int) -> dict:
    sweep = {"best_width": best, "yardsticks": "the yardsticks differ", "pip_loss_at_best_width": 1.25} \
        if best is not None else None
    return {"optimal": {"k": k}, "within": {"5%": [lo, hi]}, "signal_rank": 147, "rows": 315, "tokens": 127_432,
            **({"sweep": sweep} if sweep else {})}


def test_a_pip_prediction_far_from_the_best_width_is_explained_with_this_texts_numbers():
    v = cp.pip_verdict(_pip(64, 256, 40, 96))
    assert v.verdict == "apart"
    assert v.reason.startswith("the prediction is 4.0x from the measured best (signal rank 147 of 315 tokens, "
                                  "127,432 training tokens): the yardsticks differ")
    assert v.evidence == ["PIP-optimal width k = 64 (within 5%: 40 ... 96); the width study's best d = 256",
                          "PIP loss at d = 256: 1.25x its lowest"]


def test_a_best_width_inside_the_pip_optimum_is_within_5_percent():
    assert cp.pip_verdict(_pip(64, 64, 40, 96)).verdict == "within 5%"
    assert cp.pip_verdict(_pip(64, None, 40, 96)).verdict == "cannot tell"


def test_the_width_studys_seed_1337_run_counts_among_the_seeds_only_when_it_is_the_same_setting():
    seeds = [{"n_embd": 64, "seed": 1338, "steps": 100, "corpus": "stories:9MB", "batch_size": 16},
             {"n_embd": 64, "seed": 1339, "steps": 100, "corpus": "stories:9MB", "batch_size": 16}]
    width = [{"n_embd": 16, "seed": 1337, "steps": 100, "corpus": "stories:9MB", "batch_size": 16},
             {"n_embd": 64, "seed": 1337, "steps": 100, "corpus": "stories:9MB", "batch_size": 16}]
    assert [r["seed"] for r in cp.seeds_reuse(width, seeds)] == [1338, 1339, 1337]
    other = [{**width[1], "steps": 200}]
    assert [r["seed"] for r in cp.seeds_reuse(other, seeds)] == [1338, 1339]


def _stored(tmp_path, plan: dict):
    d = tmp_path / "ch"
    cp.start(d, plan)
    return d


PLAN = {"version": cp.VERSION, "scale": "laptop", "minutes": 60.0, "out": "x", "est_seconds": 10.0,
        "parts": [{"name": "width", "kind": "sweep", "est_seconds": 10.0}]}


def test_a_stored_plan_is_read_back_as_written(tmp_path):
    assert cp.stored_plan(_stored(tmp_path, PLAN)) == PLAN
    assert cp.stored_plan(tmp_path / "new") is None


@pytest.mark.parametrize("edit", [{"version": 99}, {"scale": "huge"}, {"parts": []}, {"minutes": None},
                                  {"parts": [{"name": "width", "kind": "sweep", "est_seconds": -1}]},
                                  {"parts": [{"name": 3, "kind": "sweep", "est_seconds": 1}]}])
def test_an_edited_plan_is_refused_naming_the_file_and_the_fix(tmp_path, edit):
    d = _stored(tmp_path, PLAN)
    (d / cp.PLAN_FILE).write_text(json.dumps({**PLAN, **edit}))
    with pytest.raises(UserError, match=r"chapter plan .*chapter.json is not the plan lrn wrote .* a new --out"):
        cp.stored_plan(d)


def test_resuming_with_another_budget_names_the_command_that_resumes(tmp_path):
    with pytest.raises(UserError, match=r"planned with --minutes 60, not --minutes 30: .*`lrn chapter --minutes 60"):
        cp.check_same(PLAN, "laptop", 30.0, tmp_path)
    with pytest.raises(UserError, match="planned with --minutes 60, not --scale tiny"):
        cp.check_same(PLAN, "tiny", None, tmp_path)
    cp.check_same(PLAN, "laptop", 60.0, tmp_path)


def test_a_part_recorded_is_finished_and_a_cut_last_line_is_not(tmp_path):
    d = _stored(tmp_path, PLAN)
    cp.record_part(d, {"name": "width", "est_seconds": 10.0}, 12.34)
    with open(d / cp.TIMING_FILE, "a") as f:
        f.write('{"part": "see')  # a kill mid-write
    assert cp.finished_parts(d) == {"width"} and cp.total_seconds(d) == 12.3


def test_a_damaged_timing_line_before_the_last_is_named_with_the_fix(tmp_path):
    d = _stored(tmp_path, PLAN)
    (d / cp.TIMING_FILE).write_text('nonsense\n{"part": "width", "est_seconds": 1, "seconds": 1}\n')
    with pytest.raises(UserError, match=r"timing.jsonl, line 1, is damaged: delete the line"):
        cp.finished_parts(d)


def test_non_finite_seconds_in_the_timing_record_are_refused(tmp_path):
    d = _stored(tmp_path, PLAN)
    (d / cp.TIMING_FILE).write_text('{"part": "width", "est_seconds": 1, "seconds": NaN}\n{"part": "x"}\n')
    with pytest.raises(UserError, match="line 1"):
        cp.finished_parts(d)
    assert math.isfinite(cp.shares(60)["width"])
