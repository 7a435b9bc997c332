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
    assert {"val_bpb_untrained", "val_bpb", "samples", "neighbors", "chapter", "run_dir"} <= r.keys()
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


def test_demo_text_labels_its_val_figures_prints_samples_as_text_and_says_what_next_from_any_folder(capsys, tmp_path):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--steps", "10", *SMALL]) == 0
    text, err = capsys.readouterr()
    # the log's two val figures of the last step say which is which
    import re

    assert re.search(r"step 10: val bpb \d\.\d{4} \(periodic estimate on [\d,]+ tokens spread over the split\)", err)
    assert re.search(r"step 10: val bpb \d\.\d{4} on the full validation split \([\d,]+ tokens\)", err)
    assert "validation bits per byte on the full validation split: untrained" in text
    lines = text.splitlines()
    first = lines[lines.index("samples:") + 1]
    assert first.startswith("  - Once upon a time") and "'" not in first[:6] and "\\n" not in text
    import shlex
    import sys
    from pathlib import Path

    (nxt,) = [line for line in lines if line.startswith("next: ")]
    if sys.prefix != sys.base_prefix:  # in a venv (make's .venv): its activate script, by its absolute path
        activate = shlex.split(nxt)[2]
        assert nxt.startswith("next: source /") and Path(activate).is_file() and activate == f"{sys.prefix}/bin/activate"
    assert f"lrn sample {out.resolve()} --prompt" in nxt  # absolute: right from any folder
    # the chapter's neighbours beside this run's own, right after ' Lily''s list
    from lrngpt.analysis.embeddings import load_table, pair_cosine
    from lrngpt.experiments.chapter import neighbours_line

    run, trained = load_table(out, "last")
    at = next(i for i, line in enumerate(lines) if line.startswith("nearest neighbours of ' Lily'"))
    assert lines[at + 1:at + 3] == [
        neighbours_line(" Lily", pair_cosine(run.tokenizer, trained, " Lily", " Mia"), untrained=False),
        neighbours_line(" Luna", pair_cosine(run.tokenizer, load_table(out, "init")[1], " Luna", " pretending"),
                        untrained=True)]
    assert lines[at + 1].startswith("the chapter: ' Lily' ~ ' Mia' 0.95 (trained); this run: ")


def test_the_next_line_outside_a_virtual_environment_names_no_activate_script(monkeypatch, tmp_path):
    import sys

    from lrngpt.cli.cmd_demo import next_line

    monkeypatch.setattr(sys, "prefix", sys.base_prefix)
    monkeypatch.chdir(tmp_path)
    assert next_line("runs/demo") == f'next: lrn sample {tmp_path / "runs" / "demo"} --prompt "Mia found"'
