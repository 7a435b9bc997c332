"""Stopping a run between steps: Ctrl-C (SIGINT) or SIGTERM sets a flag, and the training loop saves
its checkpoint and stops at the end of the step it is in."""

from __future__ import annotations

import signal


class StopFlag:
    """The flag `signals` set (a sweep's worker hears SIGTERM alone: its parent hears Ctrl-C and
    stops the workers with SIGTERM)."""

    signals: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM)

    def __init__(self):
        self.signal = None

    def __enter__(self):
        self._old = {s: signal.signal(s, self._handle) for s in self.signals}
        return self

    def _handle(self, signum, frame):
        if self.signal is not None:  # a second Ctrl-C: stop now
            raise KeyboardInterrupt
        self.signal = signum

    def __exit__(self, *exc):
        for s, old in self._old.items():
            signal.signal(s, old)
