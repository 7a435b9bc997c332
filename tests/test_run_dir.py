"""The run directory's owner: one writer at a time, ownership, --force, metrics on resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from lrngpt.cli.main import main
from lrngpt.core.ownership import write_owned_file
from lrngpt.errors import UserError
from lrngpt.store.checkpoint import load_checkpoint
from lrngpt.store.layout import LAST, RUN_FILE
from lrngpt.store.rundir import RunDir
from lrngpt.training.trainer import train_run

HOLD = """
import sys
from lrngpt.store.rundir import RunDir
run = RunDir(sys.argv[1]).lock()  # held while the object lives
print("locked", flush=True)
sys.stdin.read()  # until the test is done with it (it closes the pipe, or kills this process)
"""


def test_a_second_writer_is_refused_while_the_first_holds_the_directory(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path / "r")], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "locked"
        with pytest.raises(UserError, match=rf"is in use by process {child.pid} on \S+; wait"):
            RunDir(tmp_path / "r").lock()
    finally:
        child.kill()
        child.wait()
    RunDir(tmp_path / "r").lock().unlock()  # a dead process's lock never blocks


def test_start_refuses_a_directory_with_files_lrn_did_not_write_even_with_force(tmp_path):
    d = tmp_path / "mine"
    d.mkdir()
    (d / "notes.txt").write_text("precious")
    for force in (False, True):
        with pytest.raises(UserError, match=r"lrn did not write \(notes.txt\)"):
            RunDir(d).start(force=force)
    assert (d / "notes.txt").read_text() == "precious"
    assert sorted(p.name for p in d.iterdir()) == ["notes.txt"]  # not even a lock file is left in it


def test_a_second_start_on_a_run_is_refused_without_force(tmp_path):
    d = tmp_path / "new"
    first = RunDir(d)
    first.start()
    first.unlock()
    write_owned_file(d / "ckpt_init.pt", b"step 0", RUN_FILE)  # it saved its first checkpoint: a run, resumable
    with pytest.raises(UserError, match="already holds a run; use resume=True to continue it, force=True to replace it"):
        RunDir(d).start()
    RunDir(d).start(force=True)


def test_a_start_that_saved_nothing_is_replaced_without_force_and_a_failed_one_leaves_nothing(tmp_path):
    d = tmp_path / "stub"
    first = RunDir(d)
    first.start()  # then killed: the record (kind "run"), no checkpoint
    (d / "metrics.jsonl").write_text("")
    first.unlock()
    assert RunDir(d).is_stub()
    second = RunDir(d)
    second.start()  # no --force needed: nothing in it can be resumed or read
    assert sorted(p.name for p in d.iterdir()) == [".lrn-lock", ".lrn-output", ".lrn-output.lock"]
    second.abandon()  # this start failed: the directory it did not make stays, empty of lrn's run
    second.unlock()
    assert sorted(p.name for p in d.iterdir()) == [".lrn-lock"]
    third = RunDir(tmp_path / "made")
    third.start()
    third.abandon()  # a directory the failed start made goes with it
    third.unlock()
    assert not third.path.exists()
    other = RunDir(d)
    other.abandon()  # an object that started nothing removes nothing
    assert (d / ".lrn-lock").exists()


def test_force_removes_every_file_of_the_earlier_run_and_nothing_else(tiny_config, tmp_path):
    run = tmp_path / "r"
    train_run(tiny_config("train.steps=6", "train.eval_every=3", "train.tensorboard=false"), run, progress=False)
    (run / "notes.txt").write_text("mine")
    before = {p.name for p in run.iterdir()}
    assert {"ckpt_best.pt", "summary.json", "metrics.jsonl", "ckpt_init.pt"} <= before

    class Stop(Exception):
        pass

    def boom(message):  # the run stops at its first line about the model: config written, no checkpoint yet
        if message.startswith("model "):
            raise Stop

    # a --force run interrupted before its first checkpoint leaves no file of the old run behind
    with pytest.raises(Stop):
        train_run(tiny_config("train.steps=6", "model.n_embd=8"), run, force=True, progress=False, log=boom)
    left = {p.name for p in run.iterdir()}
    assert left == {".lrn-lock", ".lrn-output", ".lrn-output.lock", "notes.txt", "config.json",
                    "tokenizer.json"}
    assert RunDir(run).config().model.n_embd == 8  # the new run's config, not the old one's
    assert (run / "notes.txt").read_text() == "mine"


def test_resume_cuts_metrics_back_to_the_checkpoint_so_they_equal_a_straight_run(tiny_config, tmp_path):
    cfg = lambda: tiny_config("train.steps=12", "train.eval_every=4", "train.log_every=1")  # noqa: E731
    train_run(cfg(), tmp_path / "straight", progress=False)
    train_run(cfg(), tmp_path / "cut", stop_at=8, progress=False)
    # a kill after step 8's checkpoint: rows for steps 9 and 10 were written, no checkpoint at 10
    with open(tmp_path / "cut" / "metrics.jsonl", "a") as f:
        for step in (9, 10):
            f.write(json.dumps({"step": step, "loss": 1.0, "lr": 0.0, "tokens_per_s": 1.0}) + "\n")
        f.write('{"step": 11, "loss"')  # cut mid-line
    train_run(cfg(), tmp_path / "cut", resume=True, progress=False)

    def steps(name):
        return [(r["step"], sorted(r)) for r in RunDir(tmp_path / name).metrics()]

    assert steps("cut") == steps("straight")
    a, b = (load_checkpoint(tmp_path / n / LAST)["model"] for n in ("straight", "cut"))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_resume_of_a_finished_run_does_no_work(tiny_config, tmp_path):
    run = tmp_path / "r"
    first = train_run(tiny_config("train.steps=4"), run, progress=False)
    mtime = (run / LAST).stat().st_mtime_ns
    again = train_run(tiny_config("train.steps=4"), run, resume=True, progress=False)
    assert again["already_finished"] is True and again["val_bpb"] == first["val_bpb"]
    assert (run / LAST).stat().st_mtime_ns == mtime


def test_summary_records_passes_and_the_best_periodic_evaluation(tiny_config, tmp_path):
    s = train_run(tiny_config("train.steps=8", "train.eval_every=2"), tmp_path / "r", progress=False)
    assert s["passes"] == pytest.approx(8 * 8 * 64 / s["train_split_tokens"])
    best = min((r["val_bpb"], r["step"]) for r in RunDir(tmp_path / "r").metrics()
               if "val_bpb" in r and not r.get("final") and r["step"] > 0)
    assert (s["best_val_bpb"], s["best_step"]) == best


def test_readers_never_see_a_temporary_file_and_stale_ones_are_cleaned(tiny_config, tmp_path):
    run = tmp_path / "r"
    train_run(tiny_config("train.steps=2"), run, progress=False)
    stale = run / ".ckpt_last.pt.tmp-999999-abcd1234"  # left by a process that no longer exists
    stale.write_bytes(b"x" * 10)
    RunDir(run).lock().unlock()
    assert not stale.exists()
    assert not [p for p in run.iterdir() if ".tmp-" in p.name]


def test_a_broken_config_json_is_named_with_the_field(tmp_path):
    d = tmp_path / "r"
    d.mkdir()
    (d / "config.json").write_text('{"data": [1, 2]}')
    with pytest.raises(UserError, match=r"config.json: config section 'data' must be an object"):
        RunDir(d).config()
    (d / "config.json").write_bytes(b"\xff\xfe{")
    with pytest.raises(UserError, match="not UTF-8"):
        RunDir(d).config()


def test_a_checkpoint_without_step_is_named(tmp_path):
    path = tmp_path / "ckpt_last.pt"
    torch.save({"schema": 1, "model": {}, "config": {}, "tokenizer": "{}"}, path)
    with pytest.raises(UserError, match="has no 'step'"):
        load_checkpoint(path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file whatever its permissions")
def test_an_unreadable_checkpoint_is_a_permission_error_not_corruption(tiny_config, tmp_path):
    run = tmp_path / "r"
    train_run(tiny_config("train.steps=2"), run, progress=False)
    (run / LAST).chmod(0)
    with pytest.raises(UserError, match="permission denied"):
        load_checkpoint(run / LAST)


def test_a_checkpoint_from_a_newer_lrn_is_refused_and_one_without_a_schema_is_damaged(
        tiny_config, tmp_path, capsys):
    from lrngpt.store.checkpoint import load_checkpoint, save_checkpoint

    run = tmp_path / "r"
    train_run(tiny_config("train.steps=2"), run, progress=False, log=lambda m: None)
    ckpt = load_checkpoint(run / "ckpt_last.pt")
    assert ckpt["schema"] == 1
    del ckpt["schema"]
    save_checkpoint(ckpt, run / "ckpt_last.pt")
    with pytest.raises(UserError, match="schema must be a positive whole number .got None.; it is damaged"):
        load_checkpoint(run / "ckpt_last.pt")
    save_checkpoint({**ckpt, "schema": 2}, run / "ckpt_last.pt")
    assert main(["eval", str(run)]) == 2
    err = capsys.readouterr().err
    assert "is schema 2, newer than this lrn reads (1)" in err and err.count("\n") == 1, err


def test_a_run_stopped_before_its_first_periodic_checkpoint_resumes_from_ckpt_init_bit_exactly(tiny_config, tmp_path):
    cfg = lambda: tiny_config("train.steps=10", "train.eval_every=8", "train.log_every=1")  # noqa: E731
    train_run(cfg(), tmp_path / "straight", progress=False)

    def crash(msg):
        if msg.startswith("step 3/"):
            raise RuntimeError("killed")

    with pytest.raises(RuntimeError, match="killed"):
        train_run(cfg(), tmp_path / "cut", progress=False, log=crash)
    cut = tmp_path / "cut"
    assert (cut / "ckpt_init.pt").exists() and not (cut / LAST).exists()
    lines = (cut / "metrics.jsonl").read_text().splitlines()
    (cut / "metrics.jsonl").write_text("\n".join(lines[1:]) + "\n")  # killed before even the step-0 row was written
    said = []
    train_run(cfg(), cut, resume=True, progress=False, log=said.append)
    assert any("resumed from" in m and "ckpt_init.pt at step 0" in m for m in said), said

    def values(name):  # every number but the timing
        return [{k: v for k, v in r.items() if k != "tokens_per_s"} for r in RunDir(tmp_path / name).metrics()]

    assert values("cut") == values("straight")
    a, b = (load_checkpoint(tmp_path / n / LAST)["model"] for n in ("straight", "cut"))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_resume_at_the_checkpoints_step_does_not_evaluate_it_twice(tiny_config, tmp_path):
    """Killed in the final evaluation (after the last checkpoint, before summary.json), or run again
    with the same --steps: the evaluation at that step is in metrics.jsonl once."""
    cfg = lambda: tiny_config("train.steps=8", "train.eval_every=4", "train.log_every=2")  # noqa: E731
    train_run(cfg(), tmp_path / "straight", progress=False)
    train_run(cfg(), tmp_path / "cut", progress=False)
    cut = tmp_path / "cut"
    (cut / "summary.json").unlink()
    lines = (cut / "metrics.jsonl").read_text().splitlines()
    (cut / "metrics.jsonl").write_text("\n".join(lines[:-1]) + "\n")  # the final row not yet written either
    train_run(cfg(), cut, resume=True, progress=False)

    def keys(name):
        return [(r["step"], sorted(r)) for r in RunDir(tmp_path / name).metrics()]

    assert keys("cut") == keys("straight")
    train_run(cfg(), tmp_path / "part", stop_at=4, progress=False)
    train_run(cfg(), tmp_path / "part", stop_at=4, resume=True, progress=False)  # the same --steps again
    assert [k for k in keys("part") if k[0] <= 4 and "final" not in k[1]] == \
        [k for k in keys("straight") if k[0] <= 4]


def test_a_file_is_parsed_once_while_unchanged_and_again_once_replaced_or_appended(tmp_path):
    """lrngpt.core.once: the owners' reads share one parse while the file is the same; lrn's writes (a rename,
    an append) make it a new file; each caller gets its own copy."""
    from lrngpt.core.fsio import atomic_write
    from lrngpt.core.once import parsed

    calls = []

    def parse(p):
        calls.append(p)
        return {"lines": p.read_text().splitlines()}

    f = tmp_path / "metrics.jsonl"
    f.write_text("a\n")
    first = parsed(f, "test lines", parse)
    first["lines"].append("mine")  # the caller's copy
    assert parsed(f, "test lines", parse) == {"lines": ["a"]} and len(calls) == 1
    with open(f, "a") as out:
        out.write("b\n")
    assert parsed(f, "test lines", parse) == {"lines": ["a", "b"]} and len(calls) == 2
    atomic_write(f, "c\nd\n")  # same size, a new file renamed into place
    assert parsed(f, "test lines", parse) == {"lines": ["c", "d"]} and len(calls) == 3
    assert parsed(f, "other parser", parse) == {"lines": ["c", "d"]} and len(calls) == 4
    f.unlink()
    with pytest.raises(FileNotFoundError):
        parsed(f, "test lines", parse)  # a missing file: the parser's own error
