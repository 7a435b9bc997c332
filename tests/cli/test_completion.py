"""`lrn completion bash` completes values, not only commands and options: the generated script,
run in bash with COMP_WORDS / COMP_CWORD set as readline sets them, offers presets and config files
after --config, studies and sweep files after `lrn sweep`, config keys after --set / --axis, corpus
kinds after --corpus, the checkpoints after --checkpoint; zsh gets the same completers."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from lrngpt.cli.main import main
from tests.cli_run import HUNG

pytest.importorskip("shtab")
BASH = shutil.which("bash")

# (the words typed, the last one being completed) -> exactly the candidates expected
CASES = [
    (["train", "--config", "mlp"], ["mlp-chapter", "mlp-cpu", "mlp-tiny"]),
    (["train", "--config", "my"], ["my.json", "my.yaml", "mydir"]),  # config files and directories, not my.txt
    (["config", "show", "c"], ["cpu"]),
    (["sweep", "embed-dim-"], ["embed-dim-long", "embed-dim-small-data"]),
    (["sweep", "s"], ["seed-variance", "sweep.json"]),
    (["sweep", "embed-dim", "--set", "model.n_e"], ["model.n_embd="]),
    (["sweep", "embed-dim", "--axis", "train.se"], ["train.seed=", "train.seq_len="]),
    (["train", "--set", "data.v"], ["data.val_fraction=", "data.val_split=", "data.vocab_size="]),
    (["data", "prepare", "--corpus", "t"], ["text:", "tinystories", "tinystories:"]),
    (["eval", "runs/a", "--checkpoint", ""], ["best", "init", "last"]),
    (["export", "runs/a", "--checkpoint", ""], ["best", "last"]),
    (["train", "--ou"], ["--out"]),  # options still complete as before
]


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    import io
    from contextlib import redirect_stdout

    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["completion", "bash"]) == 0
    path = tmp_path_factory.mktemp("completion") / "lrn.bash"
    path.write_text(out.getvalue())
    return path


@pytest.mark.skipif(BASH is None, reason="no bash")
def test_bash_completes_presets_files_studies_keys_corpora_and_checkpoints(script, tmp_path):
    for name in ("my.json", "my.yaml", "my.txt", "sweep.json"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "mydir").mkdir()
    lines = [f"source {script}", f"cd {tmp_path}",
             'comp() { COMP_WORDS=(lrn "$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMP_LINE="lrn $*"; '
             'COMP_POINT=${#COMP_LINE}; COMPREPLY=(); _lrn_complete lrn; '
             'printf "%s\\n" "${COMPREPLY[@]}" | LC_ALL=C sort | tr "\\n" " "; echo; }']
    lines += ["comp " + " ".join(f"'{w}'" for w in words) for words, _ in CASES]
    done = subprocess.run([BASH, "--norc", "-c", "\n".join(lines)], capture_output=True, text=True, timeout=HUNG)
    assert done.returncode == 0, done.stderr
    got = done.stdout.splitlines()
    assert len(got) == len(CASES), done.stdout + done.stderr
    for (words, want), line in zip(CASES, got, strict=True):
        assert line.split() == sorted(want), (words, line)


def test_zsh_gets_the_same_completers(capsys):
    assert main(["completion", "zsh"]) == 0
    out = capsys.readouterr().out
    for fn in ("_lrn_preset_or_file", "_lrn_study_or_file", "_lrn_config_key", "_lrn_corpus_kind"):
        assert f"\n{fn}() {{" in out, fn  # defined once ...
    assert ":NAME_OR_FILE:_lrn_preset_or_file" in out and ":KEY=VALUE:_lrn_config_key" in out  # ... and used
    assert "compadd -S '' -- model_type= name= data.corpus=" in out
    if shutil.which("zsh"):
        check = subprocess.run(["zsh", "-n"], input=out, capture_output=True, text=True, timeout=HUNG)
        assert check.returncode == 0, check.stderr
