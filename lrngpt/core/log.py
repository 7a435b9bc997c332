"""One logger for lrn, the "lrngpt" logger, and progress bars that log lines never break.

A library's logger: a NullHandler, propagating, so the application decides what shows. `lrn` is the
application that installs a handler (`setup`): lines go to stderr through `tqdm.write`, so none lands
inside a bar; -q shows warnings only, -v debug lines naming their module. Bars show on a terminal or in
a notebook unless quiet; `bars(False)` turns them all off for a block (the API's `progress=False`). In a
notebook's text fallback one bar shows at a time, redrawn at most NOTEBOOK_REDRAWS times.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import math
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ParamSpec, TypeVar

from tqdm import tqdm

from lrngpt.errors import in_words

logger = logging.getLogger("lrngpt")
logger.addHandler(logging.NullHandler())  # a library's logger: what to show is the application's choice

PACKAGE = Path(__file__).resolve().parents[1]  # lrngpt/, to name a debug line's module
NOTEBOOK_REDRAWS = 40  # a text bar in a notebook redraws at most this often over its total
NOTEBOOK_INTERVAL_S = 2.0  # ... and never more than once in this many seconds
_cli_words = False  # a setting in a line said as `lrn`'s option (setup(): lrn is the application)
_forced: list[bool] = []  # the bars(...) blocks we are in, innermost last
P = ParamSpec("P")
R = TypeVar("R")


def _where(record: logging.LogRecord) -> str:
    """'corpora.stat_cache' for a record logged from lrngpt/corpora/stat_cache.py."""
    try:
        parts = Path(record.pathname).resolve().relative_to(PACKAGE).with_suffix("").parts
    except ValueError:
        return record.module
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)


def _in_words(record: logging.LogRecord) -> bool:
    """The logger's filter: each line's settings said as lrn's options (after setup) or the API's parameters."""
    record.msg, record.args = in_words(record.getMessage(), cli=_cli_words), ()
    return True


logger.addFilter(_in_words)


class _TqdmHandler(logging.Handler):
    """Lines to stderr through tqdm.write, so none lands inside a bar; a debug line names its module."""
    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
            tqdm.write(f"debug {_where(record)}: {message}" if record.levelno < logging.INFO else message,
                       file=sys.stderr)
        except Exception:  # noqa: BLE001 - logging must never raise into the caller
            self.handleError(record)


def setup(verbosity: int = 0) -> None:
    """The command line's handler on stderr: -1 quiet (warnings), 0 normal (info), 1 verbose (debug);
    lines go to stderr only and name settings as lrn's options."""
    global _cli_words
    _cli_words = True
    level = {-1: logging.WARNING, 0: logging.INFO}.get(verbosity, logging.DEBUG)
    logger.setLevel(level)
    if not any(isinstance(h, _TqdmHandler) for h in logger.handlers):
        logger.addHandler(_TqdmHandler())
    logger.propagate = False


info, warning, debug = logger.info, logger.warning, logger.debug  # (the filter says their settings)


@functools.cache  # (each message once in this process)
def warning_once(msg: str) -> None:
    """A warning given once per process: a command may read a file, or a sweep meet a device, again."""
    logger.warning(msg, stacklevel=2)


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
    """Draw progress bars? As the innermost `bars(...)` says, else on a terminal or notebook, not quiet."""
    if _forced:
        return _forced[-1]
    return (on_terminal() or in_notebook()) and not quiet()


def on_terminal() -> bool:
    """stderr is a terminal (a person at a shell), not a file or a pipe."""
    return sys.stderr.isatty()


@contextlib.contextmanager
def bars(enabled: bool | None) -> Iterator[None]:
    """Every bar in the block shows (True) or not (False); None changes nothing."""
    if enabled is None:
        yield
        return
    _forced.append(bool(enabled))
    try:
        yield
    finally:
        _forced.pop()


def honours_progress(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorator: the call's `progress` argument holds for every bar under it (None: interactive())."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        with bars(signature.bind_partial(*args, **kwargs).arguments.get("progress")):
            return fn(*args, **kwargs)

    return call


@contextlib.contextmanager
def third_party_bars() -> Iterator[None]:
    """Around a call into datasets or huggingface_hub: their bars off for the call when lrn's are; the
    user's own environment variable for a library wins."""
    if interactive():
        yield
        return
    switches = []  # the libraries whose bars this turned off, to turn on again
    for name, variable in (("huggingface_hub.utils", "HF_HUB_DISABLE_PROGRESS_BARS"),
                           ("datasets.utils", "HF_DATASETS_DISABLE_PROGRESS_BARS")):
        if os.environ.get(variable) is not None:
            continue  # the user's own choice for that library
        with contextlib.suppress(ImportError, AttributeError):
            module = __import__(name, fromlist=["are_progress_bars_disabled"])
            if not module.are_progress_bars_disabled():
                module.disable_progress_bars()
                switches.append(module)
    try:
        yield
    finally:
        for module in switches:
            module.enable_progress_bars()


@functools.cache  # (a process stays in, or out of, its kernel)
def _bar_class() -> tuple[type, bool]:
    """tqdm.auto's bar and whether it is a widget. In a notebook with ipywidgets, tqdm's widget whose
    saved output ends as the bar's final text, not frozen at "0%" for a reader without the kernel's
    widget state (nbviewer, a notebook reopened later); else the text bar."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # optional: tqdm.auto imports IPython and ipywidgets when a kernel runs, only when a bar shows
        from tqdm.auto import tqdm as auto

    notebook = sys.modules.get("tqdm.notebook")  # imported by tqdm.auto when it chose the widget
    if notebook is None or not issubclass(auto, notebook.tqdm):
        return auto, False
    # optional: IPython.display, reached only inside a kernel that has ipywidgets
    from IPython.display import display

    class SavedWidgetBar(auto):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **{**kwargs, "display": False})
            self._output = None if self.disable else display(self.container, display_id=True)
            self.displayed = True  # shown here, so tqdm's delayed display never shows it twice

        def close(self):
            was_open = not self.disable and self._output is not None
            super().close()
            if was_open:
                self._output.update({"text/plain": str(self)}, raw=True)
                self._output = None

    return SavedWidgetBar, True


def progress(total: int | None = None, desc: str = "", unit: str = "it", initial: int = 0,
             enabled: bool | None = None, leave: bool = False, **kwargs) -> tqdm:
    """A tqdm.auto bar on stderr, shown where `interactive()` (or as `enabled` says), cleared when done
    unless `leave`; in a notebook's text fallback only when no other bar shows, its redraws bounded."""
    show = interactive() if enabled is None else enabled
    bar, widget = _bar_class() if show else (tqdm, False)  # a hidden bar needs no widget
    if show and not widget and in_notebook():
        if any(not getattr(b, "disable", True) for b in list(tqdm._instances)):  # a text bar shows
            show, bar = False, tqdm  # one text bar at a time: the outer one (a sweep's points) says it
        else:
            kwargs.setdefault("mininterval", NOTEBOOK_INTERVAL_S)
            if total:
                kwargs.setdefault("miniters", max(1, math.ceil((total - initial) / NOTEBOOK_REDRAWS)))
    return bar(total=total, desc=desc, unit=unit, initial=initial, disable=not show, file=sys.stderr,
               dynamic_ncols=True, leave=leave, **kwargs)
