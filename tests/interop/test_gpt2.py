"""GPT-2 import: a small random Hugging Face GPT2LMHeadModel becomes an lrn run that computes
the same logits and the same greedy text; broken directories fail with one clear message."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F

from lrngpt.cli.main import main
from lrngpt.errors import UserError
from lrngpt.inference.sample import SamplingConfig, generate
from lrngpt.interop.gpt2 import convert_gpt2
from lrngpt.runconfig.schema import from_dict
from lrngpt.store.layout import BEST, LAST
from lrngpt.store.rundir import load_run
from lrngpt.tokenizer.bpe import Tokenizer

transformers = pytest.importorskip("transformers")
pytest.importorskip("safetensors")

SENTENCES = [
    "Once upon a time the little cat sat on the mat.",
    "Lily saw the big red ball in the park and she was happy.",
    "Tom said, \"Let us play with the toy boat by the river.\"",
    "The dog ran to the tree, and the bird sang a song.",
]
PROMPT = "Once upon a time the"
LN_EPS = 1e-6  # not GPT-2's 1e-5, so a dropped layer_norm_epsilon shows


@pytest.fixture(scope="module")
def hf(tmp_path_factory):
    """A random GPT-2 (2 layers, D 32, 2 heads, context 64) saved with save_pretrained, plus its tokenizer."""
    tok = Tokenizer.train(SENTENCES * 20, 300)
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=tok.vocab_size, n_positions=64, n_embd=32, n_layer=2, n_head=2,
                                     layer_norm_epsilon=LN_EPS, bos_token_id=tok.eot_id, eos_token_id=tok.eot_id)
    model = transformers.GPT2LMHeadModel(config)
    with torch.no_grad():  # HF starts biases at 0 and LayerNorm gains at 1: move them so a lost bias shows
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    model.eval()
    d = tmp_path_factory.mktemp("hf") / "gpt2-tiny"
    model.save_pretrained(d)
    tok.save(d / "tokenizer.json")
    return SimpleNamespace(dir=d, model=model, tok=tok)


def variant(src: Path, dst: Path, drop=(), files: dict | None = None) -> Path:
    """A copy of the HF directory without `drop` and with extra `files` {name: bytes|dict|callable(path)}."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(*drop) if drop else None)
    for name, content in (files or {}).items():
        if callable(content):
            content(dst / name)
        elif isinstance(content, dict):
            (dst / name).write_text(json.dumps(content))
        else:
            (dst / name).write_bytes(content)
    return dst


def original_style_bin(model) -> callable:
    """A pytorch_model.bin laid out like OpenAI's GPT-2 upload: no `transformer.` prefix, no lm_head,
    and the per-layer causal-mask buffers `h.N.attn.bias`."""
    def write(path):
        sd = {k.removeprefix("transformer."): v for k, v in model.state_dict().items() if k != "lm_head.weight"}
        for i in range(model.config.n_layer):
            sd[f"h.{i}.attn.bias"] = torch.tril(torch.ones(1, 1, 64, 64))
        torch.save(sd, path)
    return write


def hf_logits(hf, ids):
    with torch.no_grad():
        return hf.model(torch.tensor([ids])).logits[0]


def our_logits(run_dir, ids):
    run = load_run(run_dir)
    with torch.no_grad():
        return run.model(torch.tensor([ids]))[0][0]


def hf_greedy(hf, ids, n):
    out = hf.model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                            max_new_tokens=n, do_sample=False, eos_token_id=hf.tok.eot_id,
                            pad_token_id=hf.tok.eot_id)
    return out[0, len(ids):].tolist()


# ---- parity with Hugging Face ------------------------------------------------------------------

def test_imported_safetensors_run_gives_hf_logits(hf, tmp_path):
    r = convert_gpt2(hf.dir, tmp_path / "run")
    assert (r["weights"], r["tokenizer"]) == ("model.safetensors", "tokenizer.json")
    ids = hf.tok.encode(" ".join(SENTENCES))[:64]
    assert len(ids) == 64  # the whole context, so every position row is used
    ours, theirs = our_logits(tmp_path / "run", ids), hf_logits(hf, ids)
    assert ours.shape == theirs.shape == (64, hf.tok.vocab_size)
    assert (ours - theirs).abs().max().item() < 1e-5


def test_original_style_pytorch_bin_imports_to_the_same_logits(hf, tmp_path):
    src = variant(hf.dir, tmp_path / "bin", drop=["model.safetensors"],
                  files={"pytorch_model.bin": original_style_bin(hf.model)})
    r = convert_gpt2(src, tmp_path / "run")
    assert r["weights"] == "pytorch_model.bin"
    ids = hf.tok.encode(PROMPT)
    assert (our_logits(tmp_path / "run", ids) - hf_logits(hf, ids)).abs().max().item() < 1e-5


def test_sharded_safetensors_import_to_the_same_logits(hf, tmp_path):
    src = tmp_path / "sharded"
    hf.model.save_pretrained(src, max_shard_size="20KB")
    shutil.copy(hf.dir / "tokenizer.json", src)
    assert len(list(src.glob("model-*.safetensors"))) > 1
    assert convert_gpt2(src, tmp_path / "run")["weights"] == "model.safetensors.index.json"
    ids = hf.tok.encode(PROMPT)
    assert (our_logits(tmp_path / "run", ids) - hf_logits(hf, ids)).abs().max().item() < 1e-5


def test_greedy_continuation_equals_hf_generate(hf, tmp_path):
    convert_gpt2(hf.dir, tmp_path / "run")
    run = load_run(tmp_path / "run")
    ids = hf.tok.encode(PROMPT)
    for use_cache in (True, False):
        ours = generate(run.model, ids, SamplingConfig(max_new_tokens=24, top_k=1), eot_id=run.tokenizer.eot_id,
                        use_cache=use_cache)
        assert ours == hf_greedy(hf, ids, 24)
    assert len(ours) >= 2


def test_vocab_json_and_merges_txt_give_the_same_tokenizer(hf, tmp_path):
    model = json.loads(hf.tok.to_str())["model"]
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    src = variant(hf.dir, tmp_path / "vm", drop=["tokenizer.json"], files={
        "vocab.json": model["vocab"],
        "merges.txt": ("#version: 0.2\n" + "\n".join(merges) + "\n").encode()})
    r = convert_gpt2(src, tmp_path / "run")
    assert r["tokenizer"] == "vocab.json+merges.txt"
    tok = load_run(tmp_path / "run").tokenizer
    assert (tok.vocab_size, tok.eot_id) == (hf.tok.vocab_size, hf.tok.eot_id)
    for text in [*SENTENCES, "unseen wörds 안녕 🙂 <|endoftext|>", " the  the\n\tthe"]:
        assert tok.encode(text) == hf.tok.encode(text)
        assert tok.decode(tok.encode(text)) == text
    assert (tok.token_bytes == hf.tok.token_bytes).all()


# ---- the run directory -------------------------------------------------------------------------

def test_run_directory_holds_config_tokenizer_and_a_loadable_checkpoint(hf, tmp_path):
    out = tmp_path / "run"
    convert_gpt2(hf.dir, out)
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["ckpt_last.pt", "config.json", "tokenizer.json"]
    assert json.loads((out / ".lrn-output").read_text())["kind"] == "run"  # the record: lrn made this run
    cfg = from_dict(json.loads((out / "config.json").read_text()))
    m = cfg.model
    assert cfg.model_type == "gpt" and cfg.data.vocab_size == hf.tok.vocab_size
    assert (m.context_length, m.n_embd, m.n_head, m.n_layer, m.ffn_mult) == (64, 32, 2, 2, 4)
    assert (m.tie_embeddings, m.qkv_bias, m.bias, m.gelu_approximate, m.norm_position) == (
        True, True, True, "tanh", "pre")
    assert m.layer_norm_eps == LN_EPS and m.dropout == 0.1 and cfg.train.seq_len == 64
    ckpt = torch.load(out / LAST, weights_only=True)
    assert (ckpt["step"], ckpt["optimizer"], ckpt["data_key"], ckpt["source"]) == (0, None, None, "gpt2-import")
    assert ckpt["tokenizer_hash"] == hf.tok.hash == Tokenizer.load(out).hash
    assert ckpt["config"] == cfg.to_dict()
    run = load_run(out)
    assert run.model.lm_head.weight is run.model.token_embedding.weight
    # the table we study is GPT-2's wte, row for row
    assert torch.equal(run.model.token_embedding.weight, hf.model.transformer.wte.weight)
    n_hf = sum(p.numel() for p in hf.model.parameters())
    assert run.model.param_breakdown()["total"] == n_hf


def test_existing_run_is_refused_without_force_and_replaced_with_it(hf, tmp_path):
    out = tmp_path / "run"
    convert_gpt2(hf.dir, out)
    from lrngpt.core.ownership import record_existing

    (out / BEST).write_bytes(b"an older run's best checkpoint")
    record_existing(out / BEST, "run file")  # as the earlier run's writer records it
    before = (out / LAST).read_bytes()
    with pytest.raises(UserError, match="already holds a run.*force"):
        convert_gpt2(hf.dir, out)
    assert (out / LAST).read_bytes() == before and (out / BEST).exists()
    convert_gpt2(hf.dir, out, force=True)
    assert not (out / BEST).exists()  # `--checkpoint best` must not find the old run's weights
    load_run(out, "best")


def test_non_empty_directory_without_a_run_is_refused(hf, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="lrn did not write"):
        convert_gpt2(hf.dir, tmp_path)


# ---- directories that are not GPT-2 ------------------------------------------------------------

def broken_dirs(hf, tmp_path):
    config = json.loads((hf.dir / "config.json").read_text())
    yield "no config.json", variant(hf.dir, tmp_path / "a", drop=["config.json"]), "has no config.json"
    yield "bert", variant(hf.dir, tmp_path / "b", files={"config.json": {**config, "model_type": "bert"}}), \
        "model_type 'bert', not 'gpt2'"
    yield "no weights", variant(hf.dir, tmp_path / "c", drop=["model.safetensors"]), \
        "has no model.safetensors or pytorch_model.bin"
    yield "wider config", variant(hf.dir, tmp_path / "d", files={"config.json": {**config, "n_embd": 64}}), \
        r"'transformer.wte.weight' has shape \(\d+, 32\), but config.json implies \(\d+, 64\)"
    yield "more layers", variant(hf.dir, tmp_path / "e", files={"config.json": {**config, "n_layer": 3}}), \
        r"lack 'h.2.ln_1.weight' \(and 11 more\) that config.json implies \(n_layer 3\)"
    yield "no tokenizer", variant(hf.dir, tmp_path / "f", drop=["tokenizer.json"]), \
        "no tokenizer.json and no vocab.json \\+ merges.txt"
    yield "cross attention", variant(hf.dir, tmp_path / "g", files={
        "config.json": {**config, "add_cross_attention": True}}), "add_cross_attention=true"
    yield "foreign tokenizer", variant(hf.dir, tmp_path / "i", files={
        "config.json": {**config, "vocab_size": config["vocab_size"] + 10}}), \
        rf"tokenizer has {hf.tok.vocab_size} tokens but config.json's vocab_size is {hf.tok.vocab_size + 10}"
    yield "truncated weights", variant(hf.dir, tmp_path / "h", files={"model.safetensors": b"\x08\x00"}), \
        "cannot be read as safetensors"


def test_directories_that_are_not_gpt2_fail_with_one_clear_line(hf, tmp_path):
    cases = list(broken_dirs(hf, tmp_path))
    assert len(cases) == 9
    for what, src, message in cases:
        out = tmp_path / f"out-{what}"
        with pytest.raises(UserError, match=message) as e:
            convert_gpt2(src, out)
        assert "\n" not in str(e.value), what
        assert not out.exists(), what  # nothing written


def test_without_safetensors_package_it_says_how_to_fix_or_uses_the_bin(hf, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors", None)  # `import safetensors` now fails
    monkeypatch.setitem(sys.modules, "safetensors.torch", None)
    with pytest.raises(UserError, match=r"pip install safetensors.*pytorch_model.bin"):
        convert_gpt2(hf.dir, tmp_path / "a")
    both = variant(hf.dir, tmp_path / "both", files={"pytorch_model.bin": original_style_bin(hf.model)})
    assert convert_gpt2(both, tmp_path / "b")["weights"] == "pytorch_model.bin"


# ---- command line ------------------------------------------------------------------------------

def test_cli_import_then_sample_and_embed_neighbors(hf, tmp_path, capsys):
    out = str(tmp_path / "run")
    assert main(["import-gpt2", str(hf.dir), "--out", out, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["params"]["total"] == sum(p.numel() for p in hf.model.parameters())

    assert main(["sample", out, "--prompt", PROMPT, "--top-k", "1", "--max-new-tokens", "20", "--json"]) == 0
    sample = json.loads(capsys.readouterr().out)["samples"][0]
    expected = [t for t in hf_greedy(hf, hf.tok.encode(PROMPT), 20) if t != hf.tok.eot_id]
    assert sample["completion"] == hf.tok.decode(expected)

    assert main(["embed", "neighbors", out, "--token", " the", "-k", "5", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)["results"][0]
    (the,) = hf.tok.encode(" the")
    assert [t["id"] for t in result["tokens"]] == [the]
    wte = hf.model.transformer.wte.weight.detach()
    cos = F.normalize(wte, dim=1) @ F.normalize(wte[the], dim=0)
    cos[the] = -2
    assert [n["id"] for n in result["neighbors"]] == cos.topk(5).indices.tolist()

    assert main(["import-gpt2", str(hf.dir), "--out", out]) == 2
    assert "already holds a run" in capsys.readouterr().err
    assert main(["import-gpt2", str(tmp_path / "missing"), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a directory" in err
