"""MkDocs hooks (mkdocs.yml `hooks:`): the two reference pages are made at build time from the code,
so they cannot drift from it, and the notebooks are published beside the pages that link to them.

- reference/cli.md: every `lrn` command and subcommand, walked from `lrngpt.cli.main.build_parser()`,
  with the help argparse prints for it (its options, their defaults, its examples).
- reference/api.md: every name of `lrngpt.__all__`, as a mkdocstrings block of the module that defines
  it (`lrngpt.api.WHERE`), grouped by that module.
- notebooks/*.ipynb: the repository's notebooks, copied into the site, so the relative links that
  work on a code host (`../../notebooks/NAME.ipynb`) work in the site too.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from pathlib import Path

from mkdocs.structure.files import File, InclusionLevel

ROOT = Path(__file__).resolve().parents[1]
CLI_MARK, API_MARK = "<!-- lrn commands -->", "<!-- lrngpt names -->"
# the API page's sections, by the module that defines each name (a module not listed gets its own name)
SECTIONS = {
    "lrngpt.api.configs": "Configs", "lrngpt.api.runs": "Runs", "lrngpt.api.results": "Run results and tables",
    "lrngpt.api.sweeps": "Sweeps", "lrngpt.api.chapter_studies": "The chapter in one budget",
    "lrngpt.api.corpus": "Data and tokenizers", "lrngpt.api.embedding": "The embedding table",
    "lrngpt.api.lessons": "Lessons and the PIP estimate", "lrngpt.api.theory": "Theory and costs",
    "lrngpt.api.rare_tokens": "Under-trained tokens", "lrngpt.api.shapes": "Width against depth",
    "lrngpt.api.outputs": "Reports, export and import", "lrngpt.api.quickstart": "The demo",
    "lrngpt.api.machine": "This machine", "lrngpt.errors": "Errors", "lrngpt.core.version": "Version",
}


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("lrn",)) -> Iterator[tuple[tuple[str, ...], str, argparse.ArgumentParser]]:
    """(path, one-line help, parser) of `lrn` and every command under it, in the parser's order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                if name in helps:  # an alias shares its command's parser: listed once
                    yield (*path, name), helps[name], sub
                    yield from commands(sub, (*path, name))


def cli_reference() -> str:
    from lrngpt.cli.main import build_parser

    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal: one width for every build
    try:
        parser = build_parser()
        parts = ["```text", parser.format_help().rstrip(), "```"]
        for path, summary, sub in commands(parser):
            parts += [f"{'#' * min(len(path), 4)} {' '.join(path)}", "", summary, "",
                      "```text", sub.format_help().rstrip(), "```", ""]
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    return "\n".join(parts)


def api_reference() -> str:
    import lrngpt.api as api

    by_module: dict[str, list[str]] = {}
    for name in api.__all__:
        by_module.setdefault(api.WHERE[name], []).append(name)
    order = [m for m in SECTIONS if m in by_module] + sorted(set(by_module) - set(SECTIONS))
    parts = []
    for module in order:
        parts += [f"## {SECTIONS.get(module, module)}", ""]
        for name in by_module[module]:
            parts += [f"::: {module}.{name}", "    options:", "      heading_level: 3", ""]
    return "\n".join(parts)


def on_files(files, config):
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        file = File(f"notebooks/{notebook.name}", str(ROOT), config["site_dir"], config["use_directory_urls"])
        file.src_uri = f"../notebooks/{notebook.name}"  # what a page's ../../notebooks/NAME link resolves to
        file.dest_uri = f"notebooks/{notebook.name}"
        file.abs_src_path = str(notebook)
        file.inclusion = InclusionLevel.INCLUDED  # not a page of the nav, but published
        files.append(file)
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    if CLI_MARK in markdown:
        markdown = markdown.replace(CLI_MARK, cli_reference())
    if API_MARK in markdown:
        markdown = markdown.replace(API_MARK, api_reference())
    return markdown
