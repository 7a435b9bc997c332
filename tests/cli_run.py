"""Running `lrn` in-process in a test: exit code, stdout and stderr, argparse's refusals included."""

from __future__ import annotations

import contextlib
import io
import json

from lrngpt.cli.main import main


def lrn(capsys, *argv) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in argv])
    except SystemExit as e:  # argparse refuses a value before a handler runs
        code = e.code
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def lrn_json(capsys, *argv) -> dict:
    """`lrn ARGV --json`, which must succeed: the JSON it printed."""
    code, out, err = lrn(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def run_cli(*argv: str) -> tuple[int, str, str]:
    """`lrn ARGV` in-process with stdout and stderr captured here (for module fixtures, which have no capsys)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def sigterm_after(argv: list[str], env: dict, marker: str, delay: float) -> tuple[int, list[str]]:
    """Run `python -m lrngpt ARGV`, send SIGTERM `delay` seconds after a stderr line holding `marker`,
    and return (exit code, every stderr line). A run that hangs is killed after 120 s."""
    import signal
    import subprocess
    import sys
    import threading
    import time

    child = subprocess.Popen([sys.executable, "-m", "lrngpt", *argv], stderr=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=env)
    guard = threading.Timer(120, child.kill)
    guard.start()
    lines: list[str] = []
    try:
        for line in child.stderr:
            lines.append(line)
            if marker in line:
                time.sleep(delay)
                child.send_signal(signal.SIGTERM)
                break
        lines += child.stderr.readlines()
        code = child.wait(timeout=60)
    finally:
        guard.cancel()
        child.kill()
        child.wait()
    return code, lines
