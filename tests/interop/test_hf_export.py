"""`lrn export --format hf`: a GPT run becomes a directory that transformers loads with no custom
code, computing lrn's logits and greedy text; `lrn import-gpt2` gives the same weights back; runs
that GPT-2 cannot express, and occupied output directories, fail with one clear line."""

from __future__ import annotations

import contextlib
import json
import logging
import re
import shutil
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
import torch

from lrngpt.cli.main import main
from lrngpt.errors import UserError
from lrngpt.inference.sample import SamplingConfig, generate
from lrngpt.interop.hf_export import export_run_hf
from lrngpt.models.build import build_model
from lrngpt.runconfig.schema import PRESET_DIR, from_dict, load_config
from lrngpt.store.checkpoint import load_checkpoint, save_checkpoint
from lrngpt.store.layout import BEST, LAST, MARKER
from lrngpt.store.rundir import RunDir, load_run

transformers = pytest.importorskip("transformers")
pytest.importorskip("safetensors")

CONFIGS = PRESET_DIR  # the seed project's configs ship as the presets cpu and nsmc
CONTEXT = 32
TEXTS = ["Lily saw a red cat in the park and said hello to her friend Tom.",
         "unseen wörds 안녕 🙂", " the  the\n\tthe", "a , b . Ben ran!"]
LITERAL_EOT = "Tom ran.<|endoftext|>Mia sat."  # the special token's text inside a text: text, in lrn
# What each run varies from configs/cpu.json (pre-norm, exact GELU, untied head, no biases).
VARIANTS = {
    "cpu-json": [],
    "gpt2-like": ["model.tie_embeddings=true", "model.qkv_bias=true", "model.bias=true",
                  "model.gelu_approximate=tanh", "model.layer_norm_eps=1e-6", "model.ffn_mult=2"],
    "relu-qkv-bias-only": ["model.ffn=relu", "model.tie_embeddings=true", "model.qkv_bias=true"],
}


@pytest.fixture(scope="module")
def runs(text_corpus, trained, tmp_path_factory):
    """One short-trained GPT run per variant, its weights then moved (biases off 0, LayerNorm gains
    off 1) so that a dropped or misplaced tensor changes the logits (in a copy: the trained run is shared)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny runs: one thread is faster on a busy 2-core machine
    out = {}
    for name, sets in VARIANTS.items():
        d = trained(CONFIGS / "cpu.json", "data.vocab_size=300", "model.n_embd=16", "model.n_head=2",
                    "model.n_layer=2", f"model.context_length={CONTEXT}", "train.batch_size=4", "train.steps=3",
                    "train.eval_every=2", "train.eval_tokens=500", "train.train_eval_tokens=500", *sets,
                    corpus=text_corpus, name=name, copy_to=tmp_path_factory.mktemp("runs"))
        ckpt = load_checkpoint(d / LAST)
        torch.manual_seed(len(out))
        for t in {t.data_ptr(): t for t in ckpt["model"].values()}.values():  # a tied table once
            t.add_(torch.randn_like(t) * 0.1)
        save_checkpoint(ckpt, d / LAST)
        out[name] = d
    torch.set_num_threads(threads)
    return out


def hf_load(d):
    model = transformers.AutoModelForCausalLM.from_pretrained(d)
    return model.eval(), transformers.AutoTokenizer.from_pretrained(d)


def lrn_logits(run, ids):
    with torch.no_grad():
        return run.model(torch.tensor([ids]))[0][0]


# ---- parity with transformers ------------------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
def test_transformers_computes_lrns_logits_and_greedy_text(runs, variant, tmp_path):
    r = export_run_hf(runs[variant], tmp_path / "hf")
    run = load_run(runs[variant])
    model, tok = hf_load(tmp_path / "hf")
    assert type(model).__name__ == "GPT2LMHeadModel"
    ids = run.tokenizer.encode(" ".join(TEXTS * 3))[:CONTEXT]
    assert len(ids) == CONTEXT  # the whole context, so every position row is used
    with torch.no_grad():
        theirs = model(torch.tensor([ids])).logits[0]
    ours = lrn_logits(run, ids)
    assert ours.shape == theirs.shape == (CONTEXT, run.config.data.vocab_size)
    assert (ours - theirs).abs().max().item() < 1e-5
    prompt = ids[:6]
    hf_greedy = model.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, 6, dtype=torch.long),
                               max_new_tokens=20, do_sample=False)[0, 6:].tolist()
    for use_cache in (True, False):
        greedy = generate(run.model, prompt, SamplingConfig(max_new_tokens=20, top_k=1),
                          eot_id=run.tokenizer.eot_id, use_cache=use_cache)
        assert greedy == hf_greedy
    assert len(hf_greedy) >= 2
    cfg = run.config.model
    assert model.config.tie_word_embeddings == cfg.tie_embeddings == r["tie_word_embeddings"]
    assert (model.lm_head.weight.data_ptr() == model.transformer.wte.weight.data_ptr()) == cfg.tie_embeddings
    zeros = sum(model.get_parameter(f"transformer.h.{i}.{b}").numel()
                for i in range(cfg.n_layer) for b in r["zero_biases"])
    assert sum(p.numel() for p in model.parameters()) == r["params"] + zeros


def test_exported_biases_we_lack_are_zeros_and_the_activation_is_named(runs, tmp_path):
    r = export_run_hf(runs["relu-qkv-bias-only"], tmp_path / "hf")
    assert r["activation_function"] == "relu"
    assert r["zero_biases"] == ["attn.c_proj.bias", "mlp.c_fc.bias", "mlp.c_proj.bias"]
    model, _ = hf_load(tmp_path / "hf")
    for i in range(2):
        assert model.transformer.h[i].attn.c_attn.bias.abs().sum() > 0
        for b in r["zero_biases"]:
            assert not model.get_parameter(f"transformer.h.{i}.{b}").any()
    names = {v: export_run_hf(runs[v], tmp_path / v)["activation_function"] for v in ("cpu-json", "gpt2-like")}
    assert names == {"cpu-json": "gelu", "gpt2-like": "gelu_new"}


def test_auto_tokenizer_encodes_and_decodes_like_lrn(runs, tmp_path):
    export_run_hf(runs["cpu-json"], tmp_path / "hf")
    run = load_run(runs["cpu-json"])
    _, tok = hf_load(tmp_path / "hf")
    assert (tok.eos_token, tok.bos_token) == ("<|endoftext|>", "<|endoftext|>")
    assert tok.eos_token_id == tok.bos_token_id == run.tokenizer.eot_id
    assert tok.model_max_length == CONTEXT
    for text in [*TEXTS, LITERAL_EOT]:
        ids = tok(text).input_ids
        assert ids == run.tokenizer.encode(text)
        assert tok.decode(ids) == text == run.tokenizer.decode(ids)
    # split_special_tokens: the literal is its 13 characters' tokens, as in lrn, not the one special id
    # (transformers' own default), which only the ids give
    assert run.tokenizer.eot_id not in tok(LITERAL_EOT).input_ids and len(tok("<|endoftext|>").input_ids) > 1
    assert tok(LITERAL_EOT, split_special_tokens=False).input_ids.count(run.tokenizer.eot_id) == 1
    # GPT-2's original two files alone give the same tokenizer
    shutil.copytree(tmp_path / "hf", tmp_path / "vm", ignore=shutil.ignore_patterns("tokenizer.json"))
    two_files = transformers.AutoTokenizer.from_pretrained(tmp_path / "vm")
    assert all(two_files(t).input_ids == run.tokenizer.encode(t) for t in [*TEXTS, LITERAL_EOT])
    gen = json.loads((tmp_path / "hf" / "generation_config.json").read_text())
    assert gen == {"bos_token_id": run.tokenizer.eot_id, "eos_token_id": run.tokenizer.eot_id,
                   "pad_token_id": run.tokenizer.eot_id}  # no max_length: it collided with max_new_tokens


# ---- the snippet of the how-to and of the card, as written; padding; the card's metadata -------

@contextlib.contextmanager
def transformers_warnings():
    """What transformers says while the block runs: its logger's warnings (it does not propagate to
    the root logger) and Python warnings."""
    said: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            said.append(record.getMessage())

    handler, logger = Keep(logging.WARNING), logging.getLogger("transformers")
    logger.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield said
        said.extend(str(w.message) for w in caught)
    finally:
        logger.removeHandler(handler)


def python_blocks(markdown: str) -> list[str]:
    """The ```python blocks of a Markdown text that load a model, dedented (the README's sits in a list)."""
    blocks = re.findall(r"^( *)```python\n(.*?)^\1```", markdown, flags=re.S | re.M)
    return [textwrap.dedent(body) for _, body in blocks if "AutoModelForCausalLM" in body]


@pytest.mark.parametrize("where", ["the how-to", "card"])
def test_the_snippet_runs_as_written_and_fits_its_generation_in_the_context(runs, where, tmp_path, capsys):
    export_run_hf(runs["cpu-json"], tmp_path / "hf")
    how_to = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "hugging-face.md"
    text = (how_to if where == "the how-to" else tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    (block,) = python_blocks(text)
    path = "exports/gpt-cpu" if where == "the how-to" else "PATH"
    assert f'from_pretrained("{path}")' in block
    _, tok = hf_load(tmp_path / "hf")
    prompt = len(tok("Once upon a time").input_ids)
    assert prompt + 40 > CONTEXT  # the 40 new tokens the snippet asks for do not fit: it must size them
    torch.manual_seed(0)
    namespace = {}
    with transformers_warnings() as said:
        exec(compile(block.replace(path, str(tmp_path / "hf")), where, "exec"), namespace)
    assert not [m for m in said if "max_length" in m], said  # "Both max_new_tokens and max_length ..."
    printed = capsys.readouterr().out
    assert prompt < namespace["out"].shape[1] <= CONTEXT  # (sampling may stop early at <|endoftext|>)
    assert printed.startswith("Once upon a time") and len(printed) > len("Once upon a time\n")


def test_generation_defaults_to_the_context_and_a_batch_pads_on_the_left(runs, tmp_path):
    export_run_hf(runs["cpu-json"], tmp_path / "hf")
    model, tok = hf_load(tmp_path / "hf")
    run = load_run(runs["cpu-json"])
    assert tok.model_max_length == CONTEXT == model.config.n_positions
    texts = ["Lily saw", "a , b . Ben ran! the the the"]
    batch = tok(texts, padding=True, return_tensors="pt")
    short, long = (run.tokenizer.encode(t) for t in texts)
    assert batch.input_ids.shape == (2, len(long)) and len(short) < len(long)
    pad = len(long) - len(short)
    assert batch.input_ids[0].tolist() == [run.tokenizer.eot_id] * pad + short
    assert batch.attention_mask[0].tolist() == [0] * pad + [1] * len(short)
    # without max_new_tokens (nor a max_length), transformers caps its 20 new tokens at the context
    # (and says it used its default, which the snippet, giving max_new_tokens, never hears)
    assert len(long) + 20 > CONTEXT
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone_to_the_end = model.generate(torch.tensor([long]), attention_mask=torch.ones(1, len(long), dtype=torch.long),
                                          do_sample=False, eos_token_id=None)
    assert alone_to_the_end.shape[1] == CONTEXT
    # the padded batch generates what each prompt generates alone
    together = model.generate(**batch, max_new_tokens=5, do_sample=False, eos_token_id=None)
    alone = model.generate(torch.tensor([short]), attention_mask=torch.ones(1, len(short), dtype=torch.long),
                           max_new_tokens=5, do_sample=False, eos_token_id=None)
    assert together[0, -5:].tolist() == alone[0, -5:].tolist()


def test_the_card_carries_licence_datasets_and_val_bpb_as_an_evaluation_result(runs, tmp_path):
    hub = pytest.importorskip("huggingface_hub")
    summary = json.loads((runs["cpu-json"] / "summary.json").read_text())
    export_run_hf(runs["cpu-json"], tmp_path / "hf")
    card = hub.ModelCard.load(tmp_path / "hf" / "README.md")
    assert card.data.license == "unknown" and not card.data.datasets  # a text: corpus: lrn cannot know
    (result,) = card.data.eval_results
    assert (result.metric_type, result.dataset_split) == ("bits_per_byte", "validation")
    assert result.metric_value == pytest.approx(summary["val_bpb"], abs=1e-6)
    export_run_hf(runs["cpu-json"], tmp_path / "mit", license="mit")
    assert hub.ModelCard.load(tmp_path / "mit" / "README.md").data.license == "mit"


def test_known_corpora_name_their_dataset_and_licence():
    from lrngpt.interop.hf_export import card_metadata

    assert card_metadata("tinystories", None) == ("cdla-sharing-1.0", ["roneneldan/TinyStories"])
    assert card_metadata("nsmc:data/nsmc", None) == ("cc0-1.0", ["e9t/nsmc"])
    assert card_metadata("stories:5MB", None) == ("mit", [])
    assert card_metadata("hf:user/corpus@abc123:default:train", None) == ("unknown", ["user/corpus"])
    # the same datasets through hf: name their licence too
    assert card_metadata("hf:roneneldan/TinyStories@f54c09fd23315a6f9c86f9dc80f725de7d8f9c64::train:text",
                         None) == ("cdla-sharing-1.0", ["roneneldan/TinyStories"])
    assert card_metadata("hf:roneneldan/TinyStories?stream", "mit") == ("mit", ["roneneldan/TinyStories"])
    assert card_metadata("hf:e9t/nsmc", None) == ("cc0-1.0", ["e9t/nsmc"])
    assert card_metadata("text:a.txt", "cc-by-4.0") == ("cc-by-4.0", [])


# ---- round trip through lrn import-gpt2 ---------------------------------------------------------

@pytest.mark.parametrize("variant", ["cpu-json", "gpt2-like"])
def test_import_of_the_export_gives_back_the_same_weights(runs, variant, tmp_path, capsys):
    src = runs[variant]
    assert main(["export", str(src), "--format", "hf", "--out", str(tmp_path / "hf"), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert sorted([*r["files"], ".cache"]) == sorted(p.name for p in (tmp_path / "hf").iterdir())
    assert main(["import-gpt2", str(tmp_path / "hf"), "--out", str(tmp_path / "back")]) == 0
    before, after = load_run(src), load_run(tmp_path / "back")
    a, b = before.model.state_dict(), after.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)  # every tensor of the run, bit for bit
    added = sorted(set(b) - set(a))  # GPT-2 has a bias on every linear; ours had zeros there
    assert len(added) == 2 * len(r["zero_biases"]) and all(not b[k].any() for k in added)
    keep = ("context_length", "n_embd", "n_head", "n_layer", "ffn", "ffn_mult", "norm_position",
            "tie_embeddings", "gelu_approximate", "layer_norm_eps", "dropout", "init_std")
    assert {k: getattr(after.config.model, k) for k in keep} == {k: getattr(before.config.model, k) for k in keep}
    assert after.tokenizer.hash == before.tokenizer.hash
    ids = before.tokenizer.encode(TEXTS[0])[:CONTEXT]
    assert torch.equal(lrn_logits(before, ids), lrn_logits(after, ids))


def test_model_card_states_the_corpus_and_the_bits_per_byte_of_the_exported_weights(runs, tmp_path):
    summary = json.loads((runs["cpu-json"] / "summary.json").read_text())
    for which, value, how in (("last", summary["val_bpb"], "full split"),
                              ("best", summary["best_val_bpb"], "best periodic evaluation")):
        export_run_hf(runs["cpu-json"], tmp_path / which, checkpoint=which)
        card = (tmp_path / which / "README.md").read_text()
        assert card.startswith("---\n") and "\nlibrary_name: transformers\n" in card.split("\n---\n")[0]
        assert f"| validation bits per byte | {value:.4f} ({how}) |" in card
        assert f"| training corpus | `{load_run(runs['cpu-json']).config.data.corpus}` |" in card


def test_best_checkpoint_is_exported_on_request(runs, tmp_path):
    export_run_hf(runs["cpu-json"], tmp_path / "hf", checkpoint="best")
    model, _ = hf_load(tmp_path / "hf")
    best = load_checkpoint(runs["cpu-json"] / BEST)["model"]
    assert torch.equal(model.transformer.wte.weight, best["embedding.token.weight"])
    assert not torch.equal(best["embedding.token.weight"], load_checkpoint(runs["cpu-json"] / LAST)["model"][
        "embedding.token.weight"])  # the last weights were moved after training: a real choice


# ---- refusals ----------------------------------------------------------------------------------

def changed_run(src: Path, dst: Path, model_type: str = "gpt", **model) -> Path:
    """A copy of run `src` whose model config has `model` changed (fresh weights to match)."""
    ckpt = load_checkpoint(src / LAST)
    cfg = ckpt["config"]
    if model_type == "mlp":
        cfg = {**load_config("mlp-tiny", ["data.vocab_size=300"]).to_dict(), "data": cfg["data"]}
    cfg["model"].update(model)
    cfg = from_dict(cfg)
    dst.mkdir()
    (dst / MARKER).write_bytes((src / MARKER).read_bytes())  # a run is its record (kind "run")
    RunDir(dst).write_config(cfg)
    ckpt.update(config=cfg.to_dict(), model=build_model(cfg.model_type, cfg.model).state_dict())
    save_checkpoint(ckpt, dst / LAST)
    return dst


def test_runs_gpt2_cannot_express_are_refused_naming_the_option(runs, tmp_path, capsys):
    src = runs["cpu-json"]
    cases = [
        (changed_run(src, tmp_path / "post", norm_position="post"), "model.norm_position is 'post'"),
        (changed_run(src, tmp_path / "swiglu", ffn="swiglu"), "model.ffn is 'swiglu'"),
        (changed_run(src, tmp_path / "geglu", ffn="geglu"), "model.ffn is 'geglu'"),
        (changed_run(src, tmp_path / "mlp", model_type="mlp"), "model_type 'mlp'"),
    ]
    for run_dir, message in cases:
        out = tmp_path / f"out-{run_dir.name}"
        assert main(["export", str(run_dir), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
        assert not out.exists()
    assert main(["export", str(tmp_path / "missing"), "--out", str(tmp_path / "x")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_directory_lrn_did_not_write_is_refused_even_with_force_and_an_earlier_export_is_replaced(
        runs, tmp_path, capsys):
    out = tmp_path / "hf"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "pytorch_model.bin").write_bytes(b"my own weights")
    for force in ([], ["--force"]):
        assert main(["export", str(runs["cpu-json"]), "--out", str(out), *force]) == 2
        err = capsys.readouterr().err
        assert "lrn did not write (notes.txt, pytorch_model.bin)" in err and err.count("\n") == 1, err
        assert "with or without --force" in err
    assert (out / "notes.txt").read_text() == "mine" and (out / "pytorch_model.bin").read_bytes() == b"my own weights"
    fresh = tmp_path / "fresh"
    assert main(["export", str(runs["cpu-json"]), "--out", str(fresh)]) == 0
    assert main(["export", str(runs["cpu-json"]), "--out", str(fresh)]) == 2  # an earlier export: only with --force
    assert "add --force to replace it" in capsys.readouterr().err
    assert main(["export", str(runs["cpu-json"]), "--out", str(fresh), "--force"]) == 0
    capsys.readouterr()
    hf_load(fresh)
    (tmp_path / "file").write_text("x")
    assert main(["export", str(runs["cpu-json"]), "--out", str(tmp_path / "file"), "--force"]) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_without_safetensors_it_says_how_to_install_it(runs, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors", None)
    monkeypatch.setitem(sys.modules, "safetensors.torch", None)
    with pytest.raises(UserError, match=r"pip install safetensors"):
        export_run_hf(runs["cpu-json"], tmp_path / "hf")
    assert not (tmp_path / "hf").exists()


# ---- a Hub upload of the export ------------------------------------------------------------------

def test_an_upload_of_the_export_carries_its_files_and_not_lrns_manifest(runs, tmp_path, monkeypatch, capsys):
    """What huggingface_hub's upload_folder (and `hf upload`) would send, chosen by its own code
    offline: the eight files, not lrn's manifest, which lives in .cache/huggingface/ (always ignored
    there) beside a .gitignore of "*" (so `git add .` in a clone skips it too); the manifest still
    makes the directory lrn's, so --force replaces it and a changed file is refused."""
    hub = pytest.importorskip("huggingface_hub")
    out = tmp_path / "hf"
    export_run_hf(runs["cpu-json"], out)
    assert (out / ".cache" / "huggingface" / ".gitignore").read_text() == "*\n"
    api = hub.HfApi()
    if not hasattr(api, "_prepare_upload_folder_additions"):
        pytest.skip("this huggingface_hub chooses an upload's files elsewhere")
    monkeypatch.setattr(api, "_validate_yaml", lambda *a, **k: None)  # (a request to the Hub)
    # upload_folder adds its DEFAULT_IGNORE_PATTERNS to the caller's, then picks the files so
    ignore = list(hub.utils.DEFAULT_IGNORE_PATTERNS)
    chosen = [op.path_in_repo for op in api._prepare_upload_folder_additions(out, "", ignore_patterns=ignore)]
    assert sorted(chosen) == sorted(json.loads(main_json(["export", str(runs["cpu-json"]), "--out",
                                                          str(tmp_path / "again"), "--json"], capsys))["files"])
    assert not [p for p in chosen if "lrn" in p or p.startswith(".")]
    assert main(["export", str(runs["cpu-json"]), "--out", str(out), "--force"]) == 0  # still lrn's
    (out / "config.json").write_text("{}")  # a file changed since: the user's
    assert main(["export", str(runs["cpu-json"]), "--out", str(out), "--force"]) == 2
    assert "config.json" in capsys.readouterr().err


def test_a_cache_directory_the_user_put_there_is_not_taken_for_lrns(runs, tmp_path, capsys):
    out = tmp_path / "hf"
    export_run_hf(runs["cpu-json"], out)
    (out / ".cache" / "notes.txt").write_text("mine")
    assert main(["export", str(runs["cpu-json"]), "--out", str(out), "--force"]) == 2
    assert "(.cache)" in capsys.readouterr().err and (out / ".cache" / "notes.txt").read_text() == "mine"


def main_json(argv, capsys) -> str:
    capsys.readouterr()
    assert main(argv) == 0
    return capsys.readouterr().out
