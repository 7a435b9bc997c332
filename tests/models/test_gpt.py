import itertools

import pytest
import torch
import torch.nn.functional as F

from lrngpt.errors import UserError
from lrngpt.models.gpt import (
    FFN_KINDS,
    GPT,
    NORM_POSITIONS,
    CausalSelfAttention,
    GPTConfig,
    manual_attention,
)

VARIANTS = list(itertools.product(FFN_KINDS, NORM_POSITIONS))


def tiny(**overrides) -> GPTConfig:
    kwargs = dict(vocab_size=37, context_length=16, n_embd=24, n_head=4, n_layer=2, dropout=0.1)
    return GPTConfig(**{**kwargs, **overrides})


def tiny_model(seed=0, **overrides) -> GPT:
    torch.manual_seed(seed)
    return GPT(tiny(**overrides)).eval()


def block_params(D, r, ffn, qkv_bias=False, bias=False):
    """Per-layer count written out independently of the module tree."""
    ffn_params = (3 if ffn in ("swiglu", "geglu") else 2) * r * D * D
    if bias:
        ffn_params += (2 * r * D if ffn in ("swiglu", "geglu") else r * D) + D
    attn = 3 * D * D + (3 * D if qkv_bias else 0) + D * D + (D if bias else 0)
    return 2 * 2 * D + attn + ffn_params


# ---- causality -------------------------------------------------------------------------------


@pytest.mark.parametrize("ffn,norm", VARIANTS)
def test_changing_later_tokens_leaves_earlier_logits_unchanged(ffn, norm):
    model = tiny_model(ffn=ffn, norm_position=norm)
    idx = torch.randint(0, 37, (2, 12))
    changed = idx.clone()
    changed[:, 7:] = (changed[:, 7:] + 5) % 37
    with torch.no_grad():
        a, _ = model(idx)
        b, _ = model(changed)
    torch.testing.assert_close(a[:, :7], b[:, :7], atol=1e-6, rtol=0)
    assert (a[:, 7:] - b[:, 7:]).abs().max() > 1e-3  # the later positions do see the change


@pytest.mark.parametrize("return_weights", [False, True], ids=["sdpa", "manual"])
def test_each_attention_path_ignores_later_positions(return_weights):
    torch.manual_seed(0)
    attn = CausalSelfAttention(tiny(dropout=0.0))
    x = torch.randn(2, 10, 24)
    changed = x.clone()
    changed[:, 6:] = torch.randn(2, 4, 24)
    with torch.no_grad():
        a = attn(x, return_weights=return_weights)
        b = attn(changed, return_weights=return_weights)
    a, b = (a[0], b[0]) if return_weights else (a, b)
    torch.testing.assert_close(a[:, :6], b[:, :6], atol=1e-6, rtol=0)
    assert (a[:, 6:] - b[:, 6:]).abs().max() > 1e-3


def test_manual_attention_weights_are_lower_triangular_rows_summing_to_one():
    torch.manual_seed(0)
    attn = CausalSelfAttention(tiny(dropout=0.0))
    _, weights = attn(torch.randn(2, 9, 24), return_weights=True)
    assert weights.shape == (2, 4, 9, 9)
    assert torch.all(weights.triu(diagonal=1) == 0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 4, 9))


def test_manual_attention_equals_sdpa():
    torch.manual_seed(0)
    attn = CausalSelfAttention(tiny(dropout=0.0))
    x = torch.randn(3, 11, 24)
    with torch.no_grad():
        fused = attn(x)
        manual, _ = attn(x, return_weights=True)
    torch.testing.assert_close(manual, fused, atol=1e-6, rtol=0)


def test_manual_attention_with_fewer_queries_sees_all_earlier_keys():
    # queries = last 3 of 7 positions: query i may see keys 0..4+i, the explicit-mask case of a KV cache
    torch.manual_seed(0)
    q, k, v = torch.randn(1, 2, 3, 8), torch.randn(1, 2, 7, 8), torch.randn(1, 2, 7, 8)
    y, weights = manual_attention(q, k, v)
    assert (weights[0, 0] > 0).sum(-1).tolist() == [5, 6, 7]
    full_q = torch.cat([torch.randn(1, 2, 4, 8), q], dim=2)
    expected = F.scaled_dot_product_attention(full_q, k, v, is_causal=True)[:, :, 4:]
    torch.testing.assert_close(y, expected, atol=1e-6, rtol=0)


@pytest.mark.parametrize("norm", NORM_POSITIONS)
def test_block_wires_layer_norms_as_its_norm_position_says(norm):
    block = tiny_model(dropout=0.0, norm_position=norm).blocks[0]
    with torch.no_grad():  # non-trivial norms, else LayerNorm(LayerNorm(x)) == LayerNorm(x) hides a miswiring
        for ln in (block.ln1, block.ln2):
            ln.weight.uniform_(0.5, 2.0)
            ln.bias.uniform_(-1.0, 1.0)
    x = torch.randn(2, 6, 24)
    with torch.no_grad():
        if norm == "pre":
            h = x + block.attn(block.ln1(x))
            expected = h + block.ffn(block.ln2(h))
        else:
            h = block.ln1(x + block.attn(x))
            expected = block.ln2(h + block.ffn(h))
        torch.testing.assert_close(block(x), expected)


# ---- embeddings, tying, parameter counts ------------------------------------------------------


def test_input_embedding_is_token_plus_position_rows():
    model = tiny_model()
    idx = torch.tensor([[2, 0, 2, 5]])
    out = model.embedding(idx)
    table, positions = model.token_embedding.weight, model.embedding.position.weight
    torch.testing.assert_close(out[0], table[[2, 0, 2, 5]] + positions[:4])
    assert out.shape == (1, 4, 24)


def test_tied_embeddings_share_storage_and_the_parameter_appears_once():
    model = tiny_model(tie_embeddings=True)
    table = model.token_embedding.weight
    assert model.lm_head.weight.data_ptr() == table.data_ptr()
    params = list(model.parameters())
    assert sum(p is table for p in params) == 1
    assert len(params) == len({id(p) for p in params})
    breakdown = model.param_breakdown()
    assert breakdown["lm_head"] == 0
    assert breakdown["total"] == sum(p.numel() for p in params)
    assert breakdown["total"] == sum(v for k, v in breakdown.items() if k != "total")


def test_untied_lm_head_is_a_separate_table():
    model = tiny_model()
    assert model.lm_head.weight.data_ptr() != model.token_embedding.weight.data_ptr()
    assert model.param_breakdown()["lm_head"] == 37 * 24


@pytest.mark.parametrize("ffn", FFN_KINDS)
def test_param_breakdown_matches_the_analytic_formula(ffn):
    model = tiny_model(ffn=ffn, ffn_mult=3)
    assert model.param_breakdown() == {
        "total": 37 * 24 + 16 * 24 + 2 * block_params(24, 3, ffn) + 2 * 24 + 37 * 24,
        "token_embedding": 37 * 24,
        "position_embedding": 16 * 24,
        "blocks": 2 * block_params(24, 3, ffn) + 2 * 24,
        "lm_head": 37 * 24,
    }


def test_gpt2_small_shape_breakdown():
    with torch.device("meta"):
        model = GPT(GPTConfig(50257, 1024, n_embd=768, n_head=12, n_layer=12, tie_embeddings=True))
        gpt2 = GPT(
            GPTConfig(
                50257, 1024, n_embd=768, n_head=12, n_layer=12, tie_embeddings=True, qkv_bias=True, bias=True
            )
        )
    breakdown = model.param_breakdown()
    assert breakdown["token_embedding"] == 38_597_376
    assert breakdown["position_embedding"] == 786_432
    assert breakdown["lm_head"] == 0
    assert breakdown["blocks"] == 12 * block_params(768, 4, "gelu") + 2 * 768
    # with GPT-2's biases the model has the published 124,439,808 parameters
    assert gpt2.param_breakdown()["total"] == 124_439_808


def test_gated_ffn_first_projection_has_width_2rD():
    model = tiny_model(ffn="swiglu", ffn_mult=3)
    ffn = model.blocks[0].ffn
    assert ffn.up.weight.shape == (2 * 3 * 24, 24)
    assert ffn.down.weight.shape == (24, 3 * 24)
    assert tiny_model(ffn="relu", ffn_mult=3).blocks[0].ffn.up.weight.shape == (3 * 24, 24)


def test_all_linear_and_embedding_weights_start_at_init_std_and_biases_at_zero():
    torch.manual_seed(0)
    model = GPT(GPTConfig(500, 64, n_embd=128, n_head=4, n_layer=1, init_std=0.05, bias=True))
    for name, p in model.named_parameters():
        if "ln" in name:
            continue
        if name.endswith("bias"):
            assert torch.all(p == 0), name
        else:
            assert abs(p.std().item() - 0.05) < 0.005, name


# ---- config validation -------------------------------------------------------------------------


def test_head_count_error_lists_the_valid_head_counts():
    with pytest.raises(UserError) as err:
        GPTConfig(300, 32, n_embd=256, n_head=7)
    assert str(err.value) == (
        "n_embd 256 is not divisible by n_head 7; valid head counts for 256: 1, 2, 4, 8, 16, 32, 64, 128, 256"
    )


@pytest.mark.parametrize(
    "overrides,needle",
    [
        ({"ffn": "swish"}, "valid values: gelu, relu, swiglu, geglu"),
        ({"norm_position": "middle"}, "valid values: pre, post"),
        ({"n_layer": 0}, "n_layer must be at least 1"),
        ({"vocab_size": -3}, "vocab_size must be at least 1"),
        ({"n_embd": "48"}, "n_embd must be an integer"),
        ({"dropout": 1.0}, "dropout must be in [0, 1)"),
        ({"dropout": -0.1}, "dropout must be in [0, 1)"),
        ({"tie_embeddings": "false"}, "tie_embeddings must be true or false"),
        ({"init_std": 0}, "init_std must be a positive number"),
    ],
)
def test_config_rejects_bad_values_with_a_message(overrides, needle):
    with pytest.raises(UserError) as err:
        tiny(**overrides)
    assert needle in str(err.value)


def test_config_defaults_match_the_spec():
    c = GPTConfig(300, 32)
    assert (c.n_embd, c.n_head, c.n_layer, c.dropout, c.ffn, c.ffn_mult) == (256, 8, 6, 0.1, "gelu", 4)
    assert (c.norm_position, c.qkv_bias, c.tie_embeddings, c.init_std) == ("pre", False, False, 0.02)
    assert c.head_dim == 32


# ---- forward, loss, dropout --------------------------------------------------------------------


def test_sequence_longer_than_context_is_a_clear_error():
    model = GPT(tiny(context_length=32))
    with pytest.raises(ValueError, match=r"^sequence length 40 exceeds context_length 32$") as err:
        model(torch.zeros(1, 40, dtype=torch.long))
    assert isinstance(err.value, UserError)
    logits, loss = model(torch.zeros(1, 32, dtype=torch.long))  # exactly the context is fine
    assert logits.shape == (1, 32, 37) and loss is None


def test_loss_equals_independent_log_softmax_nll_ignoring_minus_one():
    model = tiny_model()
    torch.manual_seed(1)
    idx = torch.randint(0, 37, (3, 10))
    targets = torch.randint(0, 37, (3, 10))
    targets[0, :4] = -1
    targets[2, 9] = -1
    logits, loss = model(idx, targets)
    assert logits.dtype == torch.float32 and logits.shape == (3, 10, 37)
    logp = torch.log_softmax(logits.double(), dim=-1)
    kept = targets != -1
    nll = -logp[kept].gather(1, targets[kept].unsqueeze(1)).mean()
    assert kept.sum() == 25
    assert loss.item() == pytest.approx(nll.item(), rel=1e-6)


def test_dropout_is_active_in_train_mode_and_off_in_eval_mode():
    model = tiny_model(dropout=0.5)
    idx = torch.randint(0, 37, (2, 8))
    model.train()
    a, _ = model(idx)
    b, _ = model(idx)
    assert (a - b).abs().max() > 1e-3
    model.eval()
    c, _ = model(idx)
    d, _ = model(idx)
    assert torch.equal(c, d)


def test_every_parameter_gets_a_gradient_and_a_few_steps_lower_the_loss():
    model = tiny_model(dropout=0.0).train()
    idx = torch.randint(0, 37, (4, 16))
    targets = torch.roll(idx, -1, dims=1)
    _, first = model(idx, targets)
    first.backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for _ in range(20):
        opt.zero_grad()
        _, loss = model(idx, targets)
        loss.backward()
        opt.step()
    assert loss.item() < first.item() - 1.0


# ---- KV cache ---------------------------------------------------------------------------------


@pytest.mark.parametrize("ffn,norm", VARIANTS)
def test_kv_cache_logits_equal_full_forward_logits(ffn, norm):
    model = tiny_model(ffn=ffn, norm_position=norm, tie_embeddings=norm == "post")
    idx = torch.randint(0, 37, (2, 16))
    with torch.no_grad():
        full, _ = model(idx)
    cache = model.init_cache(batch_size=2, max_len=16)
    steps = [model.forward_step(idx[:, :5], cache)]  # the prompt
    steps += [model.forward_step(idx[:, t : t + 1], cache) for t in range(5, 12)]  # one by one
    steps.append(model.forward_step(idx[:, 12:], cache))  # a chunk after cached tokens
    assert cache.pos == 16
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-5, rtol=0)


def test_forward_step_past_the_context_raises_value_error():
    model = tiny_model()
    cache = model.init_cache(batch_size=1, max_len=100)
    assert cache.max_len == 16  # never longer than the position table
    model.forward_step(torch.zeros(1, 15, dtype=torch.long), cache)
    model.forward_step(torch.zeros(1, 1, dtype=torch.long), cache)
    with pytest.raises(ValueError, match="sequence length 17 exceeds context_length 16"):
        model.forward_step(torch.zeros(1, 1, dtype=torch.long), cache)
    assert cache.pos == 16  # a refused step leaves the cache as it was


def test_forward_step_past_a_short_cache_names_max_len():
    model = tiny_model()
    cache = model.init_cache(batch_size=1, max_len=4)
    with pytest.raises(ValueError, match="exceeds the KV cache's max_len 4"):
        model.forward_step(torch.zeros(1, 5, dtype=torch.long), cache)


@pytest.mark.parametrize("ffn", ["gelu", "swiglu"])
def test_param_breakdown_counts_the_built_model_without_initialising_it(ffn):
    """A plan counts a GPT's parameters hundreds of times: on the meta device with nn.init's initialisers as
    no-ops (which would load torch's compiler, seconds on a busy machine); the count is the real model's, and
    the initialisers are torch's own again afterwards."""
    import subprocess
    import sys

    import lrngpt
    from lrngpt.models.build import build_model, param_breakdown

    cfg = lrngpt.config("gpt-default", **{"model.n_layer": 3, "model.n_embd": 24, "model.n_head": 2,
                                          "model.ffn": ffn})
    assert param_breakdown(cfg.model_type, cfg.model) == build_model(cfg.model_type, cfg.model).param_breakdown()
    assert torch.nn.init.normal_(torch.zeros(1000), std=1.0).abs().sum() > 0  # restored
    code = ("import sys, lrngpt; from lrngpt.models.build import param_breakdown; "
            "c = lrngpt.config('gpt-default', **{'model.n_layer': 13, 'model.n_embd': 14, 'model.n_head': 2}); "
            "param_breakdown(c.model_type, c.model); print('torch._dynamo' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() \
        == "False"
