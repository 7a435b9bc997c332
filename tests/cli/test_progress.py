"""One progress bar per long phase (tokenizer training, encoding per split, evaluation, sweep points),
on a terminal only; log lines never land inside a bar."""

from __future__ import annotations

import re

import pytest

from lrngpt.cli.main import main
from lrngpt.core import log as logging

PHASES = ("tokenizer: reading", "encoding train", "encoding val")


@pytest.fixture
def terminal(monkeypatch):
    """stderr counts as a terminal (bars drawn), as it would for a person at a shell."""
    monkeypatch.setattr(logging, "interactive", lambda: True)


def lines_are_whole(err: str, *messages: str) -> None:
    for message in messages:
        assert re.search(rf"(^|[\r\n]){re.escape(message)}[^\r\n]*\n", err), f"{message!r} broken: {err!r}"


def test_prepare_draws_a_bar_per_phase_on_a_terminal(terminal, capsys, tmp_path, text_corpus):
    assert main(["data", "prepare", "--corpus", text_corpus, "--vocab-size", "300", "--split-seed", "7",
                 "--out", str(tmp_path / "p")]) == 0
    err = capsys.readouterr().err
    for phase in PHASES:
        assert f"{phase}:" in err, err
    lines_are_whole(err, "tokenizer: training a 300-token BPE", "data: encoding the train split",
                    "data: encoding the val split")


def test_no_bars_when_stderr_is_not_a_terminal(capsys, tmp_path, text_corpus):
    assert main(["data", "prepare", "--corpus", text_corpus, "--vocab-size", "300", "--split-seed", "8",
                 "--out", str(tmp_path / "p")]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and not any(f"{phase}:" in err for phase in PHASES)
    assert "data: encoding the train split\n" in err


def test_quiet_shows_neither_bars_nor_log_lines(capsys, tmp_path, text_corpus, monkeypatch):
    monkeypatch.setattr(logging, "on_terminal", lambda: True)  # bars would show, but for -q
    assert main(["-q", "data", "prepare", "--corpus", text_corpus, "--vocab-size", "300", "--split-seed", "9",
                 "--out", str(tmp_path / "p")]) == 0
    assert capsys.readouterr().err == ""
    logging.setup(0)


def test_eval_and_sweep_draw_their_bars(terminal, capsys, tmp_path, text_corpus):
    argv = ["sweep", "embed-dim", "--scale", "tiny", "--axis", "model.n_embd=4", "--set",
            f"data.corpus={text_corpus}", "--set", "data.vocab_size=300", "--set", "train.steps=4",
            "--device", "cpu", "--out", str(tmp_path / "sw")]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "sweep embed-dim:" in err and "point" in err
    lines_are_whole(err, "[embed-dim, tiny scale] train d4-")
    run = next((tmp_path / "sw" / "runs").iterdir())
    assert main(["eval", str(run), "--split", "val"]) == 0
    assert "eval val:" in capsys.readouterr().err
