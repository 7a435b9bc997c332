"""A long run is timed and its estimate said before it starts; one past train.max_days is refused
(lrngpt.training.duration). The probe is replaced by a known step cost, so every estimate here has
a known answer."""

from __future__ import annotations

import pytest

from lrngpt.errors import UserError
from lrngpt.runconfig.schema import load_config
from lrngpt.training.duration import TIME_ABOVE_S, optimistic_seconds, plan_duration
from lrngpt.training.timing import clock

TOKENS = 8 * 64  # mlp-tiny's batch x seq_len


@pytest.fixture
def timed(monkeypatch):
    """The probe answers 1 µs a training token and `eval` s an evaluated token; calls are counted."""
    calls = []

    def fake(eval_s: float = 0.0):
        def probe(cfg, device, max_tokens=512, steps=3):
            calls.append((device, max_tokens))
            return {"train_s_per_token": 1e-6, "eval_s_per_token": eval_s, "probe_batch": 8, "probe_steps": steps}
        monkeypatch.setattr("lrngpt.training.timing.probe", probe)
        return calls

    return fake


def cfg(*overrides: str):
    return load_config("mlp-tiny", ["train.device=cpu", *overrides])


def test_a_run_short_even_at_the_fastest_rate_is_not_timed(timed):
    calls = timed()
    steps = int(TIME_ABOVE_S / 1e-4) - 1  # just under a minute at 0.1 ms a step
    assert optimistic_seconds(cfg(), steps) < TIME_ABOVE_S
    assert plan_duration(cfg(f"train.steps={steps}"), steps, "cpu") is None and calls == []


def test_the_estimate_is_the_timed_step_cost_times_the_steps_and_is_logged(timed):
    calls, logged = timed(), []
    seconds = plan_duration(cfg("train.steps=10000000", "train.eval_tokens=null", "train.train_eval_tokens=0"),
                            10_000_000, "cpu", log=logged.append)
    assert seconds == pytest.approx(10_000_000 * TOKENS * 1e-6) and calls == [("cpu", TOKENS)]  # the real batch
    assert logged == ["plan: 10,000,000 steps of 8 x 64 tokens take about 85.3 min on cpu (timed here: 0.512 ms a "
                      "step); train.max_days=7 refuses a run estimated to take longer"]


def test_the_evaluations_on_the_way_are_added(timed):
    timed(eval_s=1e-6)
    c = cfg("train.steps=10000000", "train.eval_every=1000", "train.eval_tokens=1000", "train.train_eval_tokens=500")
    evaluated = (1 + 10_000_000 // 1000) * 1000 + 1000 + 500  # step 0 and periodic, the final one, train bpb
    assert plan_duration(c, 10_000_000, "cpu") == pytest.approx(10_000_000 * TOKENS * 1e-6 + evaluated * 1e-6)


def test_a_run_estimated_past_max_days_is_refused_with_the_estimate_and_the_ways_on(timed):
    timed()
    base = ["train.steps=10000000", "train.eval_tokens=null", "train.train_eval_tokens=0"]
    seconds = 10_000_000 * TOKENS * 1e-6  # 5,120 s
    with pytest.raises(UserError) as e:
        plan_duration(cfg(*base, f"train.max_days={seconds / 86400 * 0.99}"), 10_000_000, "cpu")
    assert "would take about 85.3 min on cpu" in str(e.value) and "lower train.steps, or raise train.max_days" in str(e.value)
    assert plan_duration(cfg(*base, f"train.max_days={seconds / 86400 * 1.01}"), 10_000_000, "cpu") == \
        pytest.approx(seconds)
    assert plan_duration(cfg(*base, "train.max_days=0"), 10_000_000, "cpu") == pytest.approx(seconds)  # no limit


def test_steps_left_not_train_steps_are_planned(timed):
    """A resume (or --steps) plans the steps it will take: few steps left of a long schedule are not timed."""
    calls = timed()
    c = cfg("train.steps=99999999999999")
    assert plan_duration(c, 10, "cpu") is None and calls == []


def test_under_torchrun_only_the_optimistic_bound_refuses(timed):
    calls = timed()
    with pytest.raises(UserError, match="at least .* even on the fastest hardware"):
        plan_duration(cfg("train.steps=99999999999999"), 99_999_999_999_999, "cuda:0", timed=False)
    assert plan_duration(cfg("train.steps=10000000"), 10_000_000, "cuda:0", timed=False) is None and calls == []


def test_the_clock_reads_years_for_what_no_one_waits_for():
    assert [clock(s) for s in (5, 120, 7200, 3 * 86400, 10 * 365.25 * 86400, 5e6 * 365.25 * 86400, 1e30)] == \
        ["5.0 s", "2.0 min", "2.0 h", "3.0 days", "10 years", "5.0 million years", "3.2e+22 years"]


@pytest.mark.parametrize("preset,overrides", [("mlp-tiny", []), ("mlp-chapter", []), ("gpt-default", []), ("cpu", []),
                                              ("gpt-default", ["model.ffn=swiglu", "model.tie_embeddings=true"])])
def test_the_parameter_bound_is_a_lower_bound_of_the_real_count(preset, overrides):
    from lrngpt.models.build import param_breakdown
    from lrngpt.training.duration import params_at_least

    c = load_config(preset, overrides)
    real = param_breakdown(c.model_type, c.model)["total"]
    assert 0.95 * real <= params_at_least(c) <= real, (params_at_least(c), real)
