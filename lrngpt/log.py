"""One logger for lrn, on stderr, that never breaks a progress bar.

Messages go through `tqdm.write`, which clears the bars, prints the line and redraws them,
so a log line never lands in the middle of `33%|███ | 999/3000`. `lrn -q` shows warnings
and errors only, `lrn -v` adds debug lines. Progress bars (`progress`) show only when stderr
is a terminal and lrn is not quiet: a log file or a job scheduler gets log lines instead.
"""

from __future__ import annotations

import logging
import sys

from tqdm import tqdm

logger = logging.getLogger("lrngpt")


class _TqdmHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            tqdm.write(self.format(record), file=sys.stderr)
        except Exception:  # noqa: BLE001 - logging must never raise into the caller
            self.handleError(record)


def setup(verbosity: int = 0) -> None:
    """-1 quiet (warnings), 0 normal (info), 1 verbose (debug)."""
    level = {-1: logging.WARNING, 0: logging.INFO}.get(verbosity, logging.DEBUG)
    logger.setLevel(level)
    if not any(isinstance(h, _TqdmHandler) for h in logger.handlers):
        handler = _TqdmHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
    logger.propagate = False


def info(msg: str) -> None:
    if not logger.handlers:
        setup()
    logger.info(msg)


def warning(msg: str) -> None:
    if not logger.handlers:
        setup()
    logger.warning(msg)


def debug(msg: str) -> None:
    logger.debug(msg)


def interactive() -> bool:
    """Draw progress bars? Only on a terminal, and not when quiet."""
    return sys.stderr.isatty() and logger.getEffectiveLevel() <= logging.INFO


def progress(total: int | None = None, desc: str = "", unit: str = "it", initial: int = 0,
             enabled: bool | None = None, leave: bool = False, **kwargs) -> tqdm:
    """A tqdm bar on stderr, shown only where `interactive()` (or as `enabled` says); it clears
    itself when done unless `leave`."""
    show = interactive() if enabled is None else enabled
    return tqdm(total=total, desc=desc, unit=unit, initial=initial, disable=not show, file=sys.stderr,
                dynamic_ncols=True, leave=leave, **kwargs)
