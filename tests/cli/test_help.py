"""Help texts of the explorer's commands: a description, an example, and every option's default."""

from __future__ import annotations

import argparse

import pytest

from lrngpt.cli.main import build_parser, main

COMMANDS = [("embed", "export"), ("embed", "explore"), ("lesson", "softmax-bottleneck"), ("lesson", "renumber"),
            ("tokenizer", "show")]


def subparser(group: str, name: str) -> argparse.ArgumentParser:
    def choices(p):
        return next(a for a in p._actions if isinstance(a, argparse._SubParsersAction)).choices

    return choices(choices(build_parser())[group])[name]


@pytest.mark.parametrize("group, name", COMMANDS)
def test_every_option_says_its_default_and_the_command_shows_an_example(group, name, capsys):
    p = subparser(group, name)
    assert p.description and "example" in (p.epilog or "")
    for a in p._actions:
        if isinstance(a, argparse._HelpAction) or a.dest == "json":
            continue
        assert a.help, f"{a.dest} has no help"
        if a.option_strings and not a.required:
            assert "default" in a.help, f"--{a.dest}: {a.help}"
    with pytest.raises(SystemExit) as e:
        main([group, name, "--help"])
    assert e.value.code == 0 and "usage: lrn" in capsys.readouterr().out
