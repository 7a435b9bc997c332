"""Sampling: the KV cache changes speed, never tokens; filters; seeds; EOT; greedy decoding at temperature 0,
equal to transformers' greedy generate on an exported GPT; bad values."""

from __future__ import annotations

import math

import pytest
import torch

from lrngpt.errors import UserError
from lrngpt.inference.sample import SamplingConfig, filter_logits, generate
from lrngpt.models.gpt import GPT, GPTConfig
from lrngpt.models.mlp import MLPLM, MLPConfig

V = 41


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """Tiny models: one intra-op thread is faster, and far faster on a busy 2-core machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def gpt(context: int = 16, **overrides) -> GPT:
    # init_std 0.3 gives peaked, position-dependent distributions, so a wrong cache shows as other tokens
    torch.manual_seed(0)
    kwargs = dict(vocab_size=V, context_length=context, n_embd=24, n_head=4, n_layer=2, dropout=0.1, init_std=0.3)
    return GPT(GPTConfig(**{**kwargs, **overrides})).eval()


def mlp(block_size: int = 3) -> MLPLM:
    torch.manual_seed(0)
    return MLPLM(MLPConfig(vocab_size=V, pad_id=0, block_size=block_size, n_embd=8, n_hidden=32)).eval()


class CallCounter:
    """Counts the model's full forwards and cached steps, to prove which path generate took."""

    def __init__(self, model, monkeypatch):
        self.full = self.cached = 0
        forward, step = model.forward, model.forward_step

        def counted_forward(*args, **kwargs):
            self.full += 1
            return forward(*args, **kwargs)

        def counted_step(*args, **kwargs):
            self.cached += 1
            return step(*args, **kwargs)

        monkeypatch.setattr(model, "forward", counted_forward)
        monkeypatch.setattr(model, "forward_step", counted_step)


# ---- KV cache: the same tokens as the no-cache path ------------------------------------------------


@pytest.mark.parametrize("norm", ["pre", "post"])
@pytest.mark.parametrize("sampling", [dict(), dict(temperature=0.7, top_k=10), dict(top_p=0.9, temperature=1.3)],
                         ids=["plain", "top_k", "top_p"])
def test_cache_gives_the_same_tokens_as_no_cache_within_the_context(norm, sampling):
    model = gpt(norm_position=norm, tie_embeddings=norm == "post")
    prompt = [3, 17, 5]
    for seed in range(3):
        cfg = SamplingConfig(max_new_tokens=12, seed=seed, **sampling)  # 3 + 12 <= context 16
        cached = generate(model, prompt, cfg, use_cache=True)
        plain = generate(model, prompt, cfg, use_cache=False)
        assert cached == plain
        assert len(cached) == 12 and len(set(cached)) > 3  # a real sample, not one repeated token


def test_cache_gives_the_same_tokens_past_the_context_length():
    model = gpt(context=16)
    prompt = [7, 1, 30, 2, 9]
    for seed in range(3):
        cfg = SamplingConfig(max_new_tokens=40, seed=seed)  # 5 + 40 > 16: the window slides 29 times
        cached = generate(model, prompt, cfg, use_cache=True)
        assert cached == generate(model, prompt, cfg, use_cache=False)
        assert len(cached) == 40 and len(set(cached)) > 5


def test_a_prompt_longer_than_the_context_is_cropped_alike_on_both_paths():
    model = gpt(context=16)
    prompt = [(7 * i) % V for i in range(25)]
    cfg = SamplingConfig(max_new_tokens=10, seed=4)
    cached = generate(model, prompt, cfg, use_cache=True)
    assert cached == generate(model, prompt, cfg, use_cache=False)
    # only the last 16 prompt tokens matter
    assert cached == generate(model, [1, 2, 3] + prompt[-16:], cfg, use_cache=True)


def test_the_cache_path_decodes_one_position_per_step_within_the_context(monkeypatch):
    model = gpt(context=16)
    calls = CallCounter(model, monkeypatch)
    generate(model, [3, 17, 5], SamplingConfig(max_new_tokens=12), use_cache=True)
    assert (calls.full, calls.cached) == (0, 12)  # one prefill of the prompt, then 11 single tokens
    calls.cached = 0
    generate(model, [3, 17, 5], SamplingConfig(max_new_tokens=12), use_cache=False)
    assert (calls.full, calls.cached) == (12, 0)


def test_cached_logits_equal_the_full_forward_logits_step_by_step():
    model = gpt(context=16)
    ids = torch.tensor([[4, 8, 15, 16, 23, 42 % V, 1, 2, 3, 5, 8, 13]])
    with torch.no_grad():
        full, _ = model(ids)
    cache = model.init_cache(1, 16)
    stepped = [model.forward_step(ids[:, :4], cache)[:, -1]]
    stepped += [model.forward_step(ids[:, t : t + 1], cache)[:, -1] for t in range(4, 12)]
    torch.testing.assert_close(torch.stack(stepped, 1), full[:, 3:], atol=1e-5, rtol=0)


# ---- the MLP: no cache, a fixed window -----------------------------------------------------------


def test_mlp_next_token_depends_only_on_its_last_block_size_tokens():
    model = mlp(block_size=3)
    cfg = SamplingConfig(max_new_tokens=20, seed=1)
    tail = [9, 4, 33]
    a = generate(model, [1, 2, 3, 4, 5] + tail, cfg)
    b = generate(model, [40, 39] + tail, cfg)
    assert a == b == generate(model, [1, 2, 3, 4, 5] + tail, cfg, use_cache=False)
    with torch.no_grad():
        la = model(torch.tensor([[1, 2, 3, 4, 5] + tail]))[0][0, -1]
        lb = model(torch.tensor([[40, 39] + tail]))[0][0, -1]
        newest = model(torch.tensor([[40, 39, 9, 4, 34]]))[0][0, -1]
        oldest = model(torch.tensor([[40, 39, 8, 4, 33]]))[0][0, -1]
    assert torch.equal(la, lb)  # the 4th token from the end and earlier ones are not seen
    assert not torch.allclose(la, newest) and not torch.allclose(la, oldest)  # the last 3 all are


# ---- filters -----------------------------------------------------------------------------------


def test_top_k_keeps_exactly_the_k_largest_logits():
    torch.manual_seed(0)
    logits = torch.randn(3, 50)
    out = filter_logits(logits, SamplingConfig(top_k=7))
    kept = torch.isfinite(out)
    assert kept.sum(-1).tolist() == [7, 7, 7]
    top = torch.topk(logits, 7, dim=-1).indices
    assert torch.all(kept.gather(1, top))
    assert torch.equal(out[kept], logits[kept])  # the kept logits are unchanged
    assert torch.isfinite(filter_logits(logits, SamplingConfig(top_k=50))).all()
    assert torch.isfinite(filter_logits(logits, SamplingConfig(top_k=500))).all()


# probabilities in a shuffled vocabulary order: sorted they are 0.5, 0.2, 0.15, 0.1, 0.05
PROBS = torch.tensor([0.1, 0.5, 0.05, 0.2, 0.15])


@pytest.mark.parametrize("p,kept", [(0.3, {1}), (0.6, {1, 3}), (0.8, {1, 3, 4}), (0.9, {1, 3, 4, 0}),
                                    (0.97, {1, 3, 4, 0, 2}), (1.0, {1, 3, 4, 0, 2})])
def test_top_p_keeps_the_smallest_prefix_whose_mass_reaches_p(p, kept):
    out = filter_logits(PROBS.log().unsqueeze(0), SamplingConfig(top_p=p))[0]
    assert {i for i in range(5) if math.isfinite(out[i])} == kept
    renormalised = torch.softmax(out, -1)
    mass = PROBS[sorted(kept)].sum()
    for i in kept:
        assert renormalised[i].item() == pytest.approx(PROBS[i].item() / mass.item(), rel=1e-5)


def test_temperature_divides_the_logits():
    torch.manual_seed(0)
    logits = torch.randn(2, 30)
    assert torch.equal(filter_logits(logits, SamplingConfig(temperature=2.0)), logits / 2.0)
    assert torch.equal(filter_logits(logits, SamplingConfig(temperature=1.0)), logits)

    def entropy(t):
        p = torch.softmax(filter_logits(logits, SamplingConfig(temperature=t)), -1)
        return -(p * p.log()).sum(-1)

    assert torch.all(entropy(0.5) < entropy(1.0)) and torch.all(entropy(1.0) < entropy(2.0))


def test_top_k_applies_to_temperature_scaled_logits_and_then_top_p():
    logits = PROBS.log().unsqueeze(0)
    out = filter_logits(logits, SamplingConfig(top_k=3, top_p=0.6))[0]
    assert {i for i in range(5) if math.isfinite(out[i])} == {1, 3}


# ---- seeds and stopping ------------------------------------------------------------------------


def test_same_seed_same_tokens_different_seed_different_tokens():
    model = gpt()
    prompt = [3, 17, 5]
    a = generate(model, prompt, SamplingConfig(max_new_tokens=12, seed=11))
    assert a == generate(model, prompt, SamplingConfig(max_new_tokens=12, seed=11))
    assert a != generate(model, prompt, SamplingConfig(max_new_tokens=12, seed=12))


def test_top_k_one_is_greedy_and_ignores_the_seed():
    model = gpt()
    a = generate(model, [3, 17, 5], SamplingConfig(max_new_tokens=10, top_k=1, seed=0))
    assert a == generate(model, [3, 17, 5], SamplingConfig(max_new_tokens=10, top_k=1, seed=99))
    ids = [3, 17, 5]
    with torch.no_grad():
        for token in a:
            assert token == int(model(torch.tensor([ids]))[0][0, -1].argmax())
            ids.append(token)


@pytest.mark.parametrize("use_cache", [True, False], ids=["kv-cache", "no-cache"])
def test_temperature_zero_takes_the_highest_score_at_every_step_and_ignores_the_seed(use_cache):
    model = gpt()
    prompt = [3, 17, 5]
    greedy = [generate(model, prompt, SamplingConfig(max_new_tokens=30, temperature=0, seed=s), use_cache=use_cache)
              for s in range(3)]
    assert greedy[0] == greedy[1] == greedy[2]
    ids = list(prompt)  # the argmax of the full forward's last logits, one token at a time
    for _ in range(30):  # 3 + 30 > context 16: the window slides too
        with torch.no_grad():
            ids.append(int(model(torch.tensor([ids[-16:]]))[0][0, -1].argmax()))
    assert greedy[0] == ids[3:]
    assert len(set(greedy[0])) > 2  # not one token repeated: the check could tell a wrong step


def test_generation_stops_at_the_first_eot_and_returns_it_last():
    model = gpt()
    cfg = SamplingConfig(max_new_tokens=30, seed=2)
    full = generate(model, [3, 17, 5], cfg, eot_id=None)
    eot = full[6]
    first = full.index(eot)
    assert first < len(full) - 1
    assert generate(model, [3, 17, 5], cfg, eot_id=eot) == full[: first + 1]
    no_stop = SamplingConfig(max_new_tokens=30, seed=2, stop_at_eot=False)
    assert generate(model, [3, 17, 5], no_stop, eot_id=eot) == full


def test_zero_new_tokens_returns_nothing():
    assert generate(gpt(), [3], SamplingConfig(max_new_tokens=0)) == []


# ---- bad values ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs,needle", [
    (dict(temperature=-1), "temperature must be 0 (greedy: the most likely token) or a positive number"),
    (dict(temperature=-1e-300), "temperature must be 0 (greedy"),
    (dict(temperature=float("nan")), "temperature must be 0 (greedy"),
    (dict(temperature=float("inf")), "temperature must be 0 (greedy"),
    (dict(top_k=0), "top_k must be at least 1"),
    (dict(top_p=0), "top_p must be in (0, 1]"),
    (dict(top_p=1.5), "top_p must be in (0, 1]"),
    (dict(top_p=float("nan")), "top_p must be in (0, 1]"),
    (dict(max_new_tokens=-1), "max_new_tokens must not be negative"),
])
def test_bad_sampling_values_raise_a_user_error(kwargs, needle):
    with pytest.raises(UserError) as err:
        SamplingConfig(**kwargs)
    assert needle in str(err.value)


def test_an_empty_prompt_is_a_user_error():
    with pytest.raises(UserError, match="prompt is empty"):
        generate(gpt(), [], SamplingConfig())


# ---- greedy: lrn sample --temperature 0 against transformers on an export ---------------------------


def test_lrn_sample_at_temperature_zero_equals_transformers_greedy_generate_on_the_export(
        text_corpus, trained, tmp_path, capsys):
    """The CLI and the API at temperature 0, through the KV cache and without it, give the tokens of
    `generate(do_sample=False)` on the Hugging Face export of the same run (inside its context)."""
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("safetensors")
    import json

    import lrngpt
    from lrngpt.cli.main import main
    from lrngpt.runconfig.schema import PRESET_DIR

    run_dir = trained(PRESET_DIR / "cpu.json", "data.vocab_size=300", "model.n_embd=16", "model.n_head=2",
                      "model.n_layer=2", "model.context_length=32", "train.batch_size=4", "train.steps=20",
                      "train.eval_every=10", "train.eval_tokens=500", "train.train_eval_tokens=500",
                      corpus=text_corpus, name="greedy")
    assert main(["export", str(run_dir), "--format", "hf", "--out", str(tmp_path / "hf")]) == 0
    model = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "hf").eval()
    tok = transformers.AutoTokenizer.from_pretrained(tmp_path / "hf")
    prompt = "the cat saw"
    ids = tok(prompt, return_tensors="pt").input_ids
    new = 32 - ids.shape[1]  # the whole context: transformers cannot go past it
    hf = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new, do_sample=False,
                        pad_token_id=tok.eos_token_id)[0, ids.shape[1]:].tolist()
    capsys.readouterr()
    for cache in ([], ["--no-cache"]):
        argv = ["sample", str(run_dir), "--prompt", prompt, "--temperature", "0", "--max-new-tokens", str(new),
                "--no-stop", "--seed", "7", "--json", *cache]
        assert main(argv) == 0
        (sample,) = json.loads(capsys.readouterr().out)["samples"]
        assert sample["completion"] == tok.decode([t for t in hf if t != tok.eos_token_id]), cache
        assert sample["tokens"] == len(hf) == new
    api = lrngpt.load(run_dir).sample(prompt, max_new_tokens=new, temperature=0, seed=3)
    eot = hf.index(tok.eos_token_id) if tok.eos_token_id in hf else len(hf)  # the API stops at <|endoftext|>
    assert api == prompt + tok.decode(hf[:eot])
    assert len(set(hf)) > 2  # a real continuation, not one token repeated
