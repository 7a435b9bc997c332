"""`python -m lrngpt` is the `lrn` command line (what `torchrun -m lrngpt` launches; the slow
multi-node test in test_distributed.py runs it in subprocesses)."""

from __future__ import annotations

import json
import runpy
import sys

import pytest


def run_module(monkeypatch, *argv: str) -> int:
    monkeypatch.setattr(sys, "argv", ["lrngpt", *argv])
    with pytest.raises(SystemExit) as e:
        runpy.run_module("lrngpt", run_name="__main__")
    return e.value.code


def test_python_m_lrngpt_runs_the_cli_with_its_exit_codes(monkeypatch, capsys):
    assert run_module(monkeypatch, "theory", "fourth-root", "--n", "4096", "--json") == 0
    assert json.loads(capsys.readouterr().out) == {"d": 8.0}
    assert run_module(monkeypatch, "train", "--config", "no-such-preset") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown preset 'no-such-preset'" in err
