"""A probe is remembered per machine and shape (lrngpt.training.timing.cached): a second dry run answers
without timing anything; a probe too old or taken at another load is timed again; a damaged or
unwritable cache is no cache. The timing itself is replaced by a counting stand-in, so nothing here
depends on this machine's speed."""

from __future__ import annotations

import json

import pytest

import lrngpt.training.timing as run_timing
from lrngpt.runconfig.schema import load_config
from tests.cli_run import run_cli


@pytest.fixture
def measured(monkeypatch, tmp_path):
    """Every real timing appended (model width, batch); the load average held at 0.5 a core; a cache of its own."""
    monkeypatch.setenv("LRN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(run_timing, "load_per_core", lambda: 0.5)
    calls = []

    def measure(cfg, device, batch, steps, barrier):
        calls.append((cfg.model.n_embd, batch))
        per = 1e-12 * run_timing.params(cfg)  # 2.5 µs a token at the chapter MLP's 2.5M parameters
        return {"train_s_per_token": per, "eval_s_per_token": per / 3, "probe_batch": batch, "probe_steps": steps}
    monkeypatch.setattr(run_timing, "_measure", measure)
    return calls


def cfg(width: int = 16):
    return load_config("mlp-tiny", ["train.device=cpu", f"model.n_embd={width}"])


def test_the_same_shape_is_timed_once_and_another_shape_or_batch_again(measured):
    first = run_timing.probe(cfg())
    again = run_timing.probe(cfg())
    assert again.pop("remembered_s") >= 0 and again == first and measured == [(16, 8)]  # said as remembered
    run_timing.probe(cfg(32))
    run_timing.probe(cfg(), max_tokens=64 * 4)  # a batch cut to 4
    assert measured == [(16, 8), (32, 8), (16, 4)]


def test_a_probe_too_old_or_taken_at_another_load_is_timed_again(measured, monkeypatch, tmp_path):
    run_timing.probe(cfg())
    path = tmp_path / "cache" / run_timing.CACHE_NAME
    doc = json.loads(path.read_text())
    for entry in doc["entries"].values():
        entry["at"] -= run_timing.CACHE_TTL_S + 1
    path.write_text(json.dumps(doc))
    run_timing.probe(cfg())
    assert len(measured) == 2
    monkeypatch.setattr(run_timing, "load_per_core", lambda: 1.2)  # (1 + 1.2) / (1 + 0.5): within the slack
    run_timing.probe(cfg())
    assert len(measured) == 2
    monkeypatch.setattr(run_timing, "load_per_core", lambda: 1.5 * run_timing.LOAD_SLACK)  # busier now: past it
    run_timing.probe(cfg())
    assert len(measured) == 3
    run_timing.probe(cfg())
    assert len(measured) == 3


@pytest.mark.parametrize("damage", ["{not json", '{"entries": []}', '{"entries": {"x": 1}}', "[]",
                                    '{"entries": {"k": {"at": "now", "load": 0.5, "timing": {}}}}'])
def test_a_damaged_cache_is_ignored_and_written_anew(measured, tmp_path, damage):
    path = tmp_path / "cache" / run_timing.CACHE_NAME
    path.parent.mkdir(parents=True)
    path.write_text(damage)
    run_timing.probe(cfg())
    run_timing.probe(cfg())
    assert len(measured) == 1 and json.loads(path.read_text())["entries"]


def test_a_cache_that_cannot_be_written_is_no_cache_and_never_fatal(measured, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("LRN_CACHE_DIR", str(blocker / "cache"))
    assert run_timing.probe(cfg())["train_s_per_token"] > 0
    run_timing.probe(cfg())
    assert len(measured) == 2 and blocker.read_text() == "not a directory"


def test_a_second_budgeted_dry_run_answers_from_the_cache_without_timing(measured, tmp_path, monkeypatch):
    argv = ["sweep", "embed-dim", "--minutes", "30", "--out", str(tmp_path / "w"), "--dry-run", "--json"]
    code, first, err = run_cli(*argv)
    assert code == 0, err
    timed = len(measured)
    assert timed >= 2

    def never(*a, **k):
        raise AssertionError("timed again")
    monkeypatch.setattr(run_timing, "_measure", never)
    code, second, err = run_cli(*argv)
    assert code == 0, err
    keep = ("sets", "axes", "point_seconds")
    assert {k: json.loads(second)["budget"][k] for k in keep} == {k: json.loads(first)["budget"][k] for k in keep}


@pytest.mark.parametrize("width", [4, 64, 512])
def test_the_mlps_parameters_are_counted_from_its_formula_as_the_built_model_has_them(width):
    from lrngpt.models.build import param_breakdown

    c = load_config("mlp-chapter", [f"model.n_embd={width}"])
    assert run_timing.params(c) == param_breakdown("mlp", c.model)["total"]
