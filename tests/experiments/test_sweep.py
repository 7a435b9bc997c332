"""The sweep engine: grid, sharding, skipping finished points, resuming, bad input, the CLI."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from lrngpt.cli.main import main
from lrngpt.errors import UserError
from lrngpt.experiments.grid import parse_shard, resolve_sweep, shard_points
from lrngpt.experiments.presets import SCALES
from lrngpt.experiments.runner import run_sweep
from lrngpt.experiments.sweepdir import SweepDir
from lrngpt.training.trainer import train_run
from tests.cli_run import run_cli, wait_for
from tests.factory import copy


def point_state(run_dir, steps):
    """The state of the point whose run directory is run_dir (SweepDir of its sweep)."""
    return SweepDir(run_dir.parent.parent).point_state(run_dir.name, steps)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
LINE = re.compile(r"d=\s*(\d+) \| steps\s+([\d,]+) \| seed (\d+) \| params\s+([\d,]+) \(embedding\s+[\d,]+, "
                  r"hidden\s+[\d,]+, output\s+[\d,]+\) \| val bpb (\d\.\d{4}) \| train bpb (\d\.\d{4}) "
                  r"\(gap ([+-]\d\.\d{4})\) \| passes (\d+\.\d\d) \| used axes \(90%\)\s+(\d+)/(\d+) \| \d+s "
                  r"\| tiny scale, stories:300KB$")


@pytest.fixture(scope="module")
def tiny_sweep(trained_sweep):
    """`lrn sweep embed-dim --scale tiny` over two widths, run once for the session (shared: a test
    that writes into it works on a copy)."""
    out, doc, stderr = trained_sweep("embed-dim", axes=("model.n_embd=4,16",), name="embed-dim-tiny")
    assert "d=   4 | steps" not in stderr  # each run's chapter line is printed once, at the end (stdout)
    assert "[embed-dim, tiny scale] done d4-s1337-t30: val bpb" in stderr
    return out, doc


def test_tiny_sweep_writes_lines_tables_figures_and_json(tiny_sweep):
    out, doc = tiny_sweep
    assert doc["scale"] == "tiny" and doc["sweep"] == "embed-dim"
    assert [(r["n_embd"], r["seed"], r["steps"]) for r in doc["rows"]] == [(4, 1337, 30), (16, 1337, 30)]
    for row in doc["rows"]:
        assert {"n_embd", "seed", "steps", "params", "val_bpb", "train_bpb", "gap", "used_axes", "seconds"} <= set(row)
        assert row["gap"] == pytest.approx(row["val_bpb"] - row["train_bpb"])  # the chapter's sign
        assert 1 <= row["used_axes"] <= row["n_embd"]
    assert doc["table"] == str(out / "summary.md")
    for name in ("sweep.json", "lines.txt", "summary.md", "summary.csv", "summary.json"):
        assert (out / name).stat().st_size > 0
    assert sorted(Path(f).name for f in doc["figures"]) == ["train_vs_val.png", "val_bpb_by_step.png",
                                                            "val_bpb_by_width.png"]
    for f in doc["figures"]:
        data = Path(f).read_bytes()
        assert data[:8] == PNG_MAGIC and len(data) > 1000
    lines = (out / "lines.txt").read_text().splitlines()
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), lines
    assert [int(m[1]) for m in parsed] == [4, 16]
    assert [float(m[5]) for m in parsed] == [round(r["val_bpb"], 4) for r in doc["rows"]]
    assert [int(m[4].replace(",", "")) for m in parsed] == [r["params"] for r in doc["rows"]]
    assert [float(m[8]) for m in parsed] == [round(r["passes"], 2) for r in doc["rows"]]


def test_every_row_carries_its_passes_over_the_training_text(tiny_sweep):
    import csv

    out, doc = tiny_sweep
    rows = json.loads((out / "summary.json").read_text())["rows"]
    for row in rows:
        s = json.loads((out / "runs" / row["name"] / "summary.json").read_text())
        assert row["passes"] == pytest.approx(30 * 8 * 64 / s["train_split_tokens"]) == s["passes"]
        assert row["corpus"] == "stories:300KB"
    table = list(csv.DictReader(io.StringIO((out / "summary.csv").read_text())))
    assert [float(r["passes"]) for r in table] == pytest.approx([r["passes"] for r in rows])
    assert {r["corpus"] for r in table} == {"stories:300KB"}
    assert all(f"| {e['passes']:.2f} |" in (out / "summary.md").read_text() for e in doc["by_width"])


def test_a_summary_without_passes_shows_a_dash(tiny_sweep, tmp_path):
    import shutil

    from lrngpt.experiments.summary import format_line, gather_row

    out, doc = tiny_sweep
    run = shutil.copytree(out / "runs" / "d4-s1337-t30", tmp_path / "d4")
    s = json.loads((run / "summary.json").read_text())
    assert gather_row(run, {"name": "d4"})["passes"] == pytest.approx(doc["rows"][0]["passes"])
    s.pop("passes")  # passes are summary.json's word, never worked out again from a cache
    (run / "summary.json").write_text(json.dumps(s))
    row = gather_row(run, {"name": "d4"})
    assert row["passes"] is None and "| passes - |" in format_line(row, "tiny")


def test_a_width_study_reading_its_text_more_than_once_warns_once(tmp_path, text_corpus):
    code, stdout, stderr = run_cli("sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=4,8",
                                   "--set", f"data.corpus={text_corpus}", "--set", "data.vocab_size=300",
                                   "--set", "train.steps=10", "--set", "data.train_tokens=1000",
                                   "--out", str(tmp_path / "w"), "--json")
    assert code == 0, stderr
    warnings = [line for line in stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1, warnings
    assert "reads its training text more than once (5.1 passes per run)" in warnings[0]
    assert "hardly ever reading a token twice (it reads 65.5M of its 550M training tokens)" in warnings[0]
    assert [round(r["passes"], 2) for r in json.loads(stdout)["rows"]] == [5.12, 5.12]
    # a sweep over another key warns per run, as `lrn train` does; a width study under one pass not at all
    (tmp_path / "seeds.json").write_text(json.dumps({"base": "mlp-tiny", "scale": "tiny", "axes": {"train.seed": [1]}}))
    _, _, stderr = run_cli("sweep", str(tmp_path / "seeds.json"), "--set", f"data.corpus={text_corpus}",
                           "--set", "data.vocab_size=300", "--set", "train.steps=10", "--set", "data.train_tokens=1000",
                           "--out", str(tmp_path / "s"))
    assert "width study" not in stderr and "warning: 5.1 passes over 1,000 training tokens" in stderr


def test_every_table_names_the_scale_and_the_corpus(tiny_sweep):
    out, doc = tiny_sweep
    assert "(tiny scale, stories:300KB)" in (out / "summary.md").read_text().splitlines()[0]
    csv_rows = (out / "summary.csv").read_text().splitlines()
    assert csv_rows[0].startswith("scale,sweep,corpus,")
    assert all(r.startswith("tiny,embed-dim,stories:300KB,") for r in csv_rows[1:])
    assert doc["corpus"] == "stories:300KB" and doc["about"] == "d = 4, 16; seed 1337: everything else as the chapter's MLP"
    assert json.loads((out / "summary.json").read_text())["scale"] == "tiny"
    assert json.loads((out / "sweep.json").read_text())["scale"] == "tiny"


def test_table_numbers_equal_evaluate_run_of_each_run_dir(tiny_sweep):
    from lrngpt.inference.evaluate import evaluate_run

    out, doc = tiny_sweep
    for row in doc["rows"]:
        ev = evaluate_run(out / "runs" / row["name"], device="cpu", log=lambda m: None)
        assert row["val_bpb"] == pytest.approx(ev["val_bpb"], abs=1e-9)
        assert row["train_bpb"] == pytest.approx(ev["train_bpb"], abs=1e-9)
        assert f"| {ev['val_bpb']:.4f} |" in (out / "summary.md").read_text()


def test_summary_json_is_what_cost_mlp_reads(tiny_sweep):
    from lrngpt.analysis.costs import bpb_by_width

    out, doc = tiny_sweep
    assert bpb_by_width(SweepDir(out).summary_rows()) == {r["n_embd"]: pytest.approx(r["val_bpb"]) for r in doc["rows"]}


def test_a_width_sweep_judges_the_chapters_findings_in_json_and_in_its_closing_lines(tiny_sweep, tmp_path):
    from lrngpt.experiments.findings import judge
    from lrngpt.experiments.summary import collect

    shared, doc = tiny_sweep
    assert all(r["tokens_read"] == 30 * 8 * 64 for r in doc["rows"])  # steps x batch x seq_len at the tiny scale
    judged = [f.as_dict() for f in judge([collect(shared)])]
    assert doc["findings"] == json.loads(json.dumps(judged))  # (JSON makes the width keys strings)
    f1, f2, f3 = doc["findings"]
    assert [f1["verdict"], f2["verdict"], f3["verdict"]] == ["cannot tell"] * 3  # two widths, no small-data sweep
    assert f1["reason"] == "only 2 widths: two savings per doubling are needed to compare"
    out = copy(shared, tmp_path)  # --summary-only rewrites its summary
    code, stdout, stderr = run_cli("sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=4,16",
                                   "--out", str(out), "--summary-only")
    assert code == 0, stderr
    lines = stdout.splitlines()
    i = lines.index("The book chapter's findings, judged on this sweep:")
    # the finding, its verdict and the verdict's reason
    assert lines[i + 1].startswith("1. Each doubling of the embedding width saves less val bpb than the one before")
    assert f"CANNOT TELL: {f1['reason']}" in lines[i + 1]
    assert sum(line.startswith(("1. ", "2. ", "3. ")) for line in lines[i:]) == 3
    assert lines[-1].startswith(f"(judged on this sweep alone: `lrn report {out} DIR2 ...`")


def test_rerunning_a_finished_sweep_trains_nothing(tiny_sweep, tmp_path):
    out, doc = copy(tiny_sweep[0], tmp_path), tiny_sweep[1]  # the rerun rewrites its summary
    stamps = {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*/*") if p.suffix in (".pt", ".json")}
    code, stdout, stderr = run_cli("sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=4,16",
                                   "--out", str(out), "--json")
    assert code == 0, stderr
    again = json.loads(stdout)
    assert again["trained"] == [] and again["skipped"] == ["d4-s1337-t30", "d16-s1337-t30"]
    assert "skip d4-s1337-t30: finished at step 30" in stderr
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    assert [r["val_bpb"] for r in again["rows"]] == [r["val_bpb"] for r in doc["rows"]]


def test_shards_split_the_grid_disjointly_and_completely():
    sweep = resolve_sweep("embed-dim", "tiny", axes=["model.n_embd=4,8,16,32,64", "train.seed=1,2"])
    names = [p.name for p in sweep.points]
    assert len(set(names)) == 10
    for n in (1, 2, 3, 4, 7, 12):
        shards = [[p.name for p in shard_points(sweep, (i, n))] for i in range(n)]
        assert sorted(sum(shards, [])) == sorted(names)
        assert len(sum(shards, [])) == len(names)  # no point in two shards
        assert all(p.index % n == i for i in range(n) for p in shard_points(sweep, (i, n)))


def test_a_shard_trains_only_its_points_and_the_summary_gathers_what_exists(tmp_path):
    sweep = resolve_sweep("embed-dim", "tiny", ["train.steps=2"], ["model.n_embd=4,8"])
    result = run_sweep(sweep, tmp_path, shard=(1, 2), log=lambda m: None, figures=False)
    assert result["trained"] == ["d8-s1337-t2"]
    assert [r["n_embd"] for r in result["rows"]] == [8] and result["pending"] == ["d4-s1337-t2"]
    assert not (tmp_path / "runs" / "d4-s1337-t2").exists()


def test_a_partial_point_resumes_from_its_checkpoint(tmp_path):

    sweep = resolve_sweep("embed-dim", "tiny", ["train.steps=6"], ["model.n_embd=8"])
    point = sweep.points[0]
    run_dir = tmp_path / "runs" / point.name
    SweepDir(tmp_path).create_or_check(sweep.definition())  # as a sweep killed mid-point leaves it
    train_run(point.config, run_dir, stop_at=4, log=lambda m: None, progress=False)
    assert point_state(run_dir, point.steps) == "partial"
    logs: list[str] = []
    result = run_sweep(sweep, tmp_path, log=logs.append, figures=False)
    assert any("resume d8-s1337-t6" in m for m in logs)
    assert any("resumed from" in m and "at step 4" in m for m in logs)
    assert result["rows"][0]["steps"] == 6 and result["rows"][0]["finished"]
    metrics = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics].count(0) == 1  # not restarted from step 0
    assert point_state(run_dir, point.steps) == "finished"


@pytest.mark.slow
def test_a_killed_sweep_reruns_without_repeating_finished_points(tmp_path):
    out = tmp_path / "killed"
    argv = ["sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=4,8,16", "--set", "train.steps=10",
            "--out", str(out)]
    proc = subprocess.Popen([sys.executable, "-c", f"from lrngpt.cli.main import main; main({argv!r})"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ))
    first = out / "runs" / "d4-s1337-t10" / "summary.json"
    wait_for(first.exists, proc, "its first point's summary.json")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert first.exists()
    finished = [d for d in (out / "runs").iterdir() if point_state(d, 10) == "finished"]
    assert len(finished) < 3, "the sweep ended before the kill; nothing was left to resume"
    stamps = {p: p.stat().st_mtime_ns for d in finished for p in d.iterdir()}
    code, stdout, stderr = run_cli(*argv, "--json")
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert sorted(doc["skipped"]) == sorted(d.name for d in finished)
    assert len(doc["trained"]) == 3 - len(finished) and len(doc["rows"]) == 3
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps


def test_presets_follow_the_chapter_and_the_scales():
    from lrngpt.runconfig.schema import read_config_dict

    chapter = read_config_dict("mlp-chapter")
    full = resolve_sweep("embed-dim", "full")
    assert SCALES["full"] == {}
    for section in ("data", "train"):
        assert {k: full.base[section][k] for k in chapter[section]} == chapter[section]
    assert [p.config.model.n_embd for p in full.points] == [4, 8, 16, 32, 64, 128, 256, 512]
    assert full.points[4].name == "d64-s1337-t4000"
    long = resolve_sweep("embed-dim-long", "cpu")
    assert [p.name for p in long.points] == ["d16-s1337-t1600", "d64-s1337-t1600", "d256-s1337-t1600"]
    small = resolve_sweep("embed-dim-small-data", "cpu")
    assert small.base["data"]["train_tokens"] == 400 * 16 * 256 // 16
    assert resolve_sweep("embed-dim-small-data", "full").base["data"]["train_tokens"] == 4_000_000
    assert [p.config.train.seed for p in resolve_sweep("seed-variance", "cpu").points] == [1337, 1338, 1339]
    # a length set by the user moves the derived prefix with it; a prefix set by the user stays
    assert resolve_sweep("embed-dim-small-data", "cpu", ["train.steps=800"]).base["data"]["train_tokens"] == 204_800
    assert resolve_sweep("embed-dim-small-data", "cpu", ["data.train_tokens=5000"]).base["data"]["train_tokens"] == 5000


def test_a_sweep_file_defines_base_set_axes_and_scale(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"base": "mlp-tiny", "set": {"train.lr": 0.02}, "scale": "tiny",
                                "axes": {"model.n_hidden": [32, 64], "train.seed": [1, 2]}}))
    sweep = resolve_sweep(str(path))
    assert sweep.scale == "tiny" and sweep.name == "mine" and sweep.preset is None
    assert [p.name for p in sweep.points] == ["d16-s1-t30-h32", "d16-s2-t30-h32", "d16-s1-t30-h64", "d16-s2-t30-h64"]
    assert all(p.config.train.lr == 0.02 for p in sweep.points)
    assert resolve_sweep(str(path), scale="cpu").base["train"]["steps"] == 400  # --scale wins over the file


@pytest.mark.parametrize("argv, message", [
    (["no-such-preset"], "unknown sweep preset"),
    (["embed-dim", "--axis", "model.n_embed=4,8"], "unknown config key model.n_embed"),
    (["embed-dim", "--axis", "width=4"], "must be data.KEY"),
    (["embed-dim", "--axis", "model.n_embd=0"], "model.n_embd must be at least 1"),
    (["embed-dim", "--axis", "model.n_embd=4,4"], "repeats a value"),
    (["embed-dim", "--shard", "2/2"], "outside the range"),
    (["embed-dim", "--shard", "1/0"], "outside the range"),
    (["embed-dim", "--shard", "one/two"], "must look like i/n"),
    (["embed-dim", "--set", "train.steps"], "section.key=value"),
    (["embed-dim", "--summary-only"], "holds no sweep"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, argv, message):
    code, out, err = run_cli("sweep", *argv, "--scale", "tiny", "--out", str(tmp_path / "x"))
    assert code == 2 and message in err and err.count("\n") == 1 and out == ""
    assert not (tmp_path / "x").exists()  # nothing written


def test_bad_sweep_files_are_user_errors(tmp_path):
    cases = {"empty.json": {"axes": {}}, "noval.json": {"axes": {"model.n_embd": []}},
             "key.json": {"axes": {"model.n_embd": [4]}, "grid": 1},
             "scale.json": {"axes": {"model.n_embd": [4]}, "scale": "huge"},
             "study.json": {"study": "embed-size"}}
    for name, doc in cases.items():
        (tmp_path / name).write_text(json.dumps(doc))
        with pytest.raises(UserError):
            resolve_sweep(str(tmp_path / name))
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(UserError, match="not valid JSON"):
        resolve_sweep(str(tmp_path / "broken.json"))
    with pytest.raises(UserError, match="no such file"):
        resolve_sweep(str(tmp_path / "missing.json"))
    assert parse_shard(" 1/3 ") == (1, 3)


def test_an_out_dir_holding_another_sweep_is_refused(tiny_sweep, tmp_path):
    out, _ = tiny_sweep
    code, _, err = run_cli("sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=4,8", "--out", str(out))
    assert code == 2 and "holds a different sweep" in err
    (tmp_path / "notes.txt").write_text("mine")
    code, _, err = run_cli("sweep", "seed-variance", "--scale", "tiny", "--out", str(tmp_path))
    assert code == 2 and "holds no sweep" in err


def test_shards_starting_together_share_one_definition(tmp_path):
    sweep = resolve_sweep("seed-variance", "tiny")
    (tmp_path / f".sweep.json.tmp-{os.getpid() + 1}").write_text("another shard, mid-write")
    SweepDir(tmp_path).create_or_check(sweep.definition())
    SweepDir(tmp_path).create_or_check(sweep.definition())  # the second shard finds the same sweep: no error
    assert json.loads((tmp_path / "sweep.json").read_text())["points"][2]["name"] == "d64-s1339-t30"
    SweepDir(tmp_path).create_or_check(resolve_sweep("seed-variance", "tiny", ["train.device=cuda:1"]).definition())  # another GPU
    with pytest.raises(UserError, match="holds a different sweep"):
        SweepDir(tmp_path).create_or_check(resolve_sweep("seed-variance", "cpu").definition())


def test_a_config_key_added_since_the_sweep_began_reads_as_its_default(tmp_path):
    sweep = resolve_sweep("seed-variance", "tiny", ["model.emb_init_std=null"])
    SweepDir(tmp_path).create_or_check(sweep.definition())
    doc = json.loads((tmp_path / "sweep.json").read_text())
    del doc["base"]["model"]["emb_init_std"]  # as written before the key existed
    (tmp_path / "sweep.json").write_text(json.dumps(doc))
    SweepDir(tmp_path).create_or_check(sweep.definition())  # same sweep: the missing key was the default
    with pytest.raises(UserError, match="holds a different sweep"):
        SweepDir(tmp_path).create_or_check(resolve_sweep("seed-variance", "tiny", ["model.emb_init_std=0.5"]).definition())


def test_dry_run_lists_points_and_their_state(tiny_sweep):
    out, _ = tiny_sweep
    code, stdout, _ = run_cli("sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=4,16,64",
                              "--out", str(out.parent / "other"), "--dry-run", "--json")
    doc = json.loads(stdout)
    assert code == 0 and doc["scale"] == "tiny"
    assert [(p["name"], p["state"]) for p in doc["points"]] == [
        ("d4-s1337-t30", "new"), ("d16-s1337-t30", "new"), ("d64-s1337-t30", "new")]
    assert not (out.parent / "other").exists()


# ---- which scale, on which machine; the dry run's plan ------------------------------------------

def test_without_scale_a_cpu_only_machine_plans_the_cpu_scale_and_says_so(monkeypatch, tmp_path):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    sweep = resolve_sweep("embed-dim")
    assert sweep.scale == "cpu" and sweep.base["train"]["steps"] == 400 and sweep.base["train"]["batch_size"] == 16
    assert "no --scale given and torch sees no CUDA GPU: using the cpu scale" in sweep.note
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_sweep("embed-dim").scale == "full" and resolve_sweep("embed-dim").note is None
    # a directory keeps its own scale: a summary or a resume on another machine is the same sweep
    SweepDir(tmp_path).create_or_check(resolve_sweep("seed-variance", "tiny").definition())
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_sweep("seed-variance", out=tmp_path).scale == "tiny"


def test_the_cli_says_in_one_line_which_scale_it_chose(monkeypatch, tmp_path):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr("lrngpt.training.timing.probe", lambda cfg, device: {"train_s_per_token": 1e-4,
                                                                                  "eval_s_per_token": 3e-5})
    # the tiny scale's data (cached by now), not the cpu scale's 5 MB: the scale is what is chosen either way
    code, stdout, stderr = run_cli("sweep", "embed-dim", "--axis", "model.n_embd=8", "--set", "data.corpus=stories:300KB",
                                   "--set", "data.vocab_size=512", "--out", str(tmp_path / "x"), "--dry-run", "--json")
    assert code == 0 and json.loads(stdout)["scale"] == "cpu"
    assert [line for line in stderr.splitlines() if line.startswith("lrn sweep: ")] == [
        line for line in stderr.splitlines() if "using the cpu scale" in line]


def test_full_scale_on_a_cpu_only_machine_is_refused_with_the_estimate_unless_the_device_is_given(
        monkeypatch, tmp_path):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    probed = []

    def probe(cfg, device):
        probed.append(cfg.model.n_embd)
        return {"train_s_per_token": 1e-4, "eval_s_per_token": 3e-5}

    monkeypatch.setattr("lrngpt.training.timing.probe", probe)
    # a corpus that needs no download, so the machine check is what stops it (offline, missing
    # TinyStories files stop it first: tests/cli/test_scale_full.py)
    code, out, err = run_cli("sweep", "embed-dim", "--scale", "full", "--set", "data.corpus=stories:300KB",
                             "--out", str(tmp_path / "x"))
    assert code == 2 and err.count("\n") == 1 and out == ""
    # 8 runs x (4,000 x 64 x 256 tokens x 1e-4 s + 16 evaluations of 2M tokens x 3e-5 s + ...): about 16 h
    assert "--scale full plans 8 runs of 4,000 steps of 64 x 256 tokens, about 1" in err
    assert " h on this machine's cpu (estimated from 3 timed steps" in err
    assert "use --scale cpu, or insist with --device cpu" in err
    assert sorted(probed) == [4, 512]  # the smallest and the largest model; the others interpolated
    assert not (tmp_path / "x").exists()
    sweep = resolve_sweep("embed-dim", "full", ["train.device=cpu"], ["model.n_embd=8"])
    from lrngpt.experiments.dry_run import check_machine

    check_machine(sweep)  # insisting: no refusal
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    check_machine(resolve_sweep("embed-dim", "full"))


def test_dry_run_shows_steps_passes_and_estimated_seconds_per_point(tmp_path):
    code, stdout, stderr = run_cli("sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=8,64",
                                   "--out", str(tmp_path / "x"), "--dry-run", "--json")
    assert code == 0, stderr
    doc = json.loads(stdout)
    assert doc["about"] == "d = 8, 64; seed 1337: everything else as the chapter's MLP"  # the grid as given
    for p in doc["points"]:
        assert p["steps"] == 30 and p["tokens_read"] == 30 * 8 * 64
        assert p["passes"] == pytest.approx(p["tokens_read"] / p["train_split_tokens"])
        assert 0 < p["est_seconds"] < 600 and p["device"] == "cpu" and p["probed"]
    assert doc["est_seconds"] == pytest.approx(sum(p["est_seconds"] for p in doc["points"]))
    assert not (tmp_path / "x").exists()
    code, text, _ = run_cli("sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=8,64",
                            "--out", str(tmp_path / "x"), "--dry-run")
    lines = text.splitlines()
    assert lines[0].startswith("sweep embed-dim (tiny scale, corpus stories:300KB), shard 0/1: d = 8, 64; seed 1337")
    assert re.match(r"\s+0 d8-s1337-t30\s+new\s+30 steps\s+0\.\d\d passes\s+~\d+(\.\d)? s$", lines[1]), lines[1]
    assert "3 training steps of its model timed on this machine" in lines[3] and "an estimate" in lines[3]


def test_a_sweep_resolves_each_point_once_and_prepares_each_data_configuration_once(tmp_path, monkeypatch,
                                                                                   text_corpus):
    """Three points on one data configuration: resolving the grid builds each point's config once;
    running it checks each config once more (the trainer's check of a config changed after it was
    built), fingerprints and prepares the data once and hands it to every point; the summary reads
    each run's config.json and checkpoint once."""
    import collections
    import importlib
    import traceback

    from lrngpt.runconfig.schema import RunConfig

    data_module, train_module = importlib.import_module("lrngpt.data.prepared"), importlib.import_module("lrngpt.training.start")
    text_module = importlib.import_module("lrngpt.corpora.text")
    built: collections.Counter = collections.Counter()  # RunConfigs built, by the function that asked
    real_post_init = RunConfig.__post_init__

    def post_init(self):
        callers = [f.name for f in traceback.extract_stack()[:-1]]
        built[next(c for c in reversed(callers) if c not in ("__post_init__", "__init__", "from_dict"))] += 1
        real_post_init(self)

    monkeypatch.setattr(RunConfig, "__post_init__", post_init)
    sets = [f"data.corpus={text_corpus}", "data.vocab_size=300", "train.steps=4", "train.eval_every=2"]
    sweep = resolve_sweep("embed-dim", "tiny", sets, ["model.n_embd=4,8,16"])
    assert built["resolve_sweep"] == 3 and built["resolve_base"] == 2  # each point once, the base twice (before, after scale)
    built.clear()
    counts = {"prepare": 0, "fingerprint": 0}

    def counting(name, real):
        def wrapper(*args, **kwargs):
            counts[name] += 1
            return real(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(data_module, "prepare", counting("prepare", data_module.prepare))
    monkeypatch.setattr(train_module, "prepare", counting("prepare", train_module.prepare))
    dry_run_module = importlib.import_module("lrngpt.experiments.dry_run")  # where a sweep prepares its data
    monkeypatch.setattr(dry_run_module, "prepare", counting("prepare", dry_run_module.prepare))
    monkeypatch.setattr(text_module, "fingerprint_files", counting("fingerprint", text_module.fingerprint_files))
    result = run_sweep(sweep, tmp_path / "s", log=lambda m: None, progress=False, figures=False)
    assert [r["n_embd"] for r in result["rows"]] == [4, 8, 16]
    assert counts == {"prepare": 1, "fingerprint": 1}, counts
    # and the summary recovers the sweep's --set items from its base config (the base alone, twice: no point)
    assert dict(built) == {"validated": 3, "_parse_config": 3, "load_checkpoint": 3, "resolve_base": 2}, built


def test_sweep_json_from_a_newer_lrn_is_refused_and_one_without_a_version_is_damaged(tmp_path, capsys):
    sweep = resolve_sweep("seed-variance", "tiny")
    SweepDir(tmp_path).create_or_check(sweep.definition())
    doc = json.loads((tmp_path / "sweep.json").read_text())
    assert doc["version"] == 1
    del doc["version"]
    (tmp_path / "sweep.json").write_text(json.dumps(doc))
    with pytest.raises(UserError, match="version must be a positive whole number, got null; it is damaged"):
        SweepDir(tmp_path).definition()
    (tmp_path / "sweep.json").write_text(json.dumps({**doc, "version": 2}))
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is format 2, newer than this lrn reads (1)" in err and err.count("\n") == 1, err
