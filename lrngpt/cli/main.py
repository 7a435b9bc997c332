"""Entry point of `lrn`: builds the parser from the command groups and maps errors to exit codes.

Exit codes: 0 success, 2 bad input (one line on stderr saying what and how to fix it; a
request too big for the memory there is counts), 1 a full disk or an unexpected failure
(LRN_DEBUG=1 shows the traceback), 130 interrupted (Ctrl-C or SIGTERM; temporary files removed).
"""

from __future__ import annotations

import importlib
import os
import signal
import sys

from lrngpt import __version__
from lrngpt.cli.common import Parser
from lrngpt.errors import UserError

# Command groups in pipeline order; each module has register(subparsers).
GROUPS = [
    "demo", "data", "tokenizer", "train", "evaluate", "sample", "sweep",
    "embed", "theory", "cost", "lesson", "report", "import_gpt2", "export",
]


def build_parser() -> Parser:
    parser = Parser(prog="lrn", description="lrn-gpt: a laboratory for small language models",
                    epilog="Start with `lrn demo`; every command has --help with examples.")
    parser.add_argument("--version", action="version", version=f"lrn {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors on stderr")
    parser.add_argument("-v", "--verbose", action="store_true", help="also debug lines on stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name in GROUPS:
        importlib.import_module(f"lrngpt.cli.{name}").register(sub)
    return parser


def _terminate(signum, frame):
    # SIGTERM (a scheduler, `kill`) unwinds like Ctrl-C, so every `finally` removes its temp files
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    from lrngpt import log
    from lrngpt.fsio import DiskFull

    parser = build_parser()
    args = parser.parse_args(argv)
    log.setup(-1 if args.quiet else 1 if args.verbose else 0)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminate)
    try:
        args.func(args)
    except UserError as e:
        print(f"lrn {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"lrn {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `lrn ... | head`: the reader went away; not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except DiskFull as e:
        print(f"lrn {args.command}: error: {e.strerror}", file=sys.stderr)
        return 1
    except Exception as e:
        if _out_of_memory(e):  # what the user asked for does not fit: too big a batch, model or length
            print(f"lrn {args.command}: error: out of memory ({_first_line(e)[:100]}); ask for less: a smaller "
                  "batch, model, length or vocabulary", file=sys.stderr)
            return 2
        if os.environ.get("LRN_DEBUG"):
            raise
        print(f"lrn {args.command}: unexpected error: {type(e).__name__}: {_first_line(e)} "
              "(set LRN_DEBUG=1 for the traceback)", file=sys.stderr)
        return 1
    return 0


def _out_of_memory(e: Exception) -> bool:
    # MemoryError (Python, numpy), torch.OutOfMemoryError (a GPU), torch's CPU allocator's RuntimeError;
    # matched by name and text so that this module need not import torch
    return (isinstance(e, MemoryError) or type(e).__name__ == "OutOfMemoryError"
            or (isinstance(e, RuntimeError) and "can't allocate memory" in str(e)))


def _first_line(e: Exception) -> str:
    lines = str(e).strip().splitlines()
    return lines[0] if lines else ""


if __name__ == "__main__":
    sys.exit(main())
