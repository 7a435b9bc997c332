"""What `lrn train` tells a user training on their own text: the passes it will make over the
text (and a warning past 2), a log line every log_every steps when stderr is not a terminal,
that resuming a finished run does nothing, and that a resume which would change the learning-rate
schedule is refused unless --extend."""

from __future__ import annotations

import hashlib
import json
import math
import re

from lrngpt.cli.main import main

TINY = ["train", "--config", "mlp-tiny", "--set", "data.vocab_size=300"]  # batch 8 x seq_len 64


def train_tokens(text_corpus) -> int:
    from lrngpt.data.prepared import prepare
    from lrngpt.runconfig.schema import DataConfig

    return len(prepare(DataConfig(corpus=text_corpus, vocab_size=300), log=lambda m: None).tokens("train"))


def test_a_run_that_reads_its_text_five_times_warns_with_the_steps_of_one_pass(capsys, tmp_path, text_corpus):
    n_train = train_tokens(text_corpus)
    steps = round(5 * n_train / (8 * 64))
    # --steps 1 stops after one step: the plan and the warning come first, from train.steps
    assert main([*TINY, "--corpus", text_corpus, "--set", f"train.steps={steps}", "--steps", "1",
                 "--out", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err
    passes = steps * 8 * 64 / n_train
    assert f"data: {n_train:,} training tokens; {steps:,} steps x 8 x 64 read {steps * 512:,} tokens = " \
           f"{passes:.2f} passes over the training text" in err
    warning = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and f"{passes:.1f} passes over {n_train:,} training tokens" in warning[0]
    assert "5.0 passes" in warning[0] and f"one pass is --set train.steps={n_train // 512:,}" in warning[0]
    assert "ckpt_best.pt" in warning[0]


def test_a_run_within_two_passes_does_not_warn(capsys, tmp_path, text_corpus):
    assert main([*TINY, "--corpus", text_corpus, "--set", "train.steps=20", "--steps", "1",
                 "--out", str(tmp_path / "r")]) == 0
    assert "warning" not in capsys.readouterr().err


LINE = re.compile(r"step (\d+)/10 \| loss (\d+\.\d{4}) \((\d+\.\d{4}) bpb\) \| lr (\d\.\d\de[-+]\d\d) \| "
                  r"([\d,]+) tok/s \| (\d+:\d\d) elapsed, ETA (\d+:\d\d)")


def test_without_a_terminal_training_logs_a_line_every_log_every_steps(capsys, tmp_path, text_corpus):
    run = tmp_path / "r"
    assert main([*TINY, "--corpus", text_corpus, "--set", "train.steps=10", "--set", "train.log_every=3",
                 "--set", "train.eval_every=100", "--out", str(run)]) == 0
    err = capsys.readouterr().err.splitlines()  # pytest's stderr is no terminal: no progress bar
    step0 = [line for line in err if line.startswith("step 0:")]
    assert len(step0) == 1 and re.fullmatch(r"step 0: val bpb \d+\.\d{4} \(untrained; periodic estimate on [\d,]+ tokens\)",
                                              step0[0])
    lines = [m for m in map(LINE.fullmatch, err) if m]
    assert [int(m[1]) for m in lines] == [3, 6, 9, 10]  # every log_every steps, and the last
    assert lines[-1][7] == "0:00"  # ETA at the end
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    train_rows = [r for r in rows if "loss" in r]
    assert [r["step"] for r in train_rows] == [3, 6, 9, 10]
    for m, r in zip(lines, train_rows, strict=True):  # the line shows the metrics row, train bpb included
        assert (m[2], m[3], m[4]) == (f"{r['loss']:.4f}", f"{r['train_bpb']:.4f}", f"{r['lr']:.2e}")
        assert abs(int(m[5].replace(",", "")) - r["tokens_per_s"]) <= 1  # the row keeps one decimal
    step0_row = next(r for r in rows if r["step"] == 0)
    assert step0[0].startswith(f"step 0: val bpb {step0_row['val_bpb']:.4f}")
    # train bpb is the batch's loss in the val bpb's unit: nats/token over ln 2 x bytes/token
    assert all(0 < r["train_bpb"] < r["loss"] / math.log(2) for r in train_rows)


def snapshot(run) -> dict:
    return {p.name: (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(run.rglob("*")) if p.is_file()}


def test_resuming_a_finished_run_says_so_and_changes_no_file(capsys, tmp_path, text_corpus):
    run = tmp_path / "r"
    assert main([*TINY, "--corpus", text_corpus, "--set", "train.steps=4", "--out", str(run)]) == 0
    first = json.loads((run / "summary.json").read_text())
    capsys.readouterr()
    before = snapshot(run)
    assert main(["train", "--out", str(run), "--resume", "--json"]) == 0
    out, err = capsys.readouterr()
    assert f"{run} already finished at step 4; nothing to do" in err
    assert "step 1/" not in err and "val bpb" not in err  # no training, no evaluation
    r = json.loads(out)
    assert r["already_finished"] is True and r["val_bpb"] == first["val_bpb"]
    assert snapshot(run) == before



def test_resuming_with_a_new_schedule_is_refused_then_extend_follows_it(capsys, tmp_path, text_corpus):
    from lrngpt.runconfig.schema import from_dict
    from lrngpt.training.schedule import lr_at

    run = tmp_path / "r"
    assert main([*TINY, "--corpus", text_corpus, "--set", "train.steps=6", "--set", "train.warmup_steps=2",
                 "--set", "train.log_every=1", "--out", str(run)]) == 0
    old = from_dict(json.loads((run / "config.json").read_text())).train
    capsys.readouterr()
    before = snapshot(run)
    resume = ["train", "--out", str(run), "--resume", "--set", "train.steps=12"]
    assert main(resume) == 2
    err = capsys.readouterr().err.strip()
    new = from_dict({**json.loads((run / "config.json").read_text()),
                     "train": {**old.__dict__, "steps": 12}}).train
    assert len(err.splitlines()) == 1
    assert f"train.steps 6 -> 12 changes the learning-rate schedule: lr at step 6 would jump from " \
           f"{lr_at(6, old):.1e}".replace("e-0", "e-") in err
    assert f"to {lr_at(6, new):.1e}".replace("e-0", "e-") in err and "--extend" in err
    assert lr_at(6, new) > 2 * lr_at(6, old)  # the jump the refusal guards against
    unlocked = lambda snap: {k: v for k, v in snap.items() if k != ".lrn-lock"}  # noqa: E731 (the lock is taken)
    assert unlocked(snapshot(run)) == unlocked(before)  # nothing written, metrics not cut
    assert main([*resume, "--extend"]) == 0
    cfg = json.loads((run / "config.json").read_text())
    summary = json.loads((run / "summary.json").read_text())
    assert cfg["train"]["steps"] == 12 and summary["step"] == 12 and summary["finished"] is True
    assert [c["step"] for c in summary["schedule_changes"]] == [6]
    assert summary["schedule_changes"][0]["train"]["steps"] == 12
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    lrs = {r["step"]: r["lr"] for r in rows if "lr" in r}
    assert [lrs[s] for s in range(1, 7)] == [lr_at(s - 1, old) for s in range(1, 7)]
    assert [lrs[s] for s in range(7, 13)] == [lr_at(s - 1, new) for s in range(7, 13)]
    # the extended run resumes as itself afterwards: nothing to change, nothing refused
    capsys.readouterr()
    assert main(["train", "--out", str(run), "--resume"]) == 0
    assert "already finished at step 12" in capsys.readouterr().err


def test_resuming_past_the_schedule_with_steps_alone_is_not_a_schedule_change(capsys, tmp_path, text_corpus):
    run = tmp_path / "r"
    assert main([*TINY, "--corpus", text_corpus, "--set", "train.steps=4", "--out", str(run)]) == 0
    assert main(["train", "--out", str(run), "--resume", "--steps", "6"]) == 0  # flat at min_lr after step 4
    assert json.loads((run / "summary.json").read_text())["schedule_changes"] == []
    assert main(["train", "--config", "mlp-tiny", "--out", str(tmp_path / "x"), "--extend"]) == 2
    assert "give it with --resume" in capsys.readouterr().err


def test_dry_run_sizes_the_run_passes_and_one_pass_steps(capsys, text_corpus):
    n_train = train_tokens(text_corpus)
    argv = [*TINY, "--corpus", text_corpus, "--set", "train.steps=90", "--dry-run"]
    assert main([*argv, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["train_tokens"] == n_train and r["tokens_read"] == 90 * 8 * 64
    assert r["passes"] == 90 * 512 / n_train and r["one_pass_steps"] == n_train // 512
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"data: {n_train:,} training tokens; 90 steps x 8 x 64 read {90 * 512:,} tokens = " \
           f"{90 * 512 / n_train:.2f} passes over the training text; one pass is --set " \
           f"train.steps={n_train // 512:,}" in out


def test_dry_run_of_a_corpus_not_prepared_yet_reads_its_steps_without_a_download(capsys):
    assert main(["train", "--config", "mlp-chapter", "--dry-run", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["tokens_read"] == 4000 * 64 * 256 and r["train_tokens"] is None and r["passes"] is None
    assert r["one_pass_steps"] is None
