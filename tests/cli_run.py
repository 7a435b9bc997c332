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


# Waiting on a child process: on the event itself, never on a number of seconds (a loaded machine only
# waits longer). HUNG only ends a test whose child is stuck for good; a slow but working machine never reaches it.
HUNG = 600.0


def _output(proc) -> str:
    """What an ended child wrote to its pipes (none: nothing to show)."""
    out, err = proc.communicate()
    return "".join(x[-4000:] if isinstance(x, str) else x[-4000:].decode(errors="replace") for x in (out, err) if x)


def wait_for(ready, proc, what: str = "the event") -> None:
    """Poll `ready()` until it is true, for as long as `proc` (a subprocess.Popen) lives: no time limit. If the
    child ends first (asked once more then), or it is stuck for HUNG seconds, the test fails with its output."""
    import time

    t0 = time.monotonic()
    while not ready():
        if proc.poll() is not None:
            if ready():
                return
            raise AssertionError(f"process {proc.pid} ended (exit {proc.returncode}) before {what}:\n{_output(proc)}")
        if time.monotonic() - t0 > HUNG:
            proc.kill()
            raise AssertionError(f"process {proc.pid} hung: no {what} in {HUNG:.0f} s:\n{_output(proc)}")
        time.sleep(0.01)


def read_until(proc, *markers: str, stream: str = "stderr") -> list[str]:
    """Read the child's lines (blocking, no time limit) until one holding each marker in turn has come; return
    every line read. The child ending first fails the test with its lines; one stuck for HUNG seconds is killed."""
    import threading

    pipe = getattr(proc, stream)
    guard = threading.Timer(HUNG, proc.kill)
    guard.daemon = True
    guard.start()
    lines: list[str] = []
    try:
        for marker in markers:
            while True:
                line = pipe.readline()
                if not line:
                    proc.wait()
                    raise AssertionError(f"process {proc.pid} ended (exit {proc.returncode}) before a line holding "
                                         f"{marker!r}:\n{''.join(lines[-30:])}")
                lines.append(line)
                if marker in line:
                    break
    finally:
        guard.cancel()
    return lines


def sigterm_after(argv: list[str], env: dict, marker) -> tuple[int, list[str]]:
    """Run `python -m lrngpt ARGV`, send SIGTERM the moment a stderr line holds `marker` (a tuple: each of its
    markers in turn), and return (exit code, every stderr line)."""
    import signal
    import subprocess
    import sys
    import threading

    child = subprocess.Popen([sys.executable, "-m", "lrngpt", *argv], stderr=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, text=True, env=env)
    guard = threading.Timer(HUNG, child.kill)  # (only a child stuck for good)
    guard.daemon = True
    guard.start()
    try:
        lines = read_until(child, *((marker,) if isinstance(marker, str) else marker))
        child.send_signal(signal.SIGTERM)
        lines += child.stderr.readlines()  # to its end: the child exits on the signal
        code = child.wait()
    finally:
        guard.cancel()
        child.kill()
        child.wait()
    return code, lines


# A gate, for a child process that a test kills at one moment: install(AT, WHEN, AFTER, HELD) wraps the
# function AT ("module:Owner.function") so that when WHEN(*args) holds (before the call, or after it with
# AFTER), the child creates HELD and waits there for the test's SIGKILL: the kill lands at that moment
# however fast or slowly the machine runs.
GATE = r"""
import importlib, threading

def install(at, when, after, held):
    module, _, path = at.partition(":")
    owner = importlib.import_module(module)
    *outer, name = path.split(".")
    for part in outer:
        owner = getattr(owner, part)
    function = getattr(owner, name)

    def hold():
        open(held, "w").close()
        threading.Event().wait()  # until the SIGKILL

    def gated(*args, **kwargs):
        if not after and when(*args, **kwargs):
            hold()
        out = function(*args, **kwargs)
        if after and when(*args, **kwargs):
            hold()
        return out
    setattr(owner, name, gated)
"""
GATED_LRN = GATE + r"""
import sys
install(sys.argv[1], eval(sys.argv[2]), sys.argv[3] == "after", sys.argv[4])
from lrngpt.cli.main import main
sys.exit(main(sys.argv[5:]))
"""


def held_at(argv: list[str], at: str, when: str, held, after: bool = False, **popen):
    """`lrn ARGV` started in a child (a subprocess.Popen) that holds at AT once WHEN holds (see GATED_LRN);
    the caller waits for `held` (a path) to exist, then kills it."""
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-c", GATED_LRN, at, when, "after" if after else "before", str(held),
                             *map(str, argv)], **popen)
