"""Entry point of `lrn`: builds the parser from the command groups and maps errors to exit codes."""

from __future__ import annotations

import importlib
import os
import sys

from lrngpt.cli.common import Parser
from lrngpt.errors import UserError

# Command groups in pipeline order; each module has register(subparsers).
GROUPS = [
    "demo", "data", "tokenizer", "train", "evaluate", "sample", "sweep",
    "embed", "theory", "cost", "lesson", "report", "import_gpt2", "export",
]


def build_parser() -> Parser:
    parser = Parser(prog="lrn", description="lrn-gpt: a laboratory for small language models")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name in GROUPS:
        try:
            module = importlib.import_module(f"lrngpt.cli.{name}")
        except ModuleNotFoundError as e:  # a group not built yet
            if e.name == f"lrngpt.cli.{name}":
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
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
    except Exception as e:  # unexpected: one line, and the traceback only on request
        if os.environ.get("LRN_DEBUG"):
            raise
        print(f"lrn {args.command}: unexpected error: {type(e).__name__}: {e} "
              "(set LRN_DEBUG=1 for the traceback)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
