"""Configs as people write them: YAML (and JSON) files, `--set` values as JSON or Python literals,
`lrn config show --json` read back as a config, -q / -v anywhere on the line, shell completion."""

from __future__ import annotations

import json
import sys

import pytest

from lrngpt.cli.main import main
from lrngpt.errors import UserError
from lrngpt.runconfig.schema import load_config, parse_value

YAML = """\
# a litgpt / nanoGPT-style file
model_type: gpt
data:
  corpus: stories:300KB
  vocab_size: 512
model:
  n_embd: 32
  n_head: 4
  n_layer: 2
  context_length: 256
train:
  lr: 3e-4          # YAML 1.1 would read this as a string
  min_lr: 1.0e-5
  steps: 20
  compile: false
  eval_tokens: null
"""


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_yaml_config_reads_as_its_json_twin(tmp_path):
    pytest.importorskip("yaml")
    (tmp_path / "small.yaml").write_text(YAML)
    cfg = load_config(str(tmp_path / "small.yaml"))
    assert cfg.train.lr == 3e-4 and isinstance(cfg.train.lr, float) and cfg.train.min_lr == 1e-5
    assert (cfg.model.n_embd, cfg.train.eval_tokens, cfg.name) == (32, None, "small")
    twin = {"model_type": "gpt", "data": {"corpus": "stories:300KB", "vocab_size": 512},
            "model": {"n_embd": 32, "n_head": 4, "n_layer": 2, "context_length": 256},
            "train": {"lr": 3e-4, "min_lr": 1e-5, "steps": 20, "compile": False, "eval_tokens": None}}
    (tmp_path / "small.json").write_text(json.dumps(twin))
    assert load_config(str(tmp_path / "small.json")).to_dict() == cfg.to_dict()
    assert load_config(str(tmp_path / "small.yaml"), ["train.lr=.5"]).train.lr == 0.5
    (tmp_path / "other.yml").write_text("train:\n  steps: 7\n")
    assert load_config(str(tmp_path / "other.yml")).train.steps == 7


def test_bad_yaml_and_yaml_without_pyyaml_exit_2_with_one_line(tmp_path, capsys, monkeypatch):
    pytest.importorskip("yaml")
    (tmp_path / "broken.yaml").write_text("train:\n  steps: [1,\n  lr: 2\n")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    (tmp_path / "typo.yaml").write_text("train:\n  stepz: 3\n")
    for name, needle in (("broken.yaml", "is not valid YAML (line "), ("list.yaml", "must hold a mapping"),
                         ("typo.yaml", "unknown config key train.stepz; did you mean train.steps?")):
        code, _, err = run(capsys, "config", "show", str(tmp_path / name))
        assert code == 2 and needle in err and err.count("\n") == 1, err
    monkeypatch.setitem(sys.modules, "yaml", None)
    (tmp_path / "fine.yaml").write_text("train:\n  steps: 3\n")
    code, _, err = run(capsys, "train", "--config", str(tmp_path / "fine.yaml"), "--dry-run",
                       "--out", str(tmp_path / "r"))
    assert code == 2 and "pip install pyyaml" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("raw, value", [
    ("True", True), ("False", False), ("None", None), (".5", 0.5), ("1e-3", 1e-3), ("5.", 5.0),
    ("1_000", 1000), ("'quoted'", "quoted"), ("true", True), ("null", None), ('"json"', "json"),
    ("stories:5MB", "stories:5MB"), ("abc", "abc"), ("text:/data/a b.txt", "text:/data/a b.txt"),
    ("1.txt", "1.txt"), ("(" * 500, "(" * 500)])
def test_set_values_are_json_else_python_literals_else_strings(raw, value):
    assert parse_value(raw) == value and type(parse_value(raw)) is type(value)


def test_python_literal_set_values_configure_a_run():
    cfg = load_config("mlp-tiny", ["train.lr=.5", "train.compile=True", "train.eval_tokens=None",
                                   "train.min_lr=1e-3", "model.n_embd=0x10"])
    assert (cfg.train.lr, cfg.train.compile, cfg.train.eval_tokens, cfg.train.min_lr, cfg.model.n_embd) == \
        (0.5, True, None, 1e-3, 16)
    with pytest.raises(UserError, match="train.compile"):
        load_config("mlp-tiny", ["train.compile=(1, 2)"])  # a literal of the wrong type is still refused


def test_config_show_json_reads_back_as_the_same_config(tmp_path, capsys):
    code, out, _ = run(capsys, "config", "show", "cpu", "--set", "train.steps=7", "--set", "model.n_embd=64",
                       "--json")
    assert code == 0
    (tmp_path / "shown.json").write_text(out)
    code, again, _ = run(capsys, "config", "show", str(tmp_path / "shown.json"), "--json")
    assert code == 0
    assert json.loads(again)["keys"] == json.loads(out)["keys"]  # every key, derived ones included
    cfg = load_config(str(tmp_path / "shown.json"))
    assert cfg.to_dict() == load_config("cpu", ["train.steps=7", "model.n_embd=64"]).to_dict()
    code, _, err = run(capsys, "train", "--config", str(tmp_path / "shown.json"), "--dry-run", "--json",
                       "--out", str(tmp_path / "r"))
    assert code == 0, err
    (tmp_path / "bad.json").write_text(json.dumps({"keys": [{"key": "train.nope", "value": 1}]}))
    code, _, err = run(capsys, "config", "show", str(tmp_path / "bad.json"))
    assert code == 2 and "unknown config key train.nope" in err and err.count("\n") == 1


def test_quiet_and_verbose_work_after_the_command_too(tmp_path, capsys):
    argv = ["data", "prepare", "--corpus", "stories:20KB", "--vocab-size", "300"]
    code, _, err = run(capsys, *argv)
    assert code == 0 and err.strip()  # it says what it prepared ...
    for quiet in (["-q", *argv], [*argv[:2], "-q", *argv[2:]], [*argv, "--quiet"]):
        code, _, err = run(capsys, *quiet)
        assert code == 0 and err == "", (quiet, err)  # ... and nothing with -q, wherever it stands
    code, _, err = run(capsys, "train", "-q", "--config", "mlp-tiny", "--dry-run", "--out", str(tmp_path / "r"))
    assert code == 0, err
    code, _, _ = run(capsys, "config", "show", "cpu", "-v")
    assert code == 0


def test_completion_prints_a_script_that_knows_the_commands_and_options(capsys, monkeypatch):
    pytest.importorskip("shtab")
    for shell in ("bash", "zsh"):
        code, out, _ = run(capsys, "completion", shell)
        assert code == 0 and "--config" in out and "import-gpt2" in out and "--checkpoint" in out, shell
    monkeypatch.setitem(sys.modules, "shtab", None)
    code, _, err = run(capsys, "completion", "bash")
    assert code == 2 and "pip install shtab" in err and err.count("\n") == 1
