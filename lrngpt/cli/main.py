"""Entry point of `lrn`: builds the parser from the command groups and maps errors to exit codes.

Exit codes: 0 success, 2 bad input (one line saying what and how to fix it; also too big a request for
the memory, and what the machine refuses that the user can change: a permission, a read-only mount,
the file-size limit, no temporary directory), 1 a full disk or an unexpected failure (LRN_DEBUG=1 shows
the traceback), 130 interrupted (Ctrl-C or SIGTERM; temporary files removed).
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys

from lrngpt.api import __version__
from lrngpt.api.frontend import DiskFull, os_error_exit, setup_logging
from lrngpt.cli.common import Parser, parsers
from lrngpt.errors import UserError

# Command groups in pipeline order; each module cli/cmd_NAME.py has register(subparsers), which adds the
# commands of its API module (cmd_data: lrn data and lrn tokenizer, lrngpt.api.corpus).
GROUPS = [
    "demo", "data", "config", "runs", "sweep", "chapter",
    "embed", "theory", "lesson", "outputs", "doctor", "completion",
]


def build_parser() -> Parser:
    parser = Parser(
        prog="lrn",
        description="lrn-gpt, a laboratory for small language models: train a byte-level BPE, the book "
                    "chapter's MLP language model or a GPT, measure bits per byte, sample, dissect the learned "
                    "embedding table and run the embedding-width study. Results go to stdout (--json for one "
                    "JSON document), progress and logs to stderr; bad input exits 2 with one line saying how "
                    "to fix it.",
        epilog="examples:\n"
               "  lrn demo                                   # the whole pipeline: about 4 min on a quiet 2-core machine\n"
               "  lrn config list                            # the named configs; lrn config show NAME explains one\n"
               "  lrn train --config mlp-cpu --out runs/mlp64\n"
               "  lrn sweep embed-dim --scale cpu --out runs/embed-dim\n"
               "every command has --help with examples, e.g. lrn train --help")
    parser.add_argument("--version", action="version", version=f"lrn {__version__}",
                        help="print lrn's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=Parser)
    for name in GROUPS:
        importlib.import_module(f"lrngpt.cli.cmd_{name}").register(sub)
    _common_options(parser)
    return parser


def _common_options(root: Parser) -> None:
    """--json last on every command that prints a result; -q / -v before the command and after it (`lrn -q
    train`, `lrn train -q`), set only when given (SUPPRESS), so that a command's parse keeps lrn's."""
    for parser in parsers(root):
        if parser.takes_json:
            parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        parser.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                            help="only warnings and errors on stderr: no progress bars, no log lines")
        parser.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                            help="also print debug lines on stderr")


def _terminate(signum, _frame):
    # SIGTERM (a scheduler, `kill`) unwinds like Ctrl-C, so every `finally` removes its temp files
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    setup_logging(-1 if "quiet" in args else 1 if "verbose" in args else 0)
    if hasattr(sys.stdout, "reconfigure"):  # a path that is not UTF-8 (byte 0xff) is printed as \udcff, as on
        sys.stdout.reconfigure(errors="backslashreplace")  # stderr, not an error after the work is done
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminate)
    if hasattr(signal, "SIGXFSZ"):  # past `ulimit -f` a write fails with EFBIG (reported), never kills us
        # (Python ignores it at start already; a caller that embeds us may not)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        args.func(args)
    except KeyboardInterrupt:
        print(f"lrn {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `lrn ... | head`: the reader went away; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except Exception as e:
        mapped = _failure(e)
        if mapped is None and os.environ.get("LRN_DEBUG"):
            raise
        code, line = (mapped[0], f"error: {mapped[1]}") if mapped else (
            1, f"unexpected error: {type(e).__name__}: {_first_line(e)} (set LRN_DEBUG=1 for the traceback)")
        print(f"lrn {args.command}: {line}", file=sys.stderr)
        return code
    return 0


def _failure(e: Exception) -> tuple[int, str] | None:
    """The exit code and line of a failure lrn can name: bad input, a full disk, what the machine refused
    (an OSError it did not cause), too little memory for what was asked; None for one of ours."""
    if isinstance(e, UserError):
        return 2, e.words(cli=True)
    if isinstance(e, DiskFull):
        return 1, str(e.strerror)
    if isinstance(e, FileNotFoundError) and "No usable temporary directory" in str(e):
        # tempfile found no writable place: torch and others need one as they start
        where = os.environ.get("TMPDIR")
        now = f"TMPDIR is {where!r}; " if where else ""
        return 2, (f"no usable temporary directory ({now}/tmp, /var/tmp and the current directory are not "
                   "writable either); set TMPDIR to a writable directory, e.g. TMPDIR=$HOME/tmp")
    if isinstance(e, OSError):
        return os_error_exit(e)
    # MemoryError (Python, numpy), torch.OutOfMemoryError (a GPU), torch's CPU allocator's RuntimeError,
    # matched by name and text so that this module need not import torch
    if (isinstance(e, MemoryError) or type(e).__name__ == "OutOfMemoryError"
            or (isinstance(e, RuntimeError) and "can't allocate memory" in str(e))):
        return 2, (f"out of memory ({_first_line(e)[:100]}); ask for less: a smaller batch, model, length "
                   "or vocabulary")
    return None


def _first_line(e: Exception) -> str:
    lines = str(e).strip().splitlines()
    return lines[0] if lines else ""


if __name__ == "__main__":
    sys.exit(main())
