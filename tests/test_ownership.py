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
    assert "holds an lrn run" in capsys.readouterr().err
    assert (run / "tokenizer.json").read_bytes() == before
    settings = tmp_path / "settings.json"
    settings.write_text('{"mine": true}')
    assert main([*args, "--out", str(settings)]) == 2
    assert "is a file" in capsys.readouterr().err
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
    for f in files:
        (d / f).write_bytes(b"{}" if f.endswith(".json") else b"x")
    return d


def test_a_run_is_its_marker_or_a_config_beside_a_checkpoint_never_a_config_json_alone(tmp_path):
    from lrngpt.core.ownership import is_legacy_run, is_run, lrn_kind

    alone = _dir_with(tmp_path, "alone", "config.json")
    assert not is_run(alone) and not RunDir(alone).holds_run() and lrn_kind(alone) is None
    assert not is_run(_dir_with(tmp_path, "empty")) and not is_run(_dir_with(tmp_path, "ckpt", "ckpt_last.pt"))
    marked = _dir_with(tmp_path, "marked", ".lrn-run")
    assert is_run(marked) and not is_legacy_run(marked) and lrn_kind(marked) == "run"
    for ckpt in ("ckpt_last.pt", "ckpt_init.pt"):  # from before the marker: stopped before its first checkpoint too
        old = _dir_with(tmp_path, f"old-{ckpt}", "config.json", ckpt)
        assert is_run(old) and is_legacy_run(old) and RunDir(old).holds_run() and RunDir(old).is_legacy_run()
        assert lrn_kind(old) == "run"  # so no other kind of output is ever written into it


def test_tokenizer_train_refuses_a_run_from_before_the_marker_and_not_a_lone_config_json(tmp_path):
    from lrngpt.data.prepared import tokenizer_out

    with pytest.raises(UserError, match="holds an lrn run"):
        tokenizer_out(_dir_with(tmp_path, "old", "config.json", "ckpt_init.pt"))
    with pytest.raises(UserError, match="holds an lrn run"):
        tokenizer_out(_dir_with(tmp_path, "marked", ".lrn-run"))
    alone = _dir_with(tmp_path, "alone", "config.json")
    assert tokenizer_out(alone) == alone / "tokenizer.json"


# ---- a forged record: lrn's record names a file only when lrn signed it --------------------------

def _user_file_and_record(tmp_path, record) -> tuple:
    """A file of the user's, and beside it a record naming it with its true sha256 (`record` edits it)."""
    import hashlib
    import json

    user = tmp_path / "user.txt"
    user.write_text("my own notes\n")
    doc = {"format": 3, "kind": None, "files": {"user.txt": hashlib.sha256(user.read_bytes()).hexdigest()},
           "what": {"user.txt": "stories corpus"}, "stat": {}, "earlier": {}, "append": {}}
    (tmp_path / ".lrn-output").write_text(json.dumps(record(doc, tmp_path)))
    return user, user.read_bytes()


def _copied_and_edited(doc, tmp_path):
    """A record lrn really wrote elsewhere (signed), copied here and edited to name the user's file."""
    import json

    from lrngpt.core.ownership import write_owned_file

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_owned_file(elsewhere / "user.txt", "lrn's text", "stories corpus")
    real = json.loads((elsewhere / ".lrn-output").read_text())
    real["files"]["user.txt"] = doc["files"]["user.txt"]
    real["stat"] = {}
    return real


FORGED = {
    "hand-written, unsigned": lambda doc, _: doc,
    "a made-up signature": lambda doc, _: {**doc, "mac": "0" * 64},
    "copied from elsewhere and edited": _copied_and_edited,
    "signed under another user's key": lambda doc, _: {**doc, "mac": _signed_elsewhere(doc)},
}


def _signed_elsewhere(doc) -> str:
    import hashlib
    import hmac
    import json

    from lrngpt.core.record import _SIGNED

    canon = json.dumps({f: doc.get(f) for f in _SIGNED}, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(b"another key" * 3, canon.encode(), hashlib.sha256).hexdigest()


@pytest.mark.parametrize("forged", FORGED)
def test_a_forged_record_never_lets_lrn_replace_a_users_file(forged, tmp_path, capsys):
    from lrngpt.core.ownership import check_file_target

    user, before = _user_file_and_record(tmp_path, FORGED[forged])
    with pytest.raises(UserError, match="not signed by lrn") as e:  # what a report (no --force) checks
        check_file_target(user, False, "stories corpus", replace_own=True)
    assert "\n" not in str(e.value)
    assert main(["-q", "data", "stories", "--size", "2KB", "--out", str(user), "--force"]) == 2
    err = capsys.readouterr().err
    assert "not signed by lrn" in err and "with or without --force" in err and user.read_bytes() == before


def test_a_signed_record_still_lets_lrn_replace_its_own_file_and_the_key_is_private(tmp_path, capsys):
    import stat

    from lrngpt.core.record_key import KEY_NAME, key_dirs

    out = tmp_path / "s.txt"
    assert main(["-q", "data", "stories", "--size", "2KB", "--out", str(out)]) == 0
    assert main(["-q", "data", "stories", "--size", "3KB", "--out", str(out), "--force"]) == 0
    assert len(out.read_bytes()) > 3000
    key = key_dirs()[0] / KEY_NAME
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert len(key.read_bytes()) == 32


def test_a_record_signed_under_another_key_is_read_only_to_lrn(tmp_path, monkeypatch, capsys):
    out = tmp_path / "s.txt"
    assert main(["-q", "data", "stories", "--size", "2KB", "--out", str(out)]) == 0
    before = out.read_bytes()
    monkeypatch.setenv("LRN_STATE_DIR", str(tmp_path / "another-home"))  # a new home, a deleted key
    assert main(["-q", "data", "stories", "--size", "3KB", "--out", str(out), "--force"]) == 2
    assert "not signed by lrn" in capsys.readouterr().err and out.read_bytes() == before


def test_a_run_whose_record_is_unsigned_is_resumed_never_replaced(tiny_config, tmp_path, capsys):
    import json

    run = tmp_path / "run"
    train_run(tiny_config("train.steps=2"), run, progress=False)
    record = json.loads((run / ".lrn-output").read_text())
    del record["mac"]  # as an lrn before records were signed wrote it
    (run / ".lrn-output").write_text(json.dumps(record))
    before = (run / LAST).read_bytes()
    with pytest.raises(UserError, match=r"cannot tell as its own: the record .* was not signed by lrn.*resumes it"):
        RunDir(run).check_new(force=True, resume_hint=True)
    assert (run / LAST).read_bytes() == before
