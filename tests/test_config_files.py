"""Configs as people write them: YAML (and JSON) files, `--set` values as JSON or Python literals,
`lrn config show --json` read back as a config, -q / -v anywhere on the line, shell completion."""

from __future__ import annotations

import json
import sys

import pytest

from lrngpt.errors import UserError
from lrngpt.runconfig.overrides import parse_value
from lrngpt.runconfig.schema import load_config
from tests.cli_run import lrn

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


def test_a_yaml_config_reads_as_its_json_twin(tmp_path):
    pytest.importorskip("ruamel.yaml")
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


def test_bad_yaml_and_yaml_without_ruamel_yaml_exit_2_with_one_line(tmp_path, capsys, monkeypatch):
    pytest.importorskip("ruamel.yaml")
    (tmp_path / "broken.yaml").write_text("train:\n  steps: [1,\n  lr: 2\n")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    (tmp_path / "typo.yaml").write_text("train:\n  stepz: 3\n")
    for name, needle in (("broken.yaml", "is not valid YAML (line "), ("list.yaml", "must hold a mapping"),
                         ("typo.yaml", "unknown config key train.stepz; did you mean train.steps?")):
        code, _, err = lrn(capsys, "config", "show", str(tmp_path / name))
        assert code == 2 and needle in err and err.count("\n") == 1, err
    monkeypatch.setitem(sys.modules, "ruamel.yaml", None)
    (tmp_path / "fine.yaml").write_text("train:\n  steps: 3\n")
    code, _, err = lrn(capsys, "train", "--config", str(tmp_path / "fine.yaml"), "--dry-run",
                       "--out", str(tmp_path / "r"))
    assert code == 2 and "pip install ruamel.yaml" in err and err.count("\n") == 1, err


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
    code, out, _ = lrn(capsys, "config", "show", "cpu", "--set", "train.steps=7", "--set", "model.n_embd=64",
                       "--json")
    assert code == 0
    (tmp_path / "shown.json").write_text(out)
    code, again, _ = lrn(capsys, "config", "show", str(tmp_path / "shown.json"), "--json")
    assert code == 0
    assert json.loads(again)["keys"] == json.loads(out)["keys"]  # every key, derived ones included
    cfg = load_config(str(tmp_path / "shown.json"))
    assert cfg.to_dict() == load_config("cpu", ["train.steps=7", "model.n_embd=64"]).to_dict()
    code, _, err = lrn(capsys, "train", "--config", str(tmp_path / "shown.json"), "--dry-run", "--json",
                       "--out", str(tmp_path / "r"))
    assert code == 0, err
    (tmp_path / "bad.json").write_text(json.dumps({"keys": [{"key": "train.nope", "value": 1}]}))
    code, _, err = lrn(capsys, "config", "show", str(tmp_path / "bad.json"))
    assert code == 2 and "unknown config key train.nope" in err and err.count("\n") == 1


def test_quiet_and_verbose_work_after_the_command_too(tmp_path, capsys):
    argv = ["data", "prepare", "--corpus", "stories:20KB", "--vocab-size", "300"]
    code, _, err = lrn(capsys, *argv)
    assert code == 0 and err.strip()  # it says what it prepared ...
    for quiet in (["-q", *argv], [*argv[:2], "-q", *argv[2:]], [*argv, "--quiet"]):
        code, _, err = lrn(capsys, *quiet)
        assert code == 0 and err == "", (quiet, err)  # ... and nothing with -q, wherever it stands
    code, _, err = lrn(capsys, "train", "-q", "--config", "mlp-tiny", "--dry-run", "--out", str(tmp_path / "r"))
    assert code == 0, err
    code, _, _ = lrn(capsys, "config", "show", "cpu", "-v")
    assert code == 0


def test_completion_prints_a_script_that_knows_the_commands_and_options(capsys, monkeypatch):
    pytest.importorskip("shtab")
    for shell in ("bash", "zsh"):
        code, out, _ = lrn(capsys, "completion", shell)
        assert code == 0 and "--config" in out and "import-gpt2" in out and "--checkpoint" in out, shell
    monkeypatch.setitem(sys.modules, "shtab", None)
    code, _, err = lrn(capsys, "completion", "bash")
    assert code == 2 and "pip install shtab" in err and err.count("\n") == 1


# ---- YAML 1.2 (as ruamel.yaml reads it) and bounded reading ---------------------------------------------

YAML12 = [  # a value as a YAML file writes it -> what YAML 1.2 reads (YAML 1.1's reading in the comment)
    ("017", 17),  # 15
    ("0o17", 15), ("0x1F", 31), ("-12", -12), ("+12", 12), ("1e-3", 1e-3), ("1.0e-5", 1e-5), ("5.", 5.0),
    (".5", 0.5), ("-.5", -0.5), ("1E3", 1000.0),
    ("1:30", "1:30"),  # 90
    ("190:20:30", "190:20:30"),  # 685230
    ("yes", "yes"), ("no", "no"), ("on", "on"), ("off", "off"), ("y", "y"), ("Yes", "Yes"),  # booleans in 1.1
    ("true", True), ("True", True), ("TRUE", True), ("false", False), ("FALSE", False),
    ("1_000", 1000), ("0b101", 5),  # as ruamel.yaml reads YAML 1.2 (the spec's core schema says strings)
    ("null", None), ("Null", None), ("NULL", None), ("~", None), ("", None),
    ("'017'", "017"), ('"true"', "true"), ("!!str 17", "17"), ("!!int '0x10'", 16), ("!!float '1'", 1.0),
    ("stories:5MB", "stories:5MB"), ("text:/data/a b.txt", "text:/data/a b.txt"),
]


@pytest.mark.parametrize("text,value", YAML12, ids=[t or "empty" for t, _ in YAML12])
def test_yaml_values_read_as_yaml_1_2(text, value):
    pytest.importorskip("ruamel.yaml")
    from lrngpt.runconfig.yaml12 import load_yaml

    got = load_yaml(f"v: {text}\n", "test")["v"]
    assert got == value and type(got) is type(value), (text, got)


def test_yaml_special_floats_anchors_and_documents():
    pytest.importorskip("ruamel.yaml")
    import math

    from lrngpt.runconfig.yaml12 import load_yaml

    d = load_yaml("---\na: .inf\nb: -.Inf\nc: .NaN\nd: &x [1, {k: v}]\ne: *x\n...\n", "test")  # one document
    assert d["a"] == math.inf and d["b"] == -math.inf and math.isnan(d["c"])
    assert d["d"] == d["e"] == [1, {"k": "v"}]  # an alias reads as what its anchor holds
    assert load_yaml("", "test") is None and load_yaml("# only a comment\n", "test") is None


def test_a_yaml_file_with_yaml_1_1_habits_is_refused_with_the_fix(tmp_path):
    pytest.importorskip("ruamel.yaml")
    for text, needle in (("train:\n  steps: 017\n", 17), ("train:\n  compile: yes\n", "write true or false"),
                         ("train:\n  steps: 1_000\n", 1000), ("train:\n  steps: 1:30\n", "not 90")):
        (tmp_path / "c.yaml").write_text(text)
        if isinstance(needle, int):
            assert load_config(str(tmp_path / "c.yaml")).train.steps == needle
        else:
            with pytest.raises(UserError, match=needle):
                load_config(str(tmp_path / "c.yaml"))


def test_a_billion_laughs_is_refused_before_it_grows():
    import time

    pytest.importorskip("ruamel.yaml")

    from lrngpt.runconfig.yaml12 import load_yaml

    text = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))
    t0 = time.process_time()  # CPU time: the work done, not how busy the machine is with other programs
    with pytest.raises(UserError, match="more than 10,000 values"):
        load_yaml(text, "laughs.yaml")
    assert time.process_time() - t0 < 2


def test_set_values_keep_their_meaning_within_the_bounds():
    from lrngpt.core.fsio import MAX_INT_DIGITS
    from lrngpt.runconfig.values import MAX_DEPTH

    assert parse_value("9" * MAX_INT_DIGITS) == int("9" * MAX_INT_DIGITS)  # at the limit: read
    with pytest.raises(UserError, match=f"{MAX_INT_DIGITS + 1} digits"):
        parse_value("9" * (MAX_INT_DIGITS + 1))
    nested = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_value(nested) is not None  # 32 levels: read (and refused by the key's type, not the reader)
    with pytest.raises(UserError, match="nested more than"):
        parse_value("[" + nested + "]")
    assert parse_value("(1, 2)") == [1, 2] and parse_value("0x10") == 16 and parse_value("1_000") == 1000
    assert parse_value("text:a(b).txt") == "text:a(b).txt"  # not a literal: the plain string


def test_flat_keys_names_nested_settings_as_set_names_them():
    from lrngpt.runconfig.schema import flat_keys

    cfg = {"model": {"n_embd": 64, "ffn": {"kind": "gelu"}}, "train": {"steps": 10, "logger": []}, "name": "x",
           "data": {}}
    assert flat_keys(cfg) == {"model.n_embd": 64, "model.ffn.kind": "gelu", "train.steps": 10, "train.logger": [],
                              "name": "x"}  # an empty section names nothing
    assert flat_keys({}) == {} and flat_keys({1: {"a": None}}) == {"1.a": None}  # a key that is no string: as text
