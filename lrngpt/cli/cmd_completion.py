"""`lrn completion bash|zsh|tcsh`: the shell completion script of every command and option (shtab)."""

from __future__ import annotations

from lrngpt.errors import UserError

SHELLS = ("bash", "zsh", "tcsh")


def register(sub) -> None:
    p = sub.add_parser(
        "completion", help="print the shell completion script (bash, zsh, tcsh)",
        description="Print a completion script for your shell, generated from lrn's own parser, so every "
                    "command, subcommand, option and choice completes with TAB. Needs the shtab package "
                    "(pip install 'lrngpt[completion]').",
        epilog="examples:\n"
               "  lrn completion bash > ~/.local/share/bash-completion/completions/lrn\n"
               "  lrn completion zsh > ~/.zfunc/_lrn        # with fpath+=(~/.zfunc) before compinit\n"
               "  eval \"$(lrn completion bash)\"              # this shell only")
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    p.set_defaults(func=cmd_completion)


def cmd_completion(args) -> None:
    from lrngpt.cli.main import build_parser  # (main imports this module to register it)

    try:
        import shtab
    except ImportError:
        raise UserError("shell completion needs the shtab package: pip install shtab "
                        "(or pip install 'lrngpt[completion]')") from None

    print(shtab.complete(build_parser(), shell=args.shell), end="")
