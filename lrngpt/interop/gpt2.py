"""GPT-2 <-> lrn: the one name and config mapping, used by the importer here and the exporter
(hf_export.py), and the import of a local Hugging Face GPT-2 checkpoint (config.json; model.safetensors,
a sharded index or pytorch_model.bin; tokenizer.json or vocab.json + merges.txt) as an ordinary run
directory, all of it checked before anything is written.

GPT-2 is our GPT with every GPT-2 switch on (pre-norm, biases, tanh GELU, learned positions); only the
layout differs: Hugging Face's `Conv1D` weights are (in, out), the transpose of `nn.Linear`'s.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

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
    """Our GPTConfig for a Hugging Face GPT2Config dict; refuses the variants our GPT does not have."""
    def need(key):
        if not isinstance(hf.get(key), int) or isinstance(hf.get(key), bool):
            raise UserError(f"config.json lacks the integer {key!r} a GPT-2 config has")
        return hf[key]

    def number(key, default):
        value = hf.get(key, default)
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise UserError(f"config.json has {key} {value!r}; a number was expected")
        return value  # GPTConfig checks it is finite and in range

    def flag(key, default):
        value = hf.get(key, default)
        if not isinstance(value, bool):
            raise UserError(f"config.json has {key} {json.dumps(value)}; true or false was expected")
        return value

    V, D, T = need("vocab_size"), need("n_embd"), need("n_positions")
    if V < MIN_VOCAB:
        raise UserError(f"config.json has vocab_size {V}; lrn needs at least {MIN_VOCAB} (256 bytes + {EOT})")
    if D < 1:
        raise UserError(f"config.json has n_embd {D}; a positive width was expected")
    inner = hf.get("n_inner")
    if inner is None:
        inner = 4 * D
    if not isinstance(inner, int) or isinstance(inner, bool) or inner < 1:
        raise UserError(f"config.json has n_inner {json.dumps(inner)}; a positive integer or null was expected")
    if inner % D:
        raise UserError(f"config.json has n_inner {inner}, not a multiple of n_embd {D}; lrn's ffn_mult is whole")
    activation = hf.get("activation_function", "gelu_new")
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise UserError(f"config.json has activation_function {json.dumps(activation)}; "
                        f"lrn imports {', '.join(ACTIVATIONS)}")
    for key, unsupported in (("add_cross_attention", True), ("scale_attn_by_inverse_layer_idx", True),
                             ("scale_attn_weights", False)):
        if flag(key, not unsupported) == unsupported:
            raise UserError(f"config.json sets {key}={json.dumps(unsupported)}; "
                            "lrn's GPT has plain causal self-attention only")
    ffn, approximate = ACTIVATIONS[activation]
    try:
        return GPTConfig(
            vocab_size=V, context_length=T, n_embd=D, n_head=need("n_head"), n_layer=need("n_layer"),
            dropout=number("resid_pdrop", 0.0), ffn=ffn, ffn_mult=inner // D, norm_position="pre",
            qkv_bias=True, tie_embeddings=flag("tie_word_embeddings", True),
            init_std=number("initializer_range", 0.02), bias=True, gelu_approximate=approximate,
            layer_norm_eps=number("layer_norm_epsilon", 1e-5),
        )
    except UserError as e:  # GPTConfig speaks of model.KEY; say which file holds the value
        raise UserError(f"config.json: {e.text} (config.json's names: n_positions, n_embd, n_head, n_layer, "
                        "resid_pdrop, initializer_range, layer_norm_epsilon)") from None


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
        "vocab_size": g.vocab_size, "n_positions": g.context_length, "n_embd": g.n_embd,
        "n_layer": g.n_layer, "n_head": g.n_head, "n_inner": None if g.ffn_mult == 4 else g.ffn_mult * g.n_embd,
        "activation_function": activation,
        "resid_pdrop": g.dropout, "embd_pdrop": g.dropout, "attn_pdrop": g.dropout,
        "layer_norm_epsilon": g.layer_norm_eps, "initializer_range": g.init_std,
        "scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False,
        "reorder_and_upcast_attn": False, "add_cross_attention": False,
        "tie_word_embeddings": g.tie_embeddings, "use_cache": True,
        "bos_token_id": eot_id, "eos_token_id": eot_id, "dtype": "float32",
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
    checked key by key and shape by shape against the model the config describes."""
    with torch.device("meta"):
        expected = GPT(gcfg).state_dict()
    names = weight_names(gcfg.n_layer)
    from_hf = {hf: (ours, transpose) for ours, (hf, transpose) in names.items()}
    ours: dict[str, torch.Tensor] = {}
    source: dict[str, tuple[str, bool]] = {}  # our key -> (file key, transposed?) for error messages
    lm_head = None
    for key, tensor in hf_sd.items():
        name = key.removeprefix("transformer.")
        if BUFFER.fullmatch(name):
            continue
        if name == "lm_head.weight":
            lm_head = tensor
            continue
        if name not in from_hf:
            m = re.fullmatch(r"h\.\d+\.(.+)", name)
            if m and m.group(1) in LAYER:  # a block past n_layer
                raise UserError(f"weight {key!r} does not fit config.json (n_layer {gcfg.n_layer})")
            raise UserError(f"unexpected weight {key!r}; this is not a plain GPT-2 checkpoint")
        target, transpose = from_hf[name]
        ours[target] = (tensor.t() if transpose else tensor).float().contiguous()
        source[target] = (key, transpose)
    if gcfg.tie_embeddings:
        if "embedding.token.weight" in ours:
            ours["lm_head.weight"] = ours["embedding.token.weight"]  # one tensor, saved once
    elif lm_head is not None:
        ours["lm_head.weight"] = lm_head.float().contiguous()
        source["lm_head.weight"] = ("lm_head.weight", False)
    missing = [k for k in expected if k not in ours]
    if missing:
        in_file = names.get(missing[0], ("lm_head.weight", False))[0]  # the file's name of it
        raise UserError(f"the weights lack {in_file!r} (and {len(missing) - 1} more) that "
                        f"config.json implies (n_layer {gcfg.n_layer}); the file is incomplete or not GPT-2")
    for k, want in expected.items():
        if ours[k].shape != want.shape:
            key, transposed = source.get(k, (k, False))
            got, want = (ours[k].t(), want.t()) if transposed else (ours[k], want)  # the file's layout
            raise UserError(f"weight {key!r} has shape {tuple(got.shape)}, but config.json implies "
                            f"{tuple(want.shape)}; config.json and the weights do not belong together")
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


# ---- weights ------------------------------------------------------------------------------

def _safetensors_load(path: Path) -> dict[str, torch.Tensor]:
    st = safetensors()
    if st is None:
        raise UserError(f"{path.name} needs the safetensors package: `pip install safetensors` "
                        "(or `pip install lrngpt[gpt2]`), or put pytorch_model.bin in the directory")
    try:
        return st.load_file(str(path))
    except Exception as e:  # truncated or not a safetensors file
        raise UserError(f"{path} cannot be read as safetensors ({type(e).__name__}: {e})") from None


def _torch_load(path: Path) -> dict[str, torch.Tensor]:
    try:
        sd = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        raise UserError(f"{path} cannot be read as a PyTorch state dict ({type(e).__name__}); "
                        "it is truncated, corrupted or not plain tensors") from None
    if not isinstance(sd, dict):
        raise UserError(f"{path} does not hold a state dict")
    return sd


def _sharded(index: Path, load) -> dict[str, torch.Tensor]:
    try:
        files = sorted(set(json.loads(index.read_text())["weight_map"].values()))
    except (OSError, ValueError, KeyError, AttributeError, TypeError) as e:
        raise UserError(f"{index} is not a valid weight index ({type(e).__name__}: {e})") from None
    sd = {}
    for name in files:
        if not (index.parent / name).is_file():
            raise UserError(f"{index} lists {name}, which is missing from {index.parent}")
        sd.update(load(index.parent / name))
    return sd


def load_hf_weights(hf_dir: Path) -> tuple[dict[str, torch.Tensor], str]:
    """(state dict, file it came from): safetensors when the package is there, else pytorch_model.bin."""
    has_st = safetensors() is not None
    options = [("model.safetensors", _safetensors_load), ("model.safetensors.index.json", None),
               ("pytorch_model.bin", _torch_load), ("pytorch_model.bin.index.json", None)]
    present = [(name, load) for name, load in options if (hf_dir / name).is_file()]
    if not present:
        for name, _ in options:  # a FIFO or a device under a weights name: named, not "no weights"
            check_regular(hf_dir / name, "weights file")
        raise UserError(f"{hf_dir} has no model.safetensors or pytorch_model.bin; "
                        "download the PyTorch weights of the model into it")
    usable = [(n, f) for n, f in present if has_st or "safetensors" not in n]
    name, load = (usable or present)[0]  # without the package, the first (safetensors) explains itself
    path = hf_dir / name
    if load is None:
        return _sharded(path, _safetensors_load if "safetensors" in name else _torch_load), name
    return load(path), name


# ---- tokenizer ----------------------------------------------------------------------------

def load_hf_tokenizer(hf_dir: Path) -> tuple[Tokenizer, str]:
    """The directory's byte-level BPE: tokenizer.json, else vocab.json + merges.txt converted."""
    path = hf_dir / "tokenizer.json"
    if path.is_file():
        try:
            kind = json.loads(path.read_text(encoding="utf-8"))["model"]["type"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise UserError(f"{path} is not a valid tokenizer.json ({e})") from None
        if kind != "BPE":
            raise UserError(f"{path} is a {kind} tokenizer; lrn needs GPT-2's byte-level BPE")
        return _with_source(lambda: Tokenizer.load(path), path), "tokenizer.json"
    vocab, merges = hf_dir / "vocab.json", hf_dir / "merges.txt"
    if vocab.is_file() and merges.is_file():
        return _with_source(lambda: _from_vocab_merges(vocab, merges), vocab), "vocab.json+merges.txt"
    raise UserError(f"{hf_dir} has no tokenizer.json and no vocab.json + merges.txt; "
                    "lrn eval/sample need GPT-2's tokenizer: download those files into it")


def _from_vocab_merges(vocab: Path, merges: Path) -> Tokenizer:

    try:
        hf = HFTokenizer(models.BPE.from_file(str(vocab), str(merges)))
    except Exception as e:  # tokenizers raises plain Exceptions on malformed files
        raise UserError(f"{vocab.name} + {merges.name} cannot be read as a BPE vocabulary ({e})") from None
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens([EOT])  # GPT-2's vocab.json has it at 50256; this marks it special
    return Tokenizer(hf)


def _with_source(make, path: Path) -> Tokenizer:
    try:
        return make()
    except UserError as e:
        raise UserError(f"{path}: {e.text}") from None


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
