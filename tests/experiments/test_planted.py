"""The planted-tokens study at tiny scale: the plan, the tied and untied runs on the planted split, a
rerun and a resume, the finding from planted.json and its figure."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from matplotlib.figure import Figure

from lrngpt.analysis.rare_tokens import replay_reads
from lrngpt.data.prepared import load_prepared
from lrngpt.experiments.planted import RESULT, planted_findings, planted_plan, planted_scores, run_planted
from lrngpt.experiments.planted_figure import plot_planted
from lrngpt.store.rundir import RunDir


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    out = tmp_path_factory.mktemp("planted") / "out"
    plan = planted_plan(scale="tiny")
    lines: list[str] = []
    return out, plan, run_planted(out, plan, log=lines.append), lines


def test_the_plan_is_plain_data_with_a_measured_estimate_and_its_deviations(study):
    _, plan, _, _ = study
    assert json.loads(json.dumps(plan)) == plan
    assert plan["est_seconds"] > 0 and plan["deviations"] and all("\n" not in d for d in plan["deviations"])
    assert {int(k) for k in plan["groups"]} == {0, 1, 10, 200} and plan["steps"] == 60


def test_the_runs_read_the_planted_ids_exactly_as_planned(study):
    out, plan, result, _ = study
    data = load_prepared(out / "data")
    groups = data.meta["planted"]["groups"]
    tokens = data.tokens("train")
    for name in ("tied", "untied"):
        run = RunDir(out / name).load("last")
        tc = run.config.train
        assert run.checkpoint["data_key"] == data.key != data.meta["planted"]["from"]
        inputs, _ = replay_reads(tokens, tc.batch_size, tc.seq_len, tc.seed, run.step, run.config.data.vocab_size)
        assert {i: int(inputs[i]) for g in groups.values() for i in g} == \
            {i: int(c) for c, g in groups.items() for i in g}
        assert result["runs"][name]["reads_exact"] is True
    assert result["runs"]["tied"]["tied"] is True and result["runs"]["untied"]["tied"] is False
    assert result["runs"]["untied"]["drift"] < 1e-6 < result["runs"]["tied"]["drift"]  # untied: never-read rows stay
    assert json.loads((out / RESULT).read_text())["groups"] == groups


def test_every_indicator_is_scored_on_both_runs_with_precision_and_recall_in_range(study):
    _, _, result, _ = study
    for name in ("tied", "untied"):
        scores = result["runs"][name]["scores"]
        assert {"own_movement", "cosine_no_first_pc", "cosine_no_first_pc@share"} <= set(scores)
        assert ("input_norm" in scores) == (name == "untied")
        for s in scores.values():
            for truth in ("under_trained", "never_read"):
                for where in ("planted", "vocabulary"):
                    assert s[truth][where]["positives"] == s[truth][where]["tp"] + s[truth][where]["fn"]
    own = result["runs"]["untied"]["scores"]["own_movement"]
    assert own["under_trained"]["planted"]["positives"] == 6  # 0, 1, 10 reads: 2 ids each
    assert own["never_read"]["planted"]["positives"] == 2
    # untied, a never-read row does not move at all: own movement finds exactly those
    assert own["never_read"]["planted"]["precision"] == own["never_read"]["planted"]["recall"] == 1.0


def test_a_rerun_skips_finished_runs_and_a_killed_one_resumes_to_the_same_scores(study):
    out, plan, result, _ = study
    lines: list[str] = []
    again = run_planted(out, plan, log=lines.append)
    assert sum("skip" in line for line in lines) == 2 and again["runs"] == result["runs"]
    run = out / "untied"
    for f in ("summary.json", "ckpt_last.pt", "ckpt_best.pt"):
        (run / f).unlink(missing_ok=True)  # killed before its first periodic checkpoint: only ckpt_init.pt
    lines.clear()
    resumed = run_planted(out, plan, log=lines.append)
    assert any("resume" in line and "untied" in line for line in lines)
    assert resumed["runs"]["untied"]["tokens"] == result["runs"]["untied"]["tokens"]  # bit-exact on CPU


def test_the_finding_reads_planted_json_and_gives_a_verdict_per_indicator_and_tying(study, tmp_path):
    out, _, _, _ = study
    shutil.copy(out / RESULT, tmp_path / RESULT)  # the finding needs nothing but the file
    scores = planted_scores(tmp_path)
    assert set(scores) == {"tied", "untied"} and all(s["reads_exact"] is True for s in scores.values())
    assert all("own_movement" in s["verdicts"] for s in scores.values())
    for s in scores.values():
        for per in s["verdicts"].values():
            assert {v["verdict"] for v in per.values()} <= {"works", "fails"} and set(per) == {"under_trained", "never_read"}
    found = planted_findings(tmp_path)  # own movement: reads < d and never read, tied and untied
    assert [f.claim.key for f in found] == ["planted-under-trained-tied", "planted-under-trained-untied",
                                            "planted-never-read-tied", "planted-never-read-untied"]
    assert all(f.evidence[0].startswith(f.claim.key.rsplit("-", 1)[1] + ":") for f in found)
    assert all((f.reason is None) == (f.verdict == "works") and "\n" not in "".join(f.evidence) for f in found)


def test_the_verdict_is_works_only_where_precision_and_recall_reach_the_bar(study, tmp_path):
    out, _, _, _ = study
    r = json.loads((out / RESULT).read_text())
    perfect = {"precision": 1.0, "recall": 1.0}
    half = {"precision": 1.0, "recall": 0.5}
    r["runs"]["tied"]["scores"]["own_movement"] = {"under_trained": {"planted": perfect, "vocabulary": perfect},
                                                   "never_read": {"planted": half, "vocabulary": perfect}}
    r["runs"]["untied"]["scores"]["own_movement"] = {"under_trained": {"planted": perfect, "vocabulary": half},
                                                     "never_read": {"planted": perfect, "vocabulary": perfect}}
    (tmp_path / RESULT).write_text(json.dumps(r))
    own = {name: s["verdicts"]["own_movement"] for name, s in planted_scores(tmp_path).items()}
    assert own["tied"]["under_trained"]["verdict"] == "works" and own["untied"]["under_trained"]["verdict"] == "fails"
    assert own["tied"]["never_read"]["verdict"] == "fails" and own["untied"]["never_read"]["verdict"] == "works"
    # each finding says which tying works, and the reason names the measure below the bar
    assert [(f.claim.text.split("(")[-1], str(f.verdict)) for f in planted_findings(tmp_path)] == [
        ("tied GPT)", "works"), ("untied GPT)", "fails"), ("tied GPT)", "fails"), ("untied GPT)", "works")]
    assert planted_findings(tmp_path)[1].reason.startswith("vocabulary recall 50.0%: below the 90%")


def test_the_figure_draws_reads_against_own_movement_for_tied_and_untied(study):
    out, _, result, _ = study
    fig = plot_planted(out)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    assert [a.get_title().split()[0] for a in fig.axes] == ["tied", "untied"]
    points = fig.axes[1].collections[0].get_offsets()
    assert np.allclose(points[:, 0], result["runs"]["untied"]["tokens"]["input_reads"])


def test_a_run_on_the_planted_split_resumes_only_with_it(study):
    from lrngpt.errors import UserError
    from lrngpt.experiments.planted import config_of
    from lrngpt.training.trainer import train_run

    out, plan, _, _ = study
    with pytest.raises(UserError, match="training data changed since this run started"):
        train_run(config_of(plan, False), out / "untied", resume=True, stop_at=plan["steps"] + 1, progress=False)
