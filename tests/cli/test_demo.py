"""`lrn demo`: the JSON contract, the run directory, and that it only replaces its own output."""

from __future__ import annotations

import json

from lrngpt.cli.main import main

SMALL = ["--set", "data.corpus=stories:300KB", "--set", "data.vocab_size=512", "--set", "train.batch_size=4",
         "--set", "train.seq_len=64", "--set", "train.eval_tokens=2000", "--set", "train.train_eval_tokens=2000"]


def test_demo_reports_bpb_samples_and_neighbours_of_lily(capsys, tmp_path):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--steps", "30", *SMALL, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert {"val_bpb_untrained", "val_bpb", "samples", "neighbors", "run_dir"} <= r.keys()
    assert r["val_bpb"] < r["val_bpb_untrained"]
    assert len(r["samples"]) == 3 and r["samples"][0].startswith("Once upon a time")
    assert len(r["neighbors"][" Lily"]) == 10
    assert (out / "summary.json").exists() and (out / "ckpt_init.pt").exists()
    # a second demo replaces the first one's output ...
    assert main(["demo", "--out", str(out), "--steps", "2", *SMALL, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["steps"] == 2


def test_demo_never_replaces_something_that_is_not_a_demo(capsys, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("precious")
    assert main(["demo", "--out", str(out), "--steps", "2", *SMALL]) == 2
    assert "lrn did not write (notes.txt)" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "precious"
