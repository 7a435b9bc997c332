"""`--scale full` and the mlp-chapter preset are the book chapter's protocol: TinyStories at a pinned
revision. A dry run names it without any download; offline, with the files not in the cache, the
commands stop with one line before they write or train anything; nothing substitutes another corpus."""

from __future__ import annotations

import json
import socket

import pytest

from lrngpt.cli.main import main
from lrngpt.corpora import tinystories as ts


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """An empty cache and a TinyStories URL on a local port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("LRN_TINYSTORIES_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("LRN_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "tinystories"


def one_line_error(capsys, *argv) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and out == "" and len(lines) == 1, err
    return lines[0]


def assert_names_the_ways_on(line: str, cache) -> None:
    assert ts.TRAIN in line and ts.VALID in line and str(cache) in line and ts.REVISION[:12] in line
    assert "data.corpus=text:PATH" in line and "data.corpus=stories:SIZE" in line
    assert "not the book chapter's" in line


def test_the_full_scale_and_the_chapter_preset_are_tinystories():
    from lrngpt.experiments.grid import resolve_sweep
    from lrngpt.runconfig.schema import read_config_dict

    assert read_config_dict("mlp-chapter")["data"]["corpus"] == "tinystories"
    assert {p.config.data.corpus for p in resolve_sweep("embed-dim", "full").points} == {"tinystories"}


def test_full_scale_dry_run_names_the_corpus_and_revision_without_downloading(offline, capsys, tmp_path):
    assert main(["sweep", "embed-dim", "--scale", "full", "--out", str(tmp_path / "sw"), "--dry-run", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["corpus"] == "tinystories" and doc["revision"] == ts.REVISION
    assert ts.REVISION in doc["source"]["url"] and len(doc["points"]) == 8
    ev = doc["evaluation"]  # the chapter's windows: the first 2M tokens of each split, the whole val at the end
    assert ev["windows"] == "prefix" and ev["eval_every"] == 500
    assert ev["periodic_val"] == "every 500 steps: the first 2,000,000 tokens of the validation split"
    assert ev["train_bpb"] == "the first 2,000,000 tokens of the training split"
    assert ev["final_val"] == "the whole validation split"
    assert not offline.exists() and not (tmp_path / "sw").exists()
    assert main(["train", "--config", "mlp-chapter", "--dry-run", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["corpus"] == "tinystories" and doc["revision"] == ts.REVISION and not offline.exists()


def test_full_scale_offline_stops_with_one_line_before_writing(offline, capsys, tmp_path):
    out = tmp_path / "sw"
    line = one_line_error(capsys, "sweep", "embed-dim", "--scale", "full", "--out", str(out))
    assert line.startswith("lrn sweep: error: ")
    assert_names_the_ways_on(line, offline)
    assert not out.exists()  # no sweep.json, no run directory


def test_chapter_preset_offline_stops_with_the_same_line(offline, capsys, tmp_path):
    out = tmp_path / "run"
    line = one_line_error(capsys, "train", "--config", "mlp-chapter", "--out", str(out))
    assert line.startswith("lrn train: error: ")
    assert_names_the_ways_on(line, offline)
    assert not out.exists()


def test_files_put_in_the_cache_by_hand_need_no_network(offline):
    offline.mkdir(parents=True)
    for name in ts.EXPECTED:
        (offline / name).write_text("x")
    ts.fetch()  # both present: no download attempted (the closed port would fail it)


def test_only_the_full_scale_evaluates_prefixes(offline, capsys, tmp_path):
    from lrngpt.experiments.grid import resolve_sweep

    for scale, how in (("full", "prefix"), ("cpu", "spread"), ("tiny", "spread")):
        assert {p.config.train.eval_windows for p in resolve_sweep("embed-dim", scale).points} == {how}
    assert main(["sweep", "embed-dim", "--scale", "cpu", "--out", str(tmp_path / "c"), "--dry-run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["evaluation"]["periodic_val"] == \
        "every 100 steps: 50,000 tokens spread over the validation split"
