"""`lrn completion bash|zsh|tcsh`: the shell completion script (shtab, from lrn's own parser), with
custom completers for the values it cannot see there (lrngpt.api.completion); tcsh gets no values."""

from __future__ import annotations

import lrngpt.api as api
from lrngpt.cli.common import command, parsers
from lrngpt.errors import UserError

SHELLS = ("bash", "zsh", "tcsh")
# completer -> the options (or a positional's metavar) it completes, its values in lrngpt.api.completion, what one
# of them is, and the files it also offers (none: a key= or a kind: is completed without the space after it)
KINDS = {"preset_or_file": (("--config", "PRESET_OR_FILE"), "configs", "preset", ("json", "yaml", "yml")),
         "study_or_file": (("STUDY_OR_FILE",), "studies", "study", ("json",)),
         "config_key": (("--set", "--axis"), "keys", "key", ()), "corpus_kind": (("--corpus",), "corpora", "corpus kind", ())}

BASH_WRAPPER = """
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


def completers(shell: str, values: dict[str, list[str]]) -> str:
    """The shell functions _lrn_KIND, one per completer in KINDS ($1: the word being completed in bash)."""
    lines = ["", "# lrn's values (lrngpt.api.completion)"]
    for kind, (_, key, what, exts) in KINDS.items():
        words = " ".join(values[key])  # lrn's names and keys hold no spaces or quotes
        if shell == "bash":  # shtab asks for -o filenames (directories get their /) for a completer named *_file
            body = [f'compgen -W "{words}" -- "$1"', *(f"compgen -f -X '!*.{e}' -- \"$1\"" for e in exts),
                    *(['compgen -d -- "$1"'] if exts else [])]
        elif exts:
            body = [f"_alternative '{key}:{what}:({words})' 'files:file:_files -g \"*.({'|'.join(exts)})\"'"]
        else:
            body = [f"compadd -S '' -- {words}"]
        lines += [f"_lrn_{kind}() {{", *(f"  {b}" for b in body), "}"]
    return "\n".join(lines) + "\n"


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
    for p in parsers(parser):  # every option and positional named in KINDS gets its completer
        for action in p._actions:
            for kind, (names, *_) in KINDS.items():
                if set(names) & {*action.option_strings, action.metavar}:
                    action.complete = {"bash": f"_lrn_{kind}", "zsh": f"_lrn_{kind}"}
    script = shtab.complete(parser, shell=args.shell, preamble=completers(args.shell, api.completion.completion_values()))
    print(script + ("\n" + BASH_WRAPPER if args.shell == "bash" else ""), end="")
