"""Help that teaches: the whole parser is walked, every command and subcommand has a description and
examples, every option a sentence and its default exactly once, and no text cites a document the
user does not have."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

import pytest

from lrngpt.cli.common import HelpFormatter
from lrngpt.cli.main import build_parser, main

EXEMPT = (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(path, parser) of `lrn` and of every command and subcommand under it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, (*path, name))


ALL = list(commands(build_parser()))
IDS = [" ".join(path) or "lrn" for path, _ in ALL]


def rendered_help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """An option's help as `--help` prints it, default included."""
    return parser._get_formatter()._expand_help(action)


def texts(parser: argparse.ArgumentParser):
    yield "description", parser.description or ""
    yield "epilog", parser.epilog or ""
    for action in parser._actions:
        yield f"help of {action.dest}", action.help or ""
        if isinstance(action, argparse._SubParsersAction):
            yield from ((f"summary of {a.dest}", a.help or "") for a in action._choices_actions)


def test_the_walk_reaches_every_command():
    names = set(IDS)
    assert len(ALL) > 40
    for expected in ("train", "config show", "sweep", "embed explore", "cost gpt", "lesson renumber",
                     "tokenizer show", "data stories", "theory jl"):
        assert expected in names


@pytest.mark.parametrize("path, parser", ALL, ids=IDS)
def test_every_command_has_a_description_and_examples(path, parser):
    assert parser.formatter_class is HelpFormatter
    assert parser.description and len(parser.description) > 20, "no description"
    assert parser.epilog and re.match(r"(?s).*\bexamples?:\n  lrn ", parser.epilog), "no 'examples:' epilog"
    for line in parser.epilog.split("examples:", 1)[-1].split("example:", 1)[-1].splitlines():
        if line.strip().startswith("lrn "):
            assert line.strip().startswith(" ".join(("lrn", *path))) or not path, line


@pytest.mark.parametrize("path, parser", ALL, ids=IDS)
def test_every_option_has_a_sentence_and_its_default_once(path, parser):
    for action in parser._actions:
        if isinstance(action, EXEMPT):
            continue
        name = "/".join(action.option_strings) or action.dest
        assert action.help and len(action.help.split()) >= 3, f"{name}: no help sentence"
        text = rendered_help(parser, action)
        count = len(re.findall(r"\bdefault\b", text, re.IGNORECASE))
        if action.nargs == 0 or action.required or (not action.option_strings and action.nargs not in ("?", "*")):
            assert count <= 1, f"{name}: {text}"
        else:
            assert count == 1, f"{name} shows its default {count} times: {text}"


@pytest.mark.parametrize("path, parser", ALL, ids=IDS)
def test_no_text_cites_a_document_the_user_does_not_have(path, parser):
    for where, text in texts(parser):
        assert "seeds/" not in text and "SPEC" not in text, f"{where}: {text}"
        # "the chapter" only after saying which: a text that mentions a chapter names the book chapter
        if re.search(r"(?<![-\w])chapter", text):  # mlp-chapter is a name, not a citation
            assert "book chapter" in text, f"{where} says 'chapter' without saying which: {text}"
        if re.search(r"\blecture", text):
            assert re.search(r"lecture on \w+", text), f"{where} says 'lecture' without saying which: {text}"


@pytest.mark.parametrize("path", [p for p, _ in ALL], ids=IDS)
def test_every_help_page_prints(path, capsys):
    with pytest.raises(SystemExit) as e:
        main([*path, "--help"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and out.startswith("usage: lrn")


def test_version_and_module_entry_point():
    import lrngpt

    out = subprocess.run([sys.executable, "-m", "lrngpt", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"lrn {lrngpt.__version__}"
    out = subprocess.run([sys.executable, "-m", "lrngpt", "--help"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("usage: lrn") and "config" in out.stdout
