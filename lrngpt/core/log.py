"""One logger for lrn, the "lrngpt" logger, and progress bars that log lines never break.

The library logs like a library: the logger has a `NullHandler` and propagates, so an
application's own `logging.basicConfig(filename=..., level=logging.INFO)` receives lrn's lines
and an application that configures nothing prints nothing. The command line is the application
that installs a handler (`setup`, called by `lrn`): messages then go to stderr through
`tqdm.write`, which clears the bars, prints the line and redraws them, so a log line never lands
in the middle of `33%|███ | 999/3000`. `lrn -q` shows warnings and errors only, `lrn -v` adds
debug lines. Progress bars (`progress`, from `tqdm.auto`) show on a terminal and in a Jupyter
kernel, unless lrn is quiet; a log file or a job scheduler gets log lines instead.
"""

from __future__ import annotations

import logging
import sys

from tqdm import tqdm

logger = logging.getLogger("lrngpt")
logger.addHandler(logging.NullHandler())  # a library's logger: what to show is the application's choice


class _TqdmHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            tqdm.write(self.format(record), file=sys.stderr)
        except Exception:  # noqa: BLE001 - logging must never raise into the caller
            self.handleError(record)


def setup(verbosity: int = 0) -> None:
    """The command line's handler on stderr: -1 quiet (warnings), 0 normal (info), 1 verbose (debug).

    `lrn` is the application here, so its lines go to stderr only, not also to the root logger."""
    level = {-1: logging.WARNING, 0: logging.INFO}.get(verbosity, logging.DEBUG)
    logger.setLevel(level)
    if not any(isinstance(h, _TqdmHandler) for h in logger.handlers):
        handler = _TqdmHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
    logger.propagate = False


def info(msg: str) -> None:
    logger.info(msg)


def warning(msg: str) -> None:
    logger.warning(msg)


def debug(msg: str) -> None:
    logger.debug(msg)


def in_notebook() -> bool:
    """Inside a Jupyter kernel (Jupyter, VS Code, Colab), where stderr is no terminal but a person watches."""
    ipython = sys.modules.get("IPython")
    if ipython is None or "ipykernel" not in sys.modules:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # noqa: BLE001 - an odd IPython: no notebook
        return False
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def quiet() -> bool:
    """`lrn -q`, or an application that set the "lrngpt" logger's own level above INFO."""
    return logger.level > logging.INFO


def interactive() -> bool:
    """Draw progress bars? On a terminal or in a notebook, and not when quiet."""
    return (sys.stderr.isatty() or in_notebook()) and not quiet()


def _bar_class():
    """tqdm.auto's bar: a widget in a notebook with ipywidgets, else the text bar (without
    ipywidgets tqdm warns once and falls back to text, which a notebook shows as well)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from tqdm.auto import tqdm as auto

    return auto


def progress(total: int | None = None, desc: str = "", unit: str = "it", initial: int = 0,
             enabled: bool | None = None, leave: bool = False, **kwargs) -> tqdm:
    """A tqdm.auto bar on stderr, shown only where `interactive()` (or as `enabled` says); it clears
    itself when done unless `leave`."""
    show = interactive() if enabled is None else enabled
    bar = _bar_class() if show else tqdm  # a hidden bar needs no widget
    return bar(total=total, desc=desc, unit=unit, initial=initial, disable=not show, file=sys.stderr,
               dynamic_ncols=True, leave=leave, **kwargs)
