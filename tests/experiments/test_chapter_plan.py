"""The chapter-on-a-laptop protocol's pure parts: the verdicts of the studies that are not sweeps, the
seed run reused between studies, and the stored plan read back strictly (its parts typed)."""

from __future__ import annotations

import json

import pytest

from lrngpt.errors import UserError
from lrngpt.experiments import chapter_plan as cp
from lrngpt.experiments.chapter_dir import PLAN as PLAN_FILE
from lrngpt.experiments.chapter_dir import TIMING, ChapterDir


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


def _stored(tmp_path, plan: cp.ChapterPlan):
    d = tmp_path / "ch"
    ChapterDir(d).start(plan)
    return d


PLAN = cp.ChapterPlan("laptop", 60.0, "x", [cp.Part("width", "sweep", "findings 1 and 2", 10.0, ["fewer steps"],
                                                    source="embed-dim", scale="budget", set=["train.steps=100"],
                                                    axes={"model.n_embd": [16, 64, 256]})], 10.0)


def test_a_stored_plan_is_read_back_as_written_its_parts_typed(tmp_path):
    back = ChapterDir(_stored(tmp_path, PLAN)).plan()
    assert back == PLAN and isinstance(back.parts[0], cp.Part) and back.parts[0].axes["model.n_embd"] == [16, 64, 256]
    assert ChapterDir(tmp_path / "new").plan() is None


PART = PLAN.to_dict()["parts"][0]


@pytest.mark.parametrize("edit", [{"version": 99}, {"scale": "huge"}, {"parts": []}, {"minutes": None},
                                  {"parts": [{**PART, "est_seconds": -1}]}, {"parts": [{**PART, "name": 3}]},
                                  {"parts": [{**PART, "set": "train.steps=100"}]}, {"parts": [{**PART, "set": [1]}]},
                                  {"parts": [{**PART, "est_seconds": True}]}, {"parts": "width"}, {"est_seconds": None},
                                  {"parts": [{"name": "width", "kind": "sweep"}]}])
def test_an_edited_plan_is_refused_naming_the_file_and_the_fix(tmp_path, edit):
    d = _stored(tmp_path, PLAN)
    (d / PLAN_FILE).write_text(json.dumps({**PLAN.to_dict(), **edit}))
    with pytest.raises(UserError, match=r"chapter plan .*chapter.json is not the plan lrn wrote .* a new directory for out and"):
        ChapterDir(d).plan()


def test_resuming_with_another_budget_names_the_command_that_resumes(tmp_path):
    with pytest.raises(UserError, match=r"planned with --minutes 60, not --minutes 30: .*`lrn chapter --minutes 60"):
        cp.check_same(PLAN, "laptop", 30.0, tmp_path)
    with pytest.raises(UserError, match="planned with --minutes 60, not --scale tiny"):
        cp.check_same(PLAN, "tiny", None, tmp_path)
    cp.check_same(PLAN, "laptop", 60.0, tmp_path)


def test_a_part_recorded_is_finished_and_a_cut_last_line_is_not(tmp_path):
    d = _stored(tmp_path, PLAN)
    ChapterDir(d).finish("width", 10.0, 12.34)
    with open(d / TIMING, "a") as f:
        f.write('{"part": "see')  # a kill mid-write
    again = ChapterDir(d)
    assert set(again.timing()) == {"width"} and again.seconds() == 12.3


def test_a_damaged_timing_line_before_the_last_is_named_with_the_fix(tmp_path):
    d = _stored(tmp_path, PLAN)
    (d / TIMING).write_text('nonsense\n{"part": "width", "est_seconds": 1, "seconds": 1}\n')
    with pytest.raises(UserError, match=r"timing.jsonl, line 1, is damaged: delete the line"):
        ChapterDir(d).timing()


def test_non_finite_seconds_in_the_timing_record_are_refused(tmp_path):
    d = _stored(tmp_path, PLAN)
    (d / TIMING).write_text('{"part": "width", "est_seconds": 1, "seconds": NaN}\n{"part": "x"}\n')
    with pytest.raises(UserError, match="line 1"):
        ChapterDir(d).timing()
