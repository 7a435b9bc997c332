"""`lrn completion bash|zsh|tcsh`: the shell completion script (shtab, from lrn's own parser), with
custom completers for the values it cannot see there (lrngpt.api.completion); tcsh gets no values."""

from __future__ import annotations

import argparse

import lrngpt.api as api
from lrngpt.cli.common import command
from lrngpt.errors import UserError

SHELLS = ("bash", "zsh", "tcsh")
# (option strings, or a positional's metavar) -> the completer of its values
COMPLETERS = {
    "--config": "preset_or_file", "PRESET_OR_FILE": "preset_or_file", "STUDY_OR_FILE": "study_or_file",
    "--set": "config_key", "--axis": "config_key", "--corpus": "corpus_kind",
}


def register(sub) -> None:
    p = command(
        sub, "completion", cmd_completion, "print the shell completion script (bash, zsh, tcsh)",
        "Print a completion script for your shell, from lrn's own parser: commands, options and choices complete "
        "with TAB, and (bash, zsh) presets, studies, config keys and corpus kinds. Needs the shtab package "
        "(pip install 'lrngpt[completion]').",
        "examples:\n"
        "  lrn completion bash > ~/.local/share/bash-completion/completions/lrn\n"
        "  lrn completion zsh > ~/.zfunc/_lrn        # with fpath+=(~/.zfunc) before compinit\n"
        "  eval \"$(lrn completion bash)\"              # this shell only", json=False)
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")


def _words(values: list[str]) -> str:
    return " ".join(values)  # lrn's names and keys hold no spaces or quotes


def _bash(values: dict[str, list[str]]) -> tuple[str, str]:
    """The completers (a preamble) and a wrapper that leaves no space after a `key=` or a `kind:`."""
    # shtab's function asks for -o filenames (directories get their /) when a completer's name has _file
    preamble = f"""
# lrn's values (lrngpt.api.completion); $1 is the word being completed
_lrn_preset_or_file() {{
  compgen -W "{_words(values['configs'])}" -- "$1"
  local ext; for ext in '*.json' '*.yaml' '*.yml'; do compgen -f -X "!$ext" -- "$1"; done
  compgen -d -- "$1"
}}
_lrn_study_or_file() {{
  compgen -W "{_words(values['studies'])}" -- "$1"
  compgen -f -X '!*.json' -- "$1"
  compgen -d -- "$1"
}}
_lrn_config_key() {{
  compgen -W "{_words(values['keys'])}" -- "$1"
}}
_lrn_corpus_kind() {{
  compgen -W "{_words(values['corpora'])}" -- "$1"
}}
"""
    postamble = """
# a key (data.corpus=) or a corpus kind (text:) is completed without the space after it
_lrn_complete() {
  _shtab_lrn "$@"
  local c
  [[ ${#COMPREPLY[@]} -gt 0 ]] || return 0
  for c in "${COMPREPLY[@]}"; do [[ $c == *[=:] ]] || return 0; done
  compopt -o nospace 2>/dev/null
  return 0
}
complete -o bashdefault -F _lrn_complete lrn
"""
    return preamble, postamble


def _zsh(values: dict[str, list[str]]) -> str:
    return f"""
# lrn's values (lrngpt.api.completion)
_lrn_preset_or_file() {{
  _alternative 'presets:preset:({_words(values['configs'])})' 'files:config file:_files -g "*.(json|yaml|yml)"'
}}
_lrn_study_or_file() {{
  _alternative 'studies:study:({_words(values['studies'])})' 'files:sweep file:_files -g "*.json"'
}}
_lrn_config_key() {{
  compadd -S '' -- {_words(values['keys'])}
}}
_lrn_corpus_kind() {{
  compadd -S '' -- {_words(values['corpora'])}
}}
"""


def attach_completers(parser) -> None:
    """Give every option and positional named in COMPLETERS its completer, in every subcommand."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                attach_completers(sub)
            continue
        names = [*action.option_strings] or [action.metavar or action.dest]
        kind = next((COMPLETERS[n] for n in names if n in COMPLETERS), None)
        if kind is not None:
            action.complete = {"bash": f"_lrn_{kind}", "zsh": f"_lrn_{kind}"}


def cmd_completion(args) -> None:
    from lrngpt.cli.main import build_parser  # (main imports this module to register it)

    try:
        # optional: its absence is said in one line
        import shtab
    except ImportError:
        raise UserError("shell completion needs the shtab package: pip install shtab "
                        "(or pip install 'lrngpt[completion]')") from None
    parser = build_parser()
    if args.shell == "tcsh":
        print(shtab.complete(parser, shell="tcsh"), end="")
        return
    attach_completers(parser)
    values = api.completion.completion_values()
    if args.shell == "bash":
        preamble, postamble = _bash(values)
        print(shtab.complete(parser, shell="bash", preamble=preamble) + "\n" + postamble, end="")
    else:
        print(shtab.complete(parser, shell="zsh", preamble=_zsh(values)), end="")
