"""`lrn config list | show | keys`, the one table of key descriptions, and the seed configs by name."""

from __future__ import annotations

import dataclasses
import json

import pytest

from lrngpt.cli.main import main
from lrngpt.runconfig.help import KEY_HELP, PRESET_ABOUT
from lrngpt.runconfig.schema import (
    DataConfig,
    TrainConfig,
    load_config,
    model_class,
    preset_names,
)
from lrngpt.runconfig.values import DERIVED


def run_json(capsys, *argv):
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_every_key_of_every_dataclass_has_one_description():
    keys = {"model_type", "name"}
    for section, classes in (("data", [DataConfig]), ("model", [model_class("mlp"), model_class("gpt")]),
                             ("train", [TrainConfig])):
        keys |= {f"{section}.{f.name}" for cls in classes for f in dataclasses.fields(cls)}
    assert set(KEY_HELP) == keys
    assert all(text and "\n" not in text for text in KEY_HELP.values())
    assert set(DERIVED) <= keys


def test_the_named_configs_include_the_seed_projects_and_each_says_what_it_is(capsys):
    assert {"cpu", "nsmc", "mlp-chapter", "mlp-cpu", "mlp-tiny", "gpt-default"} <= set(preset_names())
    assert set(PRESET_ABOUT) == set(preset_names())
    rows = run_json(capsys, "config", "list")["configs"]
    assert {r["name"]: r["model_type"] for r in rows}["nsmc"] == "gpt"
    assert all(r["about"] for r in rows)


@pytest.mark.parametrize("name", ["mlp-cpu", "cpu"])
def test_show_lists_every_resolved_key_with_value_and_description(capsys, name):
    doc = run_json(capsys, "config", "show", name)
    cfg = load_config(name).to_dict()
    flat = {"model_type": cfg["model_type"], "name": cfg["name"],
            **{f"{s}.{k}": v for s in ("data", "model", "train") for k, v in cfg[s].items()}}
    assert {r["key"]: r["value"] for r in doc["keys"]} == flat
    assert all(r["help"] == KEY_HELP[r["key"]] for r in doc["keys"])
    derived = {r["key"] for r in doc["keys"] if r["derived"]}
    # a GPT's head_dim is n_embd / n_head (without an aspect ratio)
    assert derived == ({"model.vocab_size", "model.pad_id"} if name == "mlp-cpu" else {"model.vocab_size",
                                                                                       "model.head_dim"})
    assert doc["about"] == PRESET_ABOUT[name]


def test_show_applies_overrides_and_refuses_unknown_keys_in_one_line(capsys):
    doc = run_json(capsys, "config", "show", "mlp-cpu", "--set", "model.n_embd=128", "--set", "data.vocab_size=512")
    values = {r["key"]: r["value"] for r in doc["keys"]}
    assert values["model.n_embd"] == 128 and values["model.vocab_size"] == 512
    assert main(["config", "show", "mlp-cpu", "--set", "model.n_emb=8"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "did you mean model.n_embd?" in err


def test_show_text_marks_derived_keys(capsys):
    assert main(["config", "show", "mlp-tiny"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("model.vocab_size"))
    assert "512" in line and "[derived: it is data.vocab_size" in line


def test_keys_lists_types_defaults_and_what_is_required(capsys):
    rows = {r["key"]: r for r in run_json(capsys, "config", "keys", "--model-type", "gpt")["keys"]}
    assert rows["model.context_length"]["required"] and rows["model.vocab_size"]["derived"]
    assert rows["train.seq_len"]["type"] == "int or null" and rows["train.lr"]["default"] == 0.01
    assert "model.block_size" not in rows


def test_the_seed_configs_old_paths_still_work_from_any_directory(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    by_name = run_json(capsys, "train", "--config", "nsmc", "--dry-run")
    by_path = run_json(capsys, "train", "--config", "configs/nsmc.json", "--dry-run")
    assert by_name == by_path and by_name["config"]["name"] == "nsmc"
    assert main(["train", "--config", "configs/nope.json", "--dry-run"]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_show_and_train_name_the_file_when_the_file_itself_is_at_fault(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"model_type": "mlp", "model": {"n_embd": "wide"}}))
    for argv in (["config", "show", str(bad)], ["train", "--config", str(bad), "--dry-run"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and f"{bad}: model.n_embd" in err, err
