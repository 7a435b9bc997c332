"""Running `lrn` in-process in a test: exit code, stdout and stderr, argparse's refusals included."""

from __future__ import annotations

from lrngpt.cli.main import main


def lrn(capsys, *argv) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in argv])
    except SystemExit as e:  # argparse refuses a value before a handler runs
        code = e.code
    cap = capsys.readouterr()
    return code, cap.out, cap.err
