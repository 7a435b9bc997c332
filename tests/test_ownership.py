"""No user file is ever overwritten or deleted; a full disk or a damaged cache loses nothing."""

from __future__ import annotations

import errno
import os

import pytest

from lrngpt.cli.main import main
from lrngpt.errors import UserError
from lrngpt.store.layout import LAST
from lrngpt.store.rundir import RunDir
from lrngpt.training.trainer import train_run


def test_tokenizer_train_never_replaces_a_runs_tokenizer_or_an_unrelated_file(text_corpus, tmp_path, capsys,
                                                                             tiny_config):
    run = tmp_path / "base"
    train_run(tiny_config("train.steps=2"), run, progress=False)
    before = (run / "tokenizer.json").read_bytes()
    args = ["tokenizer", "train", "--corpus", text_corpus, "--vocab-size", "280"]
    assert main([*args, "--out", str(run), "--force"]) == 2
    assert "holds lrn's run" in capsys.readouterr().err
    assert (run / "tokenizer.json").read_bytes() == before
    settings = tmp_path / "settings.json"
    settings.write_text('{"mine": true}')
    assert main([*args, "--out", str(settings)]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert settings.read_text() == '{"mine": true}'
    tok_dir = tmp_path / "tok"
    assert main([*args, "--out", str(tok_dir)]) == 0
    assert main([*args, "--out", str(tok_dir)]) == 2  # exists: only with --force
    assert "add --force" in capsys.readouterr().err
    assert main([*args, "--out", str(tok_dir), "--force"]) == 0


def test_a_full_disk_on_resume_leaves_config_and_checkpoint_intact(tiny_config, tmp_path, monkeypatch, capsys):
    run = tmp_path / "r"
    train_run(tiny_config("train.steps=8", "train.eval_every=2"), run, stop_at=4, progress=False)
    config, ckpt = (run / "config.json").read_bytes(), (run / LAST).read_bytes()
    real_fsync = os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("lrngpt.core.fsio.os.fsync", full)
    code = main(["train", "--out", str(run), "--resume"])
    monkeypatch.setattr("lrngpt.core.fsio.os.fsync", real_fsync)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and "disk full while writing" in err[-1] and "earlier file is intact" in err[-1]
    assert (run / "config.json").read_bytes() == config
    assert (run / LAST).read_bytes() == ckpt
    assert not [p for p in run.iterdir() if ".tmp-" in p.name]  # no temp file keeps the disk full
    assert main(["train", "--out", str(run), "--resume"]) == 0  # and the run goes on afterwards


def test_a_wrong_tokenizer_in_the_data_cache_is_rebuilt_not_used(tiny_config, tmp_path):
    first = train_run(tiny_config("train.steps=3"), tmp_path / "a", progress=False)
    cache = RunDir(tmp_path / "a").summary()["data_key"]
    from lrngpt.data.prepared import data_cache_dir
    from lrngpt.tokenizer.bpe import Tokenizer

    entry = data_cache_dir() / cache
    Tokenizer.train(["some other text entirely"] * 20, 260).save(entry / "tokenizer.json")
    lines: list[str] = []  # the library logs through its logger (or `log`), not to stderr itself
    second = train_run(tiny_config("train.steps=3"), tmp_path / "b", progress=False, log=lines.append)
    assert "is damaged (tokenizer.json is not the tokenizer these tokens were encoded with); preparing it" \
        in "\n".join(lines)
    assert second["val_bpb"] == first["val_bpb"]


def test_a_truncated_token_file_in_the_cache_is_rebuilt(tiny_config, tmp_path):
    first = train_run(tiny_config("train.steps=3"), tmp_path / "a", progress=False)
    from lrngpt.data.prepared import data_cache_dir

    train_bin = data_cache_dir() / first["data_key"] / "train.bin"
    train_bin.write_bytes(train_bin.read_bytes()[:100])
    lines: list[str] = []
    second = train_run(tiny_config("train.steps=3"), tmp_path / "b", progress=False, log=lines.append)
    assert "train.bin holds 100 bytes" in "\n".join(lines)
    assert second["val_bpb"] == first["val_bpb"]


@pytest.mark.parametrize("key", ["model.vocab_size=50257", "model.pad_id=3"])
def test_setting_a_derived_key_exits_2_naming_what_to_set(key, capsys):
    assert main(["train", "--config", "mlp-tiny", "--set", key, "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and key.split("=")[0] in err
    assert ("data.vocab_size" in err) if "vocab" in key else ("lrn sets itself" in err)


def test_an_unknown_key_suggests_the_closest(capsys):
    assert main(["train", "--config", "mlp-tiny", "--set", "model.n_embed=8", "--dry-run"]) == 2
    assert "did you mean model.n_embd?" in capsys.readouterr().err


# ---- "is this a run?": one answer (lrngpt.core.ownership.is_run), used by every command ------------

def _dir_with(tmp_path, name: str, *files: str):
    d = tmp_path / name
    d.mkdir()
    for f in files:  # (the record: of a run)
        (d / f).write_bytes(b'{"kind": "run"}' if f == ".lrn-output" else b"{}" if f.endswith(".json") else b"x")
    return d


def test_a_run_is_its_record_never_a_config_json_or_a_checkpoint_alone(tmp_path):
    from lrngpt.core.ownership import is_run, lrn_kind

    alone = _dir_with(tmp_path, "alone", "config.json")
    assert not is_run(alone) and not RunDir(alone).holds_run() and lrn_kind(alone) is None
    assert not is_run(_dir_with(tmp_path, "empty")) and not is_run(_dir_with(tmp_path, "ckpt", "config.json",
                                                                               "ckpt_last.pt"))
    marked = _dir_with(tmp_path, "marked", ".lrn-output")
    assert is_run(marked) and lrn_kind(marked) == "run" and RunDir(marked).holds_run()


def test_tokenizer_train_refuses_a_marked_run_and_not_a_lone_config_json(tmp_path):
    from lrngpt.data.prepared import tokenizer_out

    with pytest.raises(UserError, match="holds lrn's run"):
        tokenizer_out(_dir_with(tmp_path, "marked", ".lrn-output"))
    alone = _dir_with(tmp_path, "alone", "config.json")
    assert tokenizer_out(alone) == alone / "tokenizer.json"


# ---- the record is the directory's own: no key, no signature ------------------------------------

def _user_file_and_record(tmp_path) -> tuple:
    """A file of the user's, and beside it a record, written by hand, naming it with its true sha256."""
    import hashlib
    import json

    user = tmp_path / "user.txt"
    user.write_text("my own notes\n")
    doc = {"format": 4, "kind": None, "files": {"user.txt": hashlib.sha256(user.read_bytes()).hexdigest()},
           "what": {"user.txt": "stories corpus"}, "stat": {}, "earlier": {}, "append": {}}
    (tmp_path / ".lrn-output").write_text(json.dumps(doc))
    return user, user.read_bytes()


def test_a_record_written_by_hand_is_the_users_word_and_still_needs_force(tmp_path, capsys):
    from lrngpt.core.ownership import check_file_target

    user, before = _user_file_and_record(tmp_path)
    with pytest.raises(UserError, match="holds an earlier stories corpus that lrn wrote; add force=True") as e:
        check_file_target(user, False, "stories corpus")
    assert "\n" not in str(e.value)
    assert main(["-q", "data", "stories", "--size", "2KB", "--out", str(user)]) == 2
    assert "add --force" in capsys.readouterr().err and user.read_bytes() == before
    # the user named the file in lrn's record: like --force, their word; --force then replaces it
    assert main(["-q", "data", "stories", "--size", "2KB", "--out", str(user), "--force"]) == 0
    assert user.read_bytes() != before


def test_an_edit_after_lrn_wrote_a_file_makes_it_the_users_even_with_a_record(tmp_path, capsys):
    out = tmp_path / "s.txt"
    assert main(["-q", "data", "stories", "--size", "2KB", "--out", str(out)]) == 0
    out.write_text(out.read_text() + "my line\n")
    before = out.read_bytes()
    assert main(["-q", "data", "stories", "--size", "3KB", "--out", str(out), "--force"]) == 2
    err = capsys.readouterr().err
    assert "was changed since lrn wrote it" in err and "with or without --force" in err
    assert out.read_bytes() == before


def test_a_run_copied_elsewhere_resumes_extends_reports_and_forces_like_the_original(tiny_config, tmp_path, capsys):
    import shutil

    original = tmp_path / "home-a" / "run"
    train_run(tiny_config("train.steps=4", "train.eval_every=2"), original, stop_at=2, progress=False)
    copy = tmp_path / "home-b" / "run"
    shutil.copytree(original, copy)  # new inodes and times, as on another machine or in another user's home
    (copy / ".lrn-lock").unlink()  # (a copy taken while no one wrote it)
    train_run(tiny_config("train.steps=4", "train.eval_every=2"), copy, resume=True, progress=False)
    assert RunDir(copy).summary()["step"] == 4
    assert main(["-q", "report", str(copy)]) == 0 and (copy / "report.html").is_file()
    assert main(["-q", "report", str(copy)]) == 0  # its own page, rewritten as the run goes on
    (copy / "notes.txt").write_text("mine")
    assert main(["-q", "train", "--config", "mlp-tiny", "--set", f"data.corpus={tiny_config().data.corpus}",
                 "--set", "data.vocab_size=300", "--set", "train.steps=2", "--out", str(copy), "--force"]) == 0
    assert RunDir(copy).summary()["step"] == 2 and (copy / "notes.txt").read_text() == "mine"


def test_a_sweep_copied_elsewhere_resumes_and_writes_its_summary_like_the_original(text_corpus, tmp_path, capsys):
    import shutil

    args = ["-q", "sweep", "embed-dim", "--scale", "tiny", "--set", f"data.corpus={text_corpus}", "--set",
            "data.vocab_size=300", "--set", "train.steps=2", "--axis", "model.n_embd=4,8"]
    original = tmp_path / "a" / "sw"
    assert main([*args, "--out", str(original)]) == 0
    copy = tmp_path / "b" / "sw"
    shutil.copytree(original, copy, ignore=shutil.ignore_patterns(".lrn-lock"))
    lines = (copy / "lines.txt").read_bytes()
    assert main([*args, "--out", str(copy)]) == 0  # nothing left to train: its summary rewritten as its own
    assert (copy / "lines.txt").read_bytes() == lines
    runs = sorted(p for p in (copy / "runs").iterdir())
    shutil.rmtree(runs[-1])  # one point to train again in the copy
    assert main([*args, "--out", str(copy)]) == 0
    assert (runs[-1] / "summary.json").is_file() and len((copy / "lines.txt").read_text().splitlines()) == 2
