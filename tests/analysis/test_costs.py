"""Parameter, byte and MAC counts against the chapter, seeds/000-001 and the real GPT module."""

from __future__ import annotations

import pytest

from lrngpt.analysis.costs import (
    bpb_by_width,
    gpt_cost,
    gpt_params,
    head_split,
    leading_terms,
    mlp_cost_table,
    mlp_params,
    reference_table,
)
from lrngpt.errors import UserError
from lrngpt.models.gpt import GPT, GPTConfig

WIDTHS = [4, 8, 16, 32, 64, 128, 256, 512]
CHAPTER_TOTALS = [2_130_432, 2_159_104, 2_216_448, 2_331_136, 2_560_512, 3_019_264, 3_936_768, 5_771_776]
CHAPTER_BPB = {4: 1.1734, 8: 1.0882, 16: 1.0247, 32: 0.9751, 64: 0.9326, 128: 0.9033, 256: 0.8864, 512: 0.8795}


def test_mlp_table_reproduces_chapter_exactly():
    table = mlp_cost_table(4096, 6, 512, WIDTHS)
    assert [r["total"] for r in table["rows"]] == CHAPTER_TOTALS
    # the chapter's breakdowns for d = 4, 64, 512
    assert mlp_params(4096, 6, 512, 4) == {"n_embd": 4, "total": 2_130_432, "embedding": 16_384,
                                           "hidden": 12_800, "output": 2_101_248}
    assert mlp_params(4096, 6, 512, 64)["hidden"] == 197_120
    assert mlp_params(4096, 6, 512, 512)["embedding"] == 2_097_152
    assert mlp_params(4096, 6, 512, 512)["hidden"] == 1_573_376


def test_each_doubling_adds_7168_times_d():
    table = mlp_cost_table(4096, 6, 512, WIDTHS)
    assert table["params_per_width_unit"] == 7_168
    assert table["rows"][0]["added"] is None
    for prev, row in zip(table["rows"], table["rows"][1:], strict=False):
        assert row["added"] == 7_168 * prev["n_embd"]
    assert table["rows"][5]["added"] == 458_752  # 64 -> 128
    assert table["rows"][7]["added"] == 1_835_008  # 256 -> 512


def test_sweep_adds_bpb_saved_per_million_like_problem_10():
    rows = [{"n_embd": d, "val_bpb": v, "steps": 4000, "seed": 1337, "params": 1} for d, v in CHAPTER_BPB.items()]
    table = mlp_cost_table(4096, 6, 512, WIDTHS, bpb_by_width(rows))
    by_d = {r["n_embd"]: r for r in table["rows"]}
    assert by_d[8]["bpb_saved"] == pytest.approx(0.0852)
    assert by_d[128]["bpb_saved"] == pytest.approx(0.0293)
    assert round(by_d[128]["bpb_saved_per_million"], 4) == 0.0639
    assert by_d[512]["bpb_saved"] == pytest.approx(0.0069)
    assert round(by_d[512]["bpb_saved_per_million"], 4) == 0.0038
    assert by_d[4]["bpb_saved"] is None


def test_bpb_by_width_averages_seeds_and_skips_rows_without_both_numbers():
    rows = [
        {"n_embd": 64, "val_bpb": 0.9326, "seed": 1337},
        {"n_embd": 64, "val_bpb": 0.9324, "seed": 1},     # seeds of one width are averaged
        {"n_embd": 128, "val_bpb": None},                 # unfinished run
        {"n_embd": 256, "val_bpb": float("nan")},         # no bytes scored
        {"name": "no width here", "val_bpb": 1.0},
        "not a row",
    ]
    assert bpb_by_width(rows) == {64: pytest.approx(0.9325)}
    table = mlp_cost_table(4096, 6, 512, [64, 128], bpb_by_width(rows))
    assert table["rows"][1]["val_bpb"] is None and table["rows"][1]["bpb_saved"] is None


def test_rows_without_a_width_and_a_bpb_are_a_user_error_naming_where():
    with pytest.raises(UserError, match=r"^S/summary.json: no rows with both n_embd and val_bpb$"):
        bpb_by_width([{"width": 64}], "S/summary.json")
    with pytest.raises(UserError, match="no rows with both"):
        bpb_by_width([])


def test_gpt2_small_tables_match_seed_001():
    p = gpt_params(50257, 1024, 768, 12, tied=True)
    assert p["token_embedding"] == 38_597_376
    assert p["position_embedding"] == 786_432
    assert p["lm_head"] == 0
    # per block 4D (two LayerNorms) + 4D^2 (attention) + 8D^2 (FFN r=4), plus ln_f 2D
    assert p["blocks"] == 12 * (4 * 768 + 12 * 768**2) + 2 * 768 == 84_973_056
    assert p["total"] == 124_356_864
    assert gpt_params(50257, 1024, 768, 12, tied=False)["lm_head"] == 38_597_376


@pytest.mark.parametrize("ffn", ["gelu", "relu", "swiglu", "geglu"])
@pytest.mark.parametrize("tied, qkv_bias", [(False, False), (True, True)])
def test_formula_matches_the_gpt_module(ffn, tied, qkv_bias):
    config = GPTConfig(vocab_size=37, context_length=11, n_embd=12, n_head=3, n_layer=2, ffn=ffn,
                       ffn_mult=3, tie_embeddings=tied, qkv_bias=qkv_bias)
    expected = GPT(config).param_breakdown()
    got = gpt_params(37, 11, 12, 2, ffn=ffn, ffn_mult=3, tied=tied, qkv_bias=qkv_bias)
    assert {k: got[k] for k in expected} == expected


def test_bytes_follow_the_stated_convention():
    r = gpt_cost(100, 16, 32, 4, 2)
    n = r["params"]["total"]
    assert r["bytes"]["fp32"] == {"weights": 4 * n, "with_grads": 8 * n, "with_adamw": 16 * n}
    assert r["bytes"]["bf16"] == {"weights": 2 * n, "with_grads": 4 * n, "with_adamw": 12 * n}
    assert "fp32 AdamW moments" in r["bytes"]["convention"]


def test_leading_terms_and_ratios_match_seed_001():
    t = leading_terms(50257, 1024, 256, batch=2, length=4)
    assert t["projection_ffn_macs"] == 12 * 2 * 4 * 256**2
    assert t["attention_pair_macs"] == 2 * 2 * 4**2 * 256
    assert t["lm_head_macs"] == 2 * 4 * 256 * 50257
    ratios = gpt_cost(50257, 1024, 256, 8, 6, batch=2, length=4)["ratio_when_width_doubles"]
    assert ratios == {"token_parameters": 2.0, "position_parameters": 2.0, "block_matrix_parameters": 4.0,
                      "projection_ffn_macs": 4.0, "attention_pair_macs": 2.0, "lm_head_macs": 2.0}


def test_gated_ffn_doubles_the_first_projection_in_the_mac_term():
    plain = leading_terms(100, 8, 64, 1, 8, ffn="gelu", ffn_mult=4)["projection_ffn_macs"]
    gated = leading_terms(100, 8, 64, 1, 8, ffn="swiglu", ffn_mult=4)["projection_ffn_macs"]
    assert plain == (4 + 2 * 4) * 8 * 64**2
    assert gated == (4 + 3 * 4) * 8 * 64**2


def test_head_split_like_seed_001():
    assert head_split(256, 8)["head_dim"] == 32
    assert head_split(48, 4)["head_dim"] == 12
    assert head_split(192, 4)["head_dim"] == 48
    bad = head_split(256, 7)
    assert bad["valid"] is False and bad["head_dim"] is None
    assert bad["valid_heads"] == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert gpt_cost(100, 16, 256, 7, 1)["head_split"]["valid"] is False  # reported, not refused


@pytest.mark.parametrize("kwargs", [dict(length=17), dict(ffn="tanh"), dict(ffn_mult=0),
                                    dict(ffn_mult=0.3), dict(batch=0)])
def test_gpt_cost_rejects_bad_values(kwargs):
    with pytest.raises(UserError):
        gpt_cost(100, 16, 32, 4, 2, **kwargs)


def test_reference_models_match_seed_000():
    rows = {r["model"]: r for r in reference_table()}
    assert rows["GPT-2 small"]["table"] == 38_597_376
    assert round(100 * rows["GPT-2 small"]["table_share"]) == 31
    assert rows["BERT-base"]["table"] == 23_440_896
    llama = rows["Llama-3-8B"]
    assert llama["table"] == 525_336_576
    assert llama["untied_pair"] == 1_050_673_152
    assert round(100 * llama["untied_pair_share"]) == 13
    assert round(100 * llama["tying_saves_share"], 1) == 6.5
    assert rows["GPT-3 175B"]["table"] == 617_558_016
    assert round(100 * rows["GPT-3 175B"]["table_share"], 2) == 0.35
    assert all(r["source"] for r in rows.values())


def test_lrn_cost_and_pip_sweep_read_one_sweep_to_the_same_bpb_by_width(tmp_path):
    """`lrn theory cost --sweep` and `lrn theory pip --sweep` share one reader (costs.bpb_series)."""
    import json

    from lrngpt.analysis.pip import sweep_best

    rows = [{"n_embd": w, "val_bpb": 1.0 + 1 / w + s / 1000, "seed": s, "steps": 300, "corpus": "stories:1MB"}
            for w in (8, 16, 32) for s in (0, 1)]
    rows += [{"n_embd": 64, "val_bpb": None}, {"n_embd": True, "val_bpb": 2.0}]
    (tmp_path / "summary.json").write_text(json.dumps({"rows": rows}))
    best = sweep_best(tmp_path)
    assert best["val_bpb"] == bpb_by_width(rows)
    assert bpb_by_width(rows) == {w: pytest.approx(1.0 + 1 / w + 0.0005) for w in (8, 16, 32)}
    assert best["best_width"] == 32 and best["steps"] == 300
