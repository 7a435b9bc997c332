"""The shipped GPT configs (SPEC section 4): the seed project's numbers, loadable, and priced
the same by the model and by the analytic cost formula."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lrngpt.analysis.costs import gpt_params
from lrngpt.cli.main import main
from lrngpt.runconfig.schema import PRESET_DIR, load_config

CONFIGS = PRESET_DIR  # the seed project's configs ship as the presets cpu and nsmc

# SPEC section 4 / seeds/001: what each shipped config must say.
SEED = {
    "cpu": {"vocab_size": 300, "context_length": 32, "n_embd": 48, "n_head": 4, "n_layer": 2, "dropout": 0.1,
            "norm_position": "pre", "batch_size": 8, "lr": 2e-3, "seed": 42},
    "nsmc": {"vocab_size": 3000, "context_length": 128, "n_embd": 192, "n_head": 4, "n_layer": 4, "ffn_mult": 4,
             "dropout": 0.1, "norm_position": "post", "batch_size": 32, "lr": 4e-4, "weight_decay": 0.1,
             "seed": 123},
}
# Parameter counts written out by hand (V*D + T*D + L*(4D + 4D^2 + 2rD^2) + 2D + V*D, r = 4).
TOTALS = {"cpu": 14_400 + 1_536 + 55_776 + 14_400, "nsmc": 576_000 + 24_576 + 1_772_928 + 576_000}


def values(cfg) -> dict:
    """The config's values under the names SEED uses."""
    return {"vocab_size": cfg.data.vocab_size, **vars(cfg.model), **vars(cfg.train)}


@pytest.mark.parametrize("name", SEED)
def test_shipped_config_loads_with_the_seed_values(name):
    cfg = load_config(str(CONFIGS / f"{name}.json"))
    assert cfg.model_type == "gpt" and cfg.name == name
    got = values(cfg)
    assert {k: got[k] for k in SEED[name]} == SEED[name]
    assert cfg.train.seq_len == cfg.model.context_length  # null seq_len means the whole context
    assert cfg.model.ffn == "gelu" and not cfg.model.tie_embeddings
    assert cfg.data.corpus == {"cpu": "stories:2MB", "nsmc": "nsmc"}[name]


def test_shipped_configs_are_in_the_preset_format():
    preset = json.loads((Path(__file__).resolve().parents[2] / "lrngpt/runconfig/presets/gpt-default.json").read_text())
    for name in SEED:
        d = json.loads((CONFIGS / f"{name}.json").read_text())
        assert list(d) == list(preset) == ["model_type", "data", "model", "train"]
        assert set(d["model"]) == set(preset["model"]) and set(d["train"]) == set(preset["train"])


@pytest.mark.parametrize("name", SEED)
def test_dry_run_breakdown_matches_the_cost_formula(name, capsys):
    assert main(["train", "--config", str(CONFIGS / f"{name}.json"), "--dry-run", "--json"]) == 0
    params = json.loads(capsys.readouterr().out)["params"]
    m = load_config(str(CONFIGS / f"{name}.json")).model
    formula = gpt_params(m.vocab_size, m.context_length, m.n_embd, m.n_layer, m.ffn, m.ffn_mult,
                         m.tie_embeddings, m.qkv_bias)
    assert params == {k: formula[k] for k in params}
    assert set(params) == {"total", "token_embedding", "position_embedding", "blocks", "lm_head"}
    assert params["total"] == TOTALS[name]
