"""`lrn sweep STUDY --minutes N`: the chapter's model planned into a time budget from a probe.

The probe here is a stand-in with known times per token (the real one times the models on this
machine), so the plan's arithmetic is checked exactly and each test takes a second or two."""

from __future__ import annotations

import json
import re

import pytest

from lrngpt.data.sizing import STORIES_BYTES_PER_TOKEN
from lrngpt.errors import UserError
from lrngpt.experiments import budget as B
from lrngpt.experiments.grid import resolve_sweep
from lrngpt.experiments.thresholds import MANY_PASSES
from lrngpt.runconfig.schema import from_dict, read_config_dict
from tests.cli_run import run_cli


def probe_at(seconds_per_token_at_2_5m: float, calls: list | None = None):
    """A probe whose time per token grows with the parameters, like the real models'."""
    def probe(cfg, device, max_tokens=512, steps=3):
        from lrngpt.models.build import param_breakdown

        if calls is not None:
            calls.append((cfg.model.n_embd, cfg.train.batch_size, max_tokens))
        per = seconds_per_token_at_2_5m * param_breakdown(cfg.model_type, cfg.model)["total"] / 2.5e6
        return {"train_s_per_token": per, "eval_s_per_token": per / 3, "probe_batch": cfg.train.batch_size,
                "probe_steps": steps}
    return probe


CHAPTER = read_config_dict("mlp-chapter")


def points_of(b: B.Budget, source: str = "embed-dim"):
    s, a = b.items()
    return resolve_sweep(source, "budget", s, a).points


def test_three_minutes_keep_the_chapters_model_fit_the_budget_and_read_under_a_quarter_pass():
    calls = []
    b = B.plan_budget("embed-dim", 3, [], [], probe_fn=probe_at(2e-6, calls))
    assert [c[0] for c in calls] == [4, 512] and all(c[2] == c[1] * 256 for c in calls)  # probed at its batch
    points = points_of(b)
    for p in points:  # the chapter's model shape, exactly
        cfg = p.config
        assert (cfg.data.vocab_size, cfg.model.block_size, cfg.model.n_hidden, cfg.model.emb_init_std,
                cfg.train.seq_len, cfg.train.lr, cfg.train.min_lr) == (
            CHAPTER["data"]["vocab_size"], CHAPTER["model"]["block_size"], CHAPTER["model"]["n_hidden"],
            CHAPTER["model"]["emb_init_std"], CHAPTER["train"]["seq_len"], CHAPTER["train"]["lr"],
            CHAPTER["train"]["min_lr"])
    assert [p.values["model.n_embd"] for p in points] == [4, 8, 16, 32, 64, 128, 256, 512]
    assert 0.9 * 180 * B.HEADROOM <= b.est_seconds <= 180 * B.HEADROOM  # the budget, used, its headroom kept free
    assert b.est_seconds == pytest.approx(sum(b.parts.values()), abs=0.5)
    assert b.parts["prepare"] > 0 and b.parts["start"] > 0 and b.parts["summary"] > 0  # all of the wall clock
    assert sum(b.point_seconds.values()) == pytest.approx(b.parts["points"], abs=1)
    steps, batch = b.sets["train.steps"], b.sets["train.batch_size"]
    assert all(p.steps == steps for p in points) and steps >= B.GOOD_STEPS
    mb = int(re.fullmatch(r"stories:(\d+)MB", b.sets["data.corpus"])[1])
    train_tokens = mb * 1e6 * 0.95 / STORIES_BYTES_PER_TOKEN
    assert b.passes == pytest.approx(steps * batch * 256 / train_tokens, rel=0.01) and b.passes <= B.PASSES_TARGET
    assert any(f"{steps:,} steps per run instead of the chapter's 4,000" in g for g in b.gives_up)
    assert any("batch 16 x 256 instead of 64 x 256" in g for g in b.gives_up)


def test_a_tighter_budget_keeps_four_widths_then_three_before_it_is_refused():
    slow = probe_at(2e-4)
    b = B.plan_budget("embed-dim", 25, [], [], probe_fn=slow)
    assert b.axes == {"model.n_embd": [4, 16, 64, 256]} and b.est_seconds <= 25 * 60 * B.HEADROOM
    assert b.sets["train.steps"] >= B.MIN_STEPS
    assert any("4 widths (d = 4, 16, 64, 256) instead of 8" in g for g in b.gives_up)
    smaller = B.plan_budget("embed-dim", 8, [], [], probe_fn=slow)  # too short for four widths: the smallest plan
    assert smaller.axes == {"model.n_embd": B.SMALLEST_WIDTHS} and smaller.sets["train.steps"] >= B.MIN_STEPS
    assert smaller.est_seconds <= 8 * 60 * B.HEADROOM
    assert any("3 widths (d = 16, 64, 256) instead of 8" in g for g in smaller.gives_up)


def refused(minutes, probe, sets=(), out="runs/w") -> tuple[str, float, float]:
    """The refusal's line, the minutes of the command it names, and that command's estimate."""
    with pytest.raises(UserError) as e:
        B.plan_budget("embed-dim", minutes, list(sets), [], probe_fn=probe, out=out)
    text = str(e.value)
    named = re.search(r"`lrn sweep embed-dim --minutes ([\d.]+) --out (\S+)([^`]*)` \(about ([\d.]+) min", text)
    assert named and named[2] == out and named[3] == "".join(f" --set {s}" for s in sets), text
    return text, float(named[1]), float(named[4])


def test_a_refused_budget_names_the_minutes_that_fit_and_the_tiny_scale_with_their_estimates():
    slow = probe_at(2e-4)
    text, fits, need = refused(3, slow)
    assert "its smallest plan at which the findings can still show (d = 16, 64, 256, 100 steps of 16 x 256" in text
    assert re.search(r"`lrn sweep embed-dim --scale tiny --out runs/w` \(about [\d.]+ (s|min), too small", text)
    assert fits * B.HEADROOM >= need - 0.05 and "\n" not in text
    ok = B.plan_budget("embed-dim", fits, [], [], probe_fn=slow)  # the budget it names plans
    assert ok.axes == {"model.n_embd": B.SMALLEST_WIDTHS} and ok.est_seconds <= fits * 60 * B.HEADROOM
    with pytest.raises(UserError, match="too short"):
        B.plan_budget("embed-dim", need * 0.95, [], [], probe_fn=slow)


def test_a_budget_that_cannot_fit_is_refused_before_its_packed_probe():
    packed = []

    def pack(cfg, device, n, k, **kw):
        packed.append(cfg.model.n_embd)
        return probe_at(2e-4)(cfg, device)
    with pytest.raises(UserError, match="too short"):
        B.plan_budget("embed-dim", 0.2, [], [], probe_fn=probe_at(2e-4), pack_fn=pack, points_at_once=2)
    assert packed == []  # the two ends timed alone already said no, even at two points at once
    B.plan_budget("embed-dim", 25, [], [], probe_fn=probe_at(2e-4), pack_fn=pack, points_at_once=2)
    assert packed == [4, 512]


@pytest.mark.parametrize("minutes", [1e308, B.MAX_MINUTES + 1])
def test_minutes_past_a_week_are_refused_before_any_probe(minutes):
    def never(*a, **k):
        raise AssertionError("probed before the minutes were checked")
    with pytest.raises(UserError, match=f"is past the longest budget planned: at most minutes={B.MAX_MINUTES:g}"):
        B.plan_budget("embed-dim", minutes, [], [], probe_fn=never)
    assert B.check_minutes(B.MAX_MINUTES) == B.MAX_MINUTES


def test_the_long_study_keeps_its_four_times_the_steps():
    b = B.plan_budget("embed-dim-long", 3, [], [], probe_fn=probe_at(2e-6))
    assert b.sets["train.steps"] % 4 == 0 and b.est_seconds <= 180
    assert any("instead of the chapter's 16,000" in g for g in b.gives_up)


def test_a_text_of_your_own_caps_the_steps_at_the_passes_target(tmp_path):
    f = tmp_path / "mine.txt"  # with batch 1 x 256 (your choice, kept), 100 steps need 102,400 x 4 tokens
    f.write_text("\n<|endoftext|>\n".join(f"story {i}: the cat sat on the mat near tree {i}." for i in range(30000)))
    sets = [f"data.corpus=text:{f}", "data.vocab_size=300", "train.batch_size=1"]
    b = B.plan_budget("embed-dim", 600, sets, [], probe_fn=probe_at(2e-8))
    assert "data.corpus" not in b.sets and "train.batch_size" not in b.sets
    n_train = len(__import__("lrngpt.data.prepared", fromlist=["dry_run_prepared"]).dry_run_prepared(
        from_dict(resolve_sweep("embed-dim", "budget", sets).base).data).tokens("train"))
    assert b.sets["train.steps"] == int(B.PASSES_TARGET * n_train // 256)  # the text, not the budget, set them
    assert b.passes <= B.PASSES_TARGET and b.est_seconds < 600 * 60 * B.HEADROOM
    small = tmp_path / "small.txt"  # too small for 100 steps of 16 x 256 under 0.25 passes: planned, not refused
    small.write_text("a tiny text. " * 2000)
    sets = [f"data.corpus=text:{small}", "data.vocab_size=300"]
    b = B.plan_budget("embed-dim", 60, sets, [], probe_fn=probe_at(2e-7))
    assert b.sets["train.steps"] == B.MIN_STEPS and b.passes > MANY_PASSES  # the fewest steps a run needs
    assert any("more than the 0.25 target: the text is too small for 100 steps under it" in g for g in b.gives_up)
    assert any(g.startswith("finding 2 (no turn with enough data) rests on hardly a token read twice") for g in b.gives_up)
    assert any("the judge reads this sweep as a small-data study" in g for g in b.gives_up)
    # a budget too short for the smallest plan on a text of your own names the command with that text
    text, fits, _ = refused(0.5, probe_at(2e-5), sets)
    assert B.plan_budget("embed-dim", fits, sets, [], probe_fn=probe_at(2e-5)).sets["train.steps"] >= B.MIN_STEPS
    one = tmp_path / "one.txt"
    one.write_text("x")
    with pytest.raises(UserError, match="too few for one window of 257; give it more text"):
        B.plan_budget("embed-dim", 60, [f"data.corpus=text:{one}", "data.vocab_size=300"], [], probe_fn=probe_at(2e-7))


def test_the_dry_run_prints_the_plan_and_what_it_gives_up(monkeypatch, tmp_path):
    import lrngpt.training.timing as run_timing

    monkeypatch.setattr(run_timing, "probe", probe_at(2e-6))
    out = tmp_path / "width"
    code, text, _ = run_cli("sweep", "embed-dim", "--minutes", "3", "--out", str(out), "--dry-run")
    assert code == 0, text
    assert "budget scale" in text and "budget 3 min: planned" in text and "it gives up:" in text
    assert "steps per run instead of the chapter's 4,000" in text and not out.exists()
    code, doc, _ = run_cli("sweep", "embed-dim", "--minutes", "3", "--out", str(out), "--dry-run", "--json")
    r = json.loads(doc)
    assert r["scale"] == "budget" and r["budget"]["est_seconds"] <= 180 * B.HEADROOM and r["budget"]["passes"] <= 0.25
    assert r["est_seconds"] == pytest.approx(r["budget"]["parts"]["points"], abs=1)  # one estimate, not two
    for argv, needle in ((["--minutes", "0"], "positive number of minutes"),
                         (["--minutes", "3", "--scale", "cpu"], "leave out --scale")):
        code, _, err = run_cli("sweep", "embed-dim", *argv, "--out", str(out), "--dry-run")
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1


def test_running_again_on_the_same_out_resumes_the_stored_plan_without_probing(monkeypatch, tmp_path):
    import lrngpt.training.timing as run_timing
    from lrngpt.experiments.sweepdir import SweepDir

    b = B.plan_budget("embed-dim", 3, [], [], probe_fn=probe_at(2e-6))
    s, a = b.items()
    sweep = resolve_sweep("embed-dim", "budget", s, a)
    sweep.budget = b.to_dict()
    out = tmp_path / "width"
    SweepDir(out).create_or_check(sweep.definition())

    def no_probe(*args, **kwargs):
        raise AssertionError("a stored plan is not planned again")

    monkeypatch.setattr(run_timing, "probe", no_probe)
    for argv in ((), ("--minutes", "3")):
        code, doc, err = run_cli("sweep", "embed-dim", *argv, "--out", str(out), "--dry-run", "--json")
        assert code == 0, err
        r = json.loads(doc)
        assert r["budget"]["sets"] == b.sets and [p["steps"] for p in r["points"]] == [p.steps for p in sweep.points]


def test_the_record_counts_a_killed_invocation_and_corrects_the_plan_by_the_pace_so_far():
    from lrngpt.experiments.time_ledger import account, account_text, corrected, pace

    plan = {"est_seconds": 720.0, "minutes": 12, "point_seconds": {"a": 400.0, "b": 300.0, "c": 300.0}}
    rows = [{"event": "point", "name": "a", "seconds": 500.0, "estimate": 400.0, "invocation": "1@1"},
            {"event": "point", "name": "b", "seconds": 850.0, "estimate": 300.0, "invocation": "1@1"},
            # killed there, before its run row; the same command again finds both trained
            {"event": "run", "seconds": 3.6, "estimate": 720.0, "trained": [], "invocation": "2@9"},
            {"event": "summary", "seconds": 2.4, "invocation": "2@9"}]
    a = account(plan, rows)
    assert a["actual_s"] == pytest.approx(500 + 850 + 3.6 + 2.4) and a["invocations"] == 2
    assert a["points_measured"] == 2 and a["pace"] == pytest.approx(1350 / 700, abs=1e-3)
    text = account_text(a)
    assert text.startswith("budget 12 min: ")
    assert all(part in text for part in ("planned 12.0 min", "took 22.6 min over 2 invocations", "2 of 3 runs trained",
                                         "1.93x their estimates")), text
    assert pace(rows) == pytest.approx(1350 / 700)
    assert corrected(plan["point_seconds"], rows) == {"a": 500.0, "b": 850.0, "c": pytest.approx(300 * 1350 / 700,
                                                                                                   abs=0.1)}
    assert corrected(plan["point_seconds"], []) == plan["point_seconds"]  # nothing run yet: the plan as made
