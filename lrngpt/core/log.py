"""One logger for lrn, the "lrngpt" logger, and progress bars that log lines never break.

The library logs like a library: the logger has a `NullHandler` and propagates, so an
application's own `logging.basicConfig(filename=..., level=logging.INFO)` receives lrn's lines
and an application that configures nothing prints nothing. Every module of lrn logs through
this one (`info`, `warning`, `debug`), never through the root logger. The command line is the
application that installs a handler (`setup`, called by `lrn`): messages then go to stderr
through `tqdm.write`, which clears the bars, prints the line and redraws them, so a log line
never lands in the middle of `33%|███ | 999/3000`. `lrn -q` shows warnings and errors only,
`lrn -v` adds debug lines, each naming the module it comes from (`debug corpora.stat_cache: ...`).

Progress bars (`progress`, from `tqdm.auto`) show on a terminal and in a Jupyter kernel, unless
lrn is quiet; a log file or a job scheduler gets log lines instead. `bars(False)` turns every
bar off for a block (the Python API's `progress=False`), also those of `datasets` and
`huggingface_hub` where lrn calls them (`third_party_bars`). In a notebook without ipywidgets
tqdm falls back to text, where a bar inside a bar cannot move the cursor and would print every
redraw of both: there one bar shows at a time (the outermost) and it redraws at most
`NOTEBOOK_REDRAWS` times, so a cell's output stays small however long it runs.
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


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        return f"debug {_where(record)}: {message}" if record.levelno < logging.INFO else message


class _TqdmHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            tqdm.write(self.format(record), file=sys.stderr)
        except Exception:  # noqa: BLE001 - logging must never raise into the caller
            self.handleError(record)


def setup(verbosity: int = 0) -> None:
    """The command line's handler on stderr: -1 quiet (warnings), 0 normal (info), 1 verbose (debug).

    `lrn` is the application here, so its lines go to stderr only, not also to the root logger, and a
    setting a line names is said as lrn's option (lrngpt.errors.option), not as the API's parameter."""
    global _cli_words
    _cli_words = True
    level = {-1: logging.WARNING, 0: logging.INFO}.get(verbosity, logging.DEBUG)
    logger.setLevel(level)
    if not any(isinstance(h, _TqdmHandler) for h in logger.handlers):
        handler = _TqdmHandler()
        handler.setFormatter(_Formatter())
        logger.addHandler(handler)
    logger.propagate = False


def info(msg: str) -> None:
    logger.info(in_words(msg, cli=_cli_words), stacklevel=2)


def warning(msg: str) -> None:
    logger.warning(in_words(msg, cli=_cli_words), stacklevel=2)


def debug(msg: str) -> None:
    """A line for `lrn -v`: what was decided and why (a cache hit, a device, a file written)."""
    logger.debug(in_words(msg, cli=_cli_words), stacklevel=2)


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
    """Draw progress bars? As the innermost `bars(...)` block says, else on a terminal or in a
    notebook, and not when quiet."""
    if _forced:
        return _forced[-1]
    return (on_terminal() or in_notebook()) and not quiet()


def on_terminal() -> bool:
    """stderr is a terminal (a person at a shell), not a file or a pipe."""
    return sys.stderr.isatty()


@contextlib.contextmanager
def bars(enabled: bool | None) -> Iterator[None]:
    """Every bar in the block shows (True) or not (False), lrn's and, where lrn calls them,
    datasets' and huggingface_hub's; None changes nothing (interactive() decides)."""
    if enabled is None:
        yield
        return
    _forced.append(bool(enabled))
    try:
        yield
    finally:
        _forced.pop()


def honours_progress(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorator: the call's `progress` argument (True or False) holds for every bar under it, the
    tokenizer's and the encoding's included (None: interactive() decides, as without it)."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        with bars(signature.bind_partial(*args, **kwargs).arguments.get("progress")):
            return fn(*args, **kwargs)

    return call


@contextlib.contextmanager
def third_party_bars() -> Iterator[None]:
    """Around a call into datasets or huggingface_hub: their bars off for the call when lrn's are
    (-q, a log file, progress=False), and as they were afterwards. Each library's own switch
    (disable_progress_bars) is used; its environment variable, when the user set one, wins."""
    if interactive():
        yield
        return
    switches = []
    for name, variable in (("huggingface_hub.utils", "HF_HUB_DISABLE_PROGRESS_BARS"),
                           ("datasets.utils", "HF_DATASETS_DISABLE_PROGRESS_BARS")):
        if os.environ.get(variable) is not None:
            continue  # the user's own choice for that library
        with contextlib.suppress(ImportError, AttributeError):
            module = __import__(name, fromlist=["are_progress_bars_disabled"])
            if not module.are_progress_bars_disabled():
                switches.append(module)
    for module in switches:
        module.disable_progress_bars()
    try:
        yield
    finally:
        for module in switches:
            module.enable_progress_bars()


def _bar_class():
    """tqdm.auto's bar: a widget in a notebook with ipywidgets (`_saved_widget_bar`), else the text
    bar (without ipywidgets tqdm warns once and falls back to text, which a notebook shows as well)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # optional: tqdm.auto imports IPython and ipywidgets when a kernel runs, only when a bar shows
        from tqdm.auto import tqdm as auto

    notebook = sys.modules.get("tqdm.notebook")  # imported by tqdm.auto when it chose the widget
    return _saved_widget_bar(auto) if notebook and issubclass(auto, notebook.tqdm) else auto


def _is_widget(bar: type) -> bool:
    notebook = sys.modules.get("tqdm.notebook")
    return notebook is not None and issubclass(bar, notebook.tqdm)


@functools.cache
def _saved_widget_bar(widget_bar: type) -> type:
    """tqdm's notebook widget, whose output ends as the bar's final text.

    A notebook stores a widget's output with the text its widget had when first shown, and every
    reader without the kernel's widget state (a code host, nbviewer, a notebook reopened later)
    sees that text: each bar frozen at "0%". This bar is shown under a display id, and when it
    closes its output is replaced by its last line ("100%|██████████| 300/300 [00:04, 70.1 step/s]"),
    in the live notebook and in the saved file alike, whether or not it was to `leave`."""
    # optional: IPython.display, reached only inside a kernel that has ipywidgets
    from IPython.display import display

    class SavedWidgetBar(widget_bar):
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

    return SavedWidgetBar


def _text_bar_open() -> bool:
    return any(not getattr(b, "disable", True) for b in list(tqdm._instances))


def progress(total: int | None = None, desc: str = "", unit: str = "it", initial: int = 0,
             enabled: bool | None = None, leave: bool = False, **kwargs) -> tqdm:
    """A tqdm.auto bar on stderr, shown only where `interactive()` (or as `enabled` says); it clears
    itself when done unless `leave`. In a notebook's text fallback, only when no other bar shows,
    and with its redraws bounded (NOTEBOOK_REDRAWS, NOTEBOOK_INTERVAL_S)."""
    show = interactive() if enabled is None else enabled
    bar = _bar_class() if show else tqdm  # a hidden bar needs no widget
    if show and not _is_widget(bar) and in_notebook():
        if _text_bar_open():
            show, bar = False, tqdm  # one text bar at a time: the outer one (a sweep's points) says it
        else:
            kwargs.setdefault("mininterval", NOTEBOOK_INTERVAL_S)
            if total:
                kwargs.setdefault("miniters", max(1, math.ceil((total - initial) / NOTEBOOK_REDRAWS)))
    return bar(total=total, desc=desc, unit=unit, initial=initial, disable=not show, file=sys.stderr,
               dynamic_ncols=True, leave=leave, **kwargs)
