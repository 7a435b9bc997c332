"""Shared pieces of the command line: the parsers (one-line errors, help with each default once), --json
output, and each option several commands take, defined once (choices and defaults: lrngpt.api.frontend)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from lrngpt.api.frontend import (
    CHECKPOINT_MEANING,
    CHECKPOINTS,
    CORPUS_FORMS,
    DEVICES,
    UserError,
    check_seed,
    did_you_mean,
    in_words,
    json_safe,
)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Texts with their own line breaks (examples) kept as written, others wrapped; every option's help
    ends with its default once: "(default: X)" unless the text states it, none for on/off flags."""

    def _fill_text(self, text, width, indent):
        if "\n" in text:
            return super()._fill_text(text, width, indent)
        return argparse.HelpFormatter._fill_text(self, text, width, indent)

    def _get_help_string(self, action):
        text = action.help or ""
        positional = not action.option_strings and action.nargs not in ("?", "*")  # a required one
        if "default" in text.lower() or action.nargs == 0 or action.required or positional:
            return text
        value = action.default  # lists comma-separated, nothing as 'none'
        shown = ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
        shown = "none" if value is None or value == [] else shown
        repeatable = "repeatable; " if isinstance(action, argparse._AppendAction) and value == [] else ""
        return f"{text} ({repeatable}default: {shown.replace('%', '%%')})"


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr and exit code 2, with a suggestion."""

    _argv: list[str] = []  # the words `lrn` parses: a value read as an option is found there
    takes_json = False  # a command that prints a result: --json (lrngpt.cli.main adds it)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_args(self, args=None, namespace=None):
        """`lrn`'s parse: words no parser took are said by the command that got them (set by `command`)."""
        Parser._argv = list(sys.argv[1:] if args is None else args)
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            leaf = getattr(parsed, "parser", self)
            leaf.error(f"unrecognized arguments: {' '.join(extras)}{option_hint(extras, leaf, self)}")
        return parsed

    def _check_value(self, action, value):  # argparse's check of a command or a choice, with a did-you-mean
        if action.choices is not None and value not in action.choices:
            choices = list(action.choices)
            hint = did_you_mean(value, choices).rstrip() or f"choose from {', '.join(choices)}"
            if isinstance(action, argparse._SubParsersAction):
                raise argparse.ArgumentError(None, f"unknown command {value!r}; {hint}")
            raise argparse.ArgumentError(action, f"unknown choice {value!r}; {hint}")

    def error(self, message: str):  # noqa: D401 - argparse API
        message += dash_value_hint(message, Parser._argv)
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def dash_value_hint(message: str, argv: list[str]) -> str:
    """The fix when argparse found no value after an option because the value began with a dash."""
    m = re.fullmatch(r"argument (\S+): expected one argument", message)
    if not m:
        return ""
    flags = m[1].split("/")
    for i, word in enumerate(argv[:-1]):
        if word in flags and argv[i + 1].startswith("-") and argv[i + 1][1:2] in "0123456789.":
            return f"; a value that starts with - is read as an option: write {flags[-1]}={argv[i + 1]}"
    return ""


def option_hint(tokens: list[str], *parsers: argparse.ArgumentParser) -> str:
    """"; did you mean --temperature?" for the first mistyped option among `tokens`."""
    options = list(dict.fromkeys(o for p in parsers for a in p._actions for o in a.option_strings
                                 if o.startswith("--")))
    for token in tokens:
        hint = did_you_mean(token.split("=")[0], options) if token.startswith("--") else ""
        if hint:
            return "; " + hint.rstrip()
    return ""


def command(sub, name: str, func, help: str, description: str, epilog: str, json: bool = True) -> Parser:
    """A command's parser: its summary, description, examples and handler; --json (added last, by
    lrngpt.cli.main) unless json=False."""
    p = sub.add_parser(name, help=help, description=description, epilog=epilog)
    p.set_defaults(func=func, parser=p)
    p.takes_json = json
    return p


def parsers(parser: argparse.ArgumentParser):
    """`parser` and every (sub)command parser under it, parents first."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from parsers(sub)


def group(sub, name: str, help: str, description: str, epilog: str):
    """A command of subcommands (`lrn embed`): the subparsers action its subcommands are added to."""
    p = command(sub, name, None, help, description, epilog, json=False)
    return p.add_subparsers(dest=f"{name}_command", metavar="COMMAND", required=True, parser_class=Parser)


def said(obj: Any) -> Any:
    """`obj` with every setting a message in it names (lrngpt.errors.option) said as lrn's option."""
    if isinstance(obj, str):
        return in_words(obj, cli=True)
    if isinstance(obj, dict):
        return {k: said(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [said(v) for v in obj]
    return obj


def emit(args: argparse.Namespace, result: Any, text: str = "") -> None:
    """Print the result as JSON (--json: strict, NaN and infinities as null) or as human text."""
    if getattr(args, "json", False):
        result = json_safe(said(result))
        indent = None if isinstance(result, dict) and len(json.dumps(result)) < 200 else 2  # a short one on one line
        print(json.dumps(result, ensure_ascii=False, indent=indent, allow_nan=False))
    else:
        print(said(text))


def positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return v


def seed(text: str) -> int:
    """A random seed: an integer torch and numpy take (within 64 bits, negatives included)."""
    try:
        return check_seed(int(text), "a seed")
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    except UserError as e:  # the one 64-bit bound (lrngpt.core.validate), said as argparse says it
        raise argparse.ArgumentTypeError(e.words(cli=True)) from None


def _number_list(text: str, kind: type, what: str, example: str) -> list:
    try:
        values = [kind(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of {what}") from None
    if not values:
        raise argparse.ArgumentTypeError(f"the list is empty; write it like {example}")
    return values


def int_list(text: str) -> list[int]:
    return _number_list(text, int, "integers", "4,8,16")


def float_list(text: str) -> list[float]:
    return _number_list(text, float, "numbers", "0,0.9,0.99")


def add_checkpoint(p: argparse.ArgumentParser, choices: tuple[str, ...] | None = None, default: str | None = "last",
                   what: str = "which weights", extra: str = "", run: str | None = "a run directory (lrn train --out)",
                   untrained: bool = False) -> None:
    """The weights a command reads: the run directory (`run`, its help; None: none) and the one --checkpoint
    option, CHECKPOINTS (or a subset) each explained the same way everywhere; `untrained`: --untrained too."""
    if run:
        p.add_argument("run_dir", help=run)
    choices = tuple(choices or CHECKPOINTS)
    meaning = ", ".join(f"{c} ({CHECKPOINT_MEANING[c]})" for c in choices)
    p.add_argument("--checkpoint", choices=choices, default=default, help=f"{what}: {meaning}{extra}")
    if untrained:
        p.add_argument("--untrained", dest="checkpoint", action="store_const", const="init",
                       help="the same as --checkpoint init")


def add_out(p: argparse.ArgumentParser, what: str, metavar: str = "DIR", required: bool = True,
            default: str | None = None) -> None:
    p.add_argument("--out", metavar=metavar, required=required, default=default, help=what)


def add_force(p: argparse.ArgumentParser, what: str) -> None:
    """--force replaces only an earlier output of lrn's (lrngpt/core/ownership.py); `what` names it."""
    p.add_argument("--force", action="store_true", help=f"replace {what} (never a file or directory lrn did not write)")


def add_device(p: argparse.ArgumentParser, sets_config: bool = False) -> None:
    """--device: where torch runs; for a command that trains, the config's train.device (recorded in the run)."""
    config = "; the same as --set train.device=DEV (default: the config's train.device)" if sets_config else ""
    p.add_argument("--device", default=None if sets_config else "auto", help=f"where to run: {DEVICES}{config}")


def add_corpus(p: argparse.ArgumentParser, sets_config: bool = False, help: str | None = None,
               required: bool = False) -> None:
    text = help or (f"the corpus, one of {CORPUS_FORMS}" + (
        "; the same as --set data.corpus=CORPUS (default: the config's data.corpus)" if sets_config else ""))
    p.add_argument("--corpus", metavar="CORPUS", required=required, help=text)


def add_set(p: argparse.ArgumentParser, what: str = "a config value") -> None:
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help=f"override {what}, e.g. --set model.n_embd=128 or train.compile=True (JSON, else a Python "
                        "literal, else a string); the keys: lrn config keys")


def stderr_note(command: str):
    """A line for stderr, as `lrn COMMAND: ...` (what a workflow says before it starts its work)."""
    return lambda line: print(f"lrn {command}: {line}", file=sys.stderr)
