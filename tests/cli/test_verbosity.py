"""-v, -q and progress=False, as a user sees them: `lrn -v` prints debug lines from every layer, each
naming its module, and plain `lrn` none; `-q` silences every bar, datasets' too; the Python API's
`progress=False` also silences the tokenizer's and the encoding's bars; in a notebook's text
fallback one bar shows at a time and redraws a bounded number of times. Every module logs through
lrngpt.core.log (the "lrngpt" logger), never the root logger."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

import lrngpt
from lrngpt.cli.main import main
from lrngpt.core import log as logging

PACKAGE = Path(lrngpt.__file__).parent
BAR = re.compile(r"\d+%\|")  # tqdm's "33%|███" (a bar with a total)


@pytest.fixture
def tty(monkeypatch):
    """stderr is a terminal, as for a person at a shell: bars are drawn unless told not to."""
    monkeypatch.setattr(logging, "on_terminal", lambda: True)


@pytest.fixture(autouse=True)
def _normal_verbosity():
    yield
    logging.setup(0)  # the next test starts from plain `lrn`


def train_argv(text_corpus, out, seed) -> list[str]:
    # a split_seed of its own: the tokenizer and token arrays are made afresh, so their bars and lines happen
    return ["train", "--config", "mlp-tiny", "--set", f"data.corpus={text_corpus}", "--set", "data.vocab_size=300",
            "--set", f"data.split_seed={seed}", "--set", "train.steps=2", "--set", "train.device=cpu",
            "--out", str(out)]


def test_verbose_shows_debug_lines_from_every_layer_and_plain_shows_none(text_corpus, tmp_path, capsys):
    assert main(["-v", *train_argv(text_corpus, tmp_path / "v", 101)]) == 0
    err = capsys.readouterr().err
    debug = [line for line in err.splitlines() if line.startswith("debug ")]
    where = {line.split()[1].rstrip(":").split(".")[0] for line in debug}
    # files, config, corpus, tokenizer, model, device, data, checkpoint, training loop, evaluation
    assert {"core", "runconfig", "corpora", "tokenizer", "models", "device", "data", "store", "training",
            "inference"} <= where, where
    assert any(re.match(r"debug corpora\.stat_cache: text fingerprint of 1 file\(s\): ", line) for line in debug)
    assert any(re.match(r"debug store\.checkpoint: checkpoint: step 2 saved to .*ckpt_last\.pt", line) for line in debug)
    assert "step 2/2" in err  # the info lines are still there
    assert main(train_argv(text_corpus, tmp_path / "plain", 102)) == 0
    err = capsys.readouterr().err
    assert "step 2/2" in err and "debug" not in err


def test_every_module_logs_through_the_lrngpt_logger():
    """No module but core/log.py uses the logging module (its root logger is not lrn's), and none
    below cli/ writes to stderr itself."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "core/log.py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.match(r"\s*(import logging\b|from logging\b)", line) or \
                    (not rel.startswith("cli/") and "sys.stderr" in line):
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert offenders == []


def test_quiet_silences_datasets_bars_too(tmp_path, capsys, tty, monkeypatch):
    datasets = pytest.importorskip("datasets")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    for name in ("loud", "quiet"):  # two directories: datasets converts each one (its bar), then caches it
        (tmp_path / name).mkdir()
        (tmp_path / name / "train.jsonl").write_text("".join(f'{{"text": "story {i} of {name}"}}\n'
                                                             for i in range(40)))
    argv = ["data", "prepare", "--vocab-size", "260", "--split-seed", "3"]
    assert main([*argv, "--corpus", f"hf:{tmp_path / 'loud'}", "--out", str(tmp_path / "p1")]) == 0
    err = capsys.readouterr().err
    assert "Generating train split" in err  # datasets' bar, on a terminal
    assert main(["-q", *argv, "--corpus", f"hf:{tmp_path / 'quiet'}", "--out", str(tmp_path / "p2")]) == 0
    assert capsys.readouterr().err == ""
    assert not datasets.utils.are_progress_bars_disabled()  # switched back on after the call


def test_api_progress_false_silences_the_tokenizer_and_encoding_bars(tiny_config, tmp_path, capsys, tty):
    lrngpt.train(tiny_config("train.steps=2", "data.split_seed=201"), out=tmp_path / "shown")
    err = capsys.readouterr().err
    assert "tokenizer: reading:" in err and "encoding train:" in err and BAR.search(err)  # the control
    lrngpt.train(tiny_config("train.steps=2", "data.split_seed=202"), out=tmp_path / "silent", progress=False)
    err = capsys.readouterr().err
    assert "tokenizer: reading:" not in err and "encoding train:" not in err and not BAR.search(err), err


def test_in_a_notebook_without_widgets_one_bar_shows_and_redraws_a_bounded_number_of_times(monkeypatch):
    from tqdm import tqdm

    monkeypatch.setattr(logging, "in_notebook", lambda: True)
    monkeypatch.setattr(logging, "_bar_class", lambda: (tqdm, False))  # tqdm.auto without ipywidgets: the text bar
    monkeypatch.setattr(logging, "NOTEBOOK_INTERVAL_S", 0)  # only the count bounds the redraws here
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    with logging.progress(total=3, desc="sweep") as outer:
        for _ in range(3):
            with logging.progress(total=5000, desc="train", unit="step") as inner:
                assert inner.disable and not outer.disable  # the inner bar would spell cursor moves
                inner.update(5000)
            outer.update()
    assert "train" not in stream.getvalue() and "sweep: 100%" in stream.getvalue()
    stream.truncate(0)
    with logging.progress(total=100_000, desc="alone", unit="step") as bar:
        for _ in range(100_000):
            bar.update()
    redraws = stream.getvalue().count("\r")
    assert 2 <= redraws <= logging.NOTEBOOK_REDRAWS + 3, redraws
