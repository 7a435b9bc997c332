"""GPT-2 <-> lrn: the one name and config mapping, used by the importer here and the exporter
(hf_export.py), and the import of a local Hugging Face GPT-2 checkpoint (config.json; model.safetensors,
a sharded index or pytorch_model.bin; tokenizer.json or vocab.json + merges.txt) as an ordinary run
directory, all of it checked before anything is written.

GPT-2 is our GPT with every GPT-2 switch on (pre-norm, biases, tanh GELU, learned positions); only the
layout differs: Hugging Face's `Conv1D` weights are (in, out), the transpose of `nn.Linear`'s.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers

from lrngpt.core.fsio import check_output, check_regular, read_json
from lrngpt.corpora.base import EOT
from lrngpt.errors import UserError, option
from lrngpt.models.build import param_breakdown
from lrngpt.models.gpt import GPT, GPTConfig
from lrngpt.runconfig.schema import from_dict
from lrngpt.store.checkpoint import make_payload, non_finite_tensor
from lrngpt.store.rundir import RunDir
from lrngpt.tokenizer.bpe import MIN_VOCAB, Tokenizer

SOURCE = "gpt2-import"
# GPTConfig's fields -> config.json's names: the one table both ways read (the first five are required).
FIELDS = {"vocab_size": "vocab_size", "context_length": "n_positions", "n_embd": "n_embd", "n_head": "n_head",
          "n_layer": "n_layer", "dropout": "resid_pdrop", "init_std": "initializer_range",
          "layer_norm_eps": "layer_norm_epsilon", "tie_embeddings": "tie_word_embeddings"}
OPTIONAL = {"resid_pdrop": 0.0, "initializer_range": 0.02, "layer_norm_epsilon": 1e-5, "tie_word_embeddings": True}
# Attention switches GPT-2 may flip, at the value lrn's plain causal self-attention has.
PLAIN_ATTENTION = {"add_cross_attention": False, "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True}
# Hugging Face activation names -> (our ffn, gelu_approximate). gelu_new, gelu_fast and
# gelu_pytorch_tanh are the same tanh formula written three ways.
ACTIVATIONS = {
    "gelu_new": ("gelu", "tanh"), "gelu_fast": ("gelu", "tanh"), "gelu_pytorch_tanh": ("gelu", "tanh"),
    "gelu": ("gelu", "none"), "relu": ("relu", "none"),
}
# ... and back: the first name for each of ours (gelu_new is GPT-2's own, what every tool knows).
EXPORT_ACTIVATIONS = {ours: hf for hf, ours in reversed(ACTIVATIONS.items())}
# Causal-mask buffers some GPT-2 files carry (h.0.attn.bias is a (1,1,T,T) mask, not a weight).
BUFFER = re.compile(r"h\.\d+\.attn\.(bias|masked_bias)$")
# Per-layer Hugging Face names -> (our names, whether the Conv1D weight must be transposed).
LAYER = {
    "ln_1.weight": ("ln1.weight", False), "ln_1.bias": ("ln1.bias", False),
    "attn.c_attn.weight": ("attn.qkv.weight", True), "attn.c_attn.bias": ("attn.qkv.bias", False),
    "attn.c_proj.weight": ("attn.proj.weight", True), "attn.c_proj.bias": ("attn.proj.bias", False),
    "ln_2.weight": ("ln2.weight", False), "ln_2.bias": ("ln2.bias", False),
    "mlp.c_fc.weight": ("ffn.up.weight", True), "mlp.c_fc.bias": ("ffn.up.bias", False),
    "mlp.c_proj.weight": ("ffn.down.weight", True), "mlp.c_proj.bias": ("ffn.down.bias", False),
}
TOP = {"wte.weight": "embedding.token.weight", "wpe.weight": "embedding.position.weight",
       "ln_f.weight": "ln_f.weight", "ln_f.bias": "ln_f.bias"}


def safetensors():
    """safetensors.torch, or None: it is an optional extra (`pip install lrngpt[gpt2]`)."""
    try:
        return importlib.import_module("safetensors.torch")
    except ImportError:
        return None


# ---- config -------------------------------------------------------------------------------

def gpt_config_from_hf(hf: dict) -> GPTConfig:
    """Our GPTConfig for a Hugging Face GPT2Config dict; refuses the variants our GPT does not have.
    GPTConfig checks each value's type and range; a refusal names config.json's key, not model.KEY."""
    try:
        activation = hf.get("activation_function", "gelu_new")
        if not isinstance(activation, str) or activation not in ACTIVATIONS:
            raise UserError(f"activation_function is {json.dumps(activation)}; lrn imports {', '.join(ACTIVATIONS)}")
        for key, plain in PLAIN_ATTENTION.items():
            if hf.get(key, plain) is not plain:
                raise UserError(f"it sets {key}={json.dumps(hf[key])}; lrn's GPT has plain causal self-attention "
                                f"only ({key}={json.dumps(plain)})")
        ffn, approximate = ACTIVATIONS[activation]
        values: dict[str, Any] = {ours: hf.get(theirs, OPTIONAL.get(theirs)) for ours, theirs in FIELDS.items()}
        # ffn_mult 1 first: GPTConfig checks the width before n_inner is divided by it
        g = GPTConfig(**values, ffn=ffn, ffn_mult=1, norm_position="pre", qkv_bias=True, bias=True,
                      gelu_approximate=approximate)
        if g.vocab_size < MIN_VOCAB:
            raise UserError(f"vocab_size is {g.vocab_size}; lrn needs at least {MIN_VOCAB} (256 bytes + {EOT})")
        inner = hf.get("n_inner")
        inner = 4 * g.n_embd if inner is None else inner
        if not isinstance(inner, int) or isinstance(inner, bool) or inner < 1 or inner % g.n_embd:
            raise UserError(f"n_inner is {json.dumps(inner)}; null or a positive multiple of n_embd {g.n_embd} "
                            "was expected (lrn's ffn_mult is whole)")
        return dataclasses.replace(g, ffn_mult=inner // g.n_embd)
    except UserError as e:  # GPTConfig speaks of model.KEY: say config.json's name
        raise UserError("config.json: " + re.sub(r"model\.(\w+)", lambda m: FIELDS.get(m[1], m[1]), e.text)) from None


def hf_config_from_gpt(g: GPTConfig, eot_id: int) -> dict:
    """The GPT2Config dict (config.json) of our GPT; refuses, naming the option, what GPT-2 lacks (not
    biases: one we do not have is exported as zeros, which computes what our bias-free linear does)."""
    if g.norm_position != "pre":
        raise UserError(f"model.norm_position is {g.norm_position!r}; GPT-2 is pre-norm only, so only "
                        "runs trained with model.norm_position=pre can be exported")
    activation = EXPORT_ACTIVATIONS.get((g.ffn, g.gelu_approximate if g.ffn == "gelu" else "none"))
    if activation is None:
        raise UserError(f"model.ffn is {g.ffn!r}; GPT-2's MLP is ungated (one activation), so only "
                        "runs with model.ffn=gelu or relu can be exported")
    return {
        "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
        **{theirs: getattr(g, ours) for ours, theirs in FIELDS.items()},
        "n_inner": None if g.ffn_mult == 4 else g.ffn_mult * g.n_embd, "activation_function": activation,
        "embd_pdrop": g.dropout, "attn_pdrop": g.dropout, **PLAIN_ATTENTION, "reorder_and_upcast_attn": False,
        "use_cache": True, "bos_token_id": eot_id, "eos_token_id": eot_id, "dtype": "float32",
    }


# ---- weights ------------------------------------------------------------------------------

def weight_names(n_layer: int) -> dict[str, tuple[str, bool]]:
    """Each of our GPT's weights (lm_head aside) -> (its Hugging Face name under `transformer.`, whether
    the Conv1D weight is transposed): TOP, then LAYER for each block; the one table both ways read."""
    names = {ours: (hf, False) for hf, ours in TOP.items()}
    for i in range(n_layer):
        names |= {f"blocks.{i}.{ours}": (f"h.{i}.{hf}", transpose) for hf, (ours, transpose) in LAYER.items()}
    return names


def state_dict_from_hf(hf_sd: dict[str, torch.Tensor], gcfg: GPTConfig) -> dict[str, torch.Tensor]:
    """Hugging Face GPT-2 weights -> our GPT's state dict (float32, Conv1D weights transposed),
    checked name by name and shape by shape, in the file's layout, against the model the config describes."""
    with torch.device("meta"):
        expected = GPT(gcfg).state_dict()
    names = weight_names(gcfg.n_layer)
    if not gcfg.tie_embeddings:
        names["lm_head.weight"] = ("lm_head.weight", False)
    wanted = {hf for hf, _ in names.values()}
    found = {}  # the file's weights by name, `transformer.` dropped: (its key, tensor)
    for key, tensor in hf_sd.items():
        name = key.removeprefix("transformer.")
        if name in wanted:
            found[name] = key, tensor
        elif (block := re.fullmatch(r"h\.\d+\.(.+)", name)) and block[1] in LAYER:  # a block past n_layer
            raise UserError(f"weight {key!r} does not fit config.json (n_layer {gcfg.n_layer})")
        elif not BUFFER.fullmatch(name) and name != "lm_head.weight":  # a tied head is the token table again
            raise UserError(f"unexpected weight {key!r}; this is not a plain GPT-2 checkpoint")
    missing = [hf for hf, _ in names.values() if hf not in found]
    if missing:
        raise UserError(f"the weights lack {missing[0]!r} (and {len(missing) - 1} more) that "
                        f"config.json implies (n_layer {gcfg.n_layer}); the file is incomplete or not GPT-2")
    ours = {}
    for k, (hf, transpose) in names.items():
        key, tensor = found[hf]
        want = expected[k].shape[::-1] if transpose else expected[k].shape
        if tensor.shape != want:
            raise UserError(f"weight {key!r} has shape {tuple(tensor.shape)}, but config.json implies "
                            f"{tuple(want)}; config.json and the weights do not belong together")
        ours[k] = (tensor.t() if transpose else tensor).float().contiguous()
    if gcfg.tie_embeddings:
        ours["lm_head.weight"] = ours["embedding.token.weight"]  # one tensor, saved once
    return {k: ours[k] for k in expected}


def state_dict_to_hf(sd: dict[str, torch.Tensor], gcfg: GPTConfig) -> dict[str, torch.Tensor]:
    """Our GPT's state dict -> GPT2LMHeadModel's (names, Conv1D layout, float32), absent biases as zeros;
    a tied head is left out, as Hugging Face saves it (from_pretrained re-ties it)."""
    out: dict[str, torch.Tensor] = {}
    for ours, (hf, transpose) in weight_names(gcfg.n_layer).items():
        if ours in sd:
            tensor = sd[ours].t() if transpose else sd[ours]
        else:  # an absent bias: zeros the width of its weight's output
            tensor = torch.zeros(sd[ours.removesuffix("bias") + "weight"].shape[0])
        out[f"transformer.{hf}"] = tensor
    if not gcfg.tie_embeddings:
        out["lm_head.weight"] = sd["lm_head.weight"]
    return {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in out.items()}


# ---- reading a Hugging Face directory -------------------------------------------------------------------------------

def read_hf_config(hf_dir: Path) -> dict:
    path = hf_dir / "config.json"
    if not hf_dir.is_dir():
        raise UserError(f"{hf_dir} is not a directory; give a local Hugging Face GPT-2 directory")
    if not path.is_file():
        check_regular(path, "Hugging Face config")  # a FIFO or a device there: named, not "no config.json"
        raise UserError(f"{hf_dir} has no config.json; it is not a Hugging Face model directory")
    hf = read_json(path, "Hugging Face config")
    if not isinstance(hf, dict) or hf.get("model_type") != "gpt2":
        found = hf.get("model_type") if isinstance(hf, dict) else None
        raise UserError(f"{path} has model_type {found!r}, not 'gpt2'; only GPT-2 checkpoints can be imported")
    return hf


def run_config_dict(gcfg: GPTConfig) -> dict:
    """The RunConfig dict of an imported run: only the model is real; data and train are defaults
    that let `lrn eval` measure it on the stories corpus with its own tokenizer."""
    model = {k: v for k, v in vars(gcfg).items() if k != "vocab_size"}
    # Evaluation holds batch x context x V float32 logits at once; keep that near 256 MB.
    batch = max(1, min(64, 2**26 // (gcfg.context_length * gcfg.vocab_size)))
    return {"model_type": "gpt", "name": SOURCE, "data": {"vocab_size": gcfg.vocab_size}, "model": model,
            "train": {"seq_len": gcfg.context_length, "batch_size": batch, "seed": 0}}


def _load_file(path: Path) -> dict[str, torch.Tensor]:
    """One weights file, by its suffix: safetensors, else a PyTorch pickle of plain tensors only."""
    if path.suffix == ".safetensors":
        st = safetensors()
        if st is None:
            raise UserError(f"{path.name} needs the safetensors package: `pip install safetensors` "
                            "(or `pip install lrngpt[gpt2]`), or put pytorch_model.bin in the directory")
        try:
            return st.load_file(str(path))
        except Exception as e:  # truncated or not a safetensors file
            raise UserError(f"{path} cannot be read as safetensors ({type(e).__name__}: {e})") from None
    try:
        sd = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        raise UserError(f"{path} cannot be read as a PyTorch state dict ({type(e).__name__}); "
                        "it is truncated, corrupted or not plain tensors") from None
    if not isinstance(sd, dict):
        raise UserError(f"{path} does not hold a state dict")
    return sd


def load_hf_weights(hf_dir: Path) -> tuple[dict[str, torch.Tensor], str]:
    """(state dict, file it came from): safetensors when the package is there, else pytorch_model.bin;
    a sharded index (*.index.json) is read file by file."""
    options = ["model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json"]
    present = [name for name in options if (hf_dir / name).is_file()]
    if not present:
        for name in options:  # a FIFO or a device under a weights name: named, not "no weights"
            check_regular(hf_dir / name, "weights file")
        raise UserError(f"{hf_dir} has no model.safetensors or pytorch_model.bin; "
                        "download the PyTorch weights of the model into it")
    usable = [name for name in present if safetensors() is not None or "safetensors" not in name]
    name = (usable or present)[0]  # without the package, the first (safetensors) explains itself
    index = hf_dir / name
    if not name.endswith(".index.json"):
        return _load_file(index), name
    try:
        files = sorted(set(json.loads(index.read_text())["weight_map"].values()))
    except (OSError, ValueError, KeyError, AttributeError, TypeError) as e:
        raise UserError(f"{index} is not a valid weight index ({type(e).__name__}: {e})") from None
    sd = {}
    for shard in files:
        if not (hf_dir / shard).is_file():
            raise UserError(f"{index} lists {shard}, which is missing from {hf_dir}")
        sd.update(_load_file(hf_dir / shard))
    return sd, name


# ---- tokenizer ----------------------------------------------------------------------------

def load_hf_tokenizer(hf_dir: Path) -> tuple[Tokenizer, str]:
    """The directory's byte-level BPE: tokenizer.json (Tokenizer.load refuses, naming the file, any
    other kind), else vocab.json + merges.txt converted."""
    path, vocab, merges = hf_dir / "tokenizer.json", hf_dir / "vocab.json", hf_dir / "merges.txt"
    if path.is_file():
        return Tokenizer.load(path), "tokenizer.json"
    if not (vocab.is_file() and merges.is_file()):
        raise UserError(f"{hf_dir} has no tokenizer.json and no vocab.json + merges.txt; "
                        "lrn eval/sample need GPT-2's tokenizer: download those files into it")
    try:
        hf = HFTokenizer(models.BPE.from_file(str(vocab), str(merges)))
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        hf.decoder = decoders.ByteLevel()
        hf.add_special_tokens([EOT])  # GPT-2's vocab.json has it at 50256; this marks it special
        return Tokenizer(hf), "vocab.json+merges.txt"
    except UserError as e:  # not byte-level, say
        raise UserError(f"{vocab}: {e.text}") from None
    except Exception as e:  # tokenizers raises plain Exceptions on malformed files
        raise UserError(f"{vocab} + {merges.name} cannot be read as a BPE vocabulary ({e})") from None


# ---- the run directory --------------------------------------------------------------------

def convert_gpt2(hf_dir: str | Path, out: str | Path, force: bool = False) -> dict:
    """Read HF_DIR, check all of it, then write the run directory `out`. Returns a summary."""
    hf_dir, out = Path(hf_dir), check_output(out, "dir")
    src, dst = hf_dir.resolve(), out.resolve()
    if src == dst or src in dst.parents or dst in src.parents:
        raise UserError(f"{option('out', out)} is {'the import source' if src == dst else 'inside or around the import source'} "
                        f"{hf_dir}; lrn never writes over what it imports: choose another --out")
    RunDir(out).check_new(force, resume_hint=False)  # a directory that is not an lrn run: refused before any reading
    hf = read_hf_config(hf_dir)
    gcfg = gpt_config_from_hf(hf)
    tokenizer, tokenizer_from = load_hf_tokenizer(hf_dir)
    if tokenizer.vocab_size != gcfg.vocab_size:
        # A padded or foreign table would hand sampling and neighbour search ids with no token.
        raise UserError(f"the tokenizer has {tokenizer.vocab_size} tokens but config.json's vocab_size is "
                        f"{gcfg.vocab_size}; lrn needs the model's own tokenizer, one row per token")
    hf_sd, weights_from = load_hf_weights(hf_dir)
    bad = non_finite_tensor(hf_sd)
    if bad:
        raise UserError(f"{hf_dir / weights_from}: tensor {bad!r} holds NaN or infinite values; the weights are "
                        "damaged: download the model again")
    state = state_dict_from_hf(hf_sd, gcfg)
    cfg = from_dict(run_config_dict(gcfg))
    run = RunDir(out)
    run.start(force, resume_hint=False)  # --force: no file of an earlier run left behind
    run.write_config(cfg)
    run.write_tokenizer(tokenizer)
    payload = make_payload(state, cfg.to_dict(), tokenizer, 0, source=SOURCE, hf_dir=str(hf_dir.resolve()))
    run.save_checkpoint(payload, "last")
    run.unlock()
    params = param_breakdown("gpt", gcfg)
    return {"run_dir": str(out), "hf_dir": str(hf_dir), "weights": weights_from, "tokenizer": tokenizer_from,
            "vocab_size": gcfg.vocab_size, "tokenizer_vocab_size": tokenizer.vocab_size,
            "context_length": gcfg.context_length, "n_embd": gcfg.n_embd, "n_head": gcfg.n_head,
            "n_layer": gcfg.n_layer, "tie_embeddings": gcfg.tie_embeddings, "params": params}
