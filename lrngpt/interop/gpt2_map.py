"""The one GPT-2 <-> lrn mapping, used by the importer (gpt2.py) and the exporter (hf_export.py).

GPT-2 is our GPT with every GPT-2 switch on (pre-norm, biases, tanh GELU, learned positions); only the
layout differs: Hugging Face's `Conv1D` weights are (in, out), the transpose of `nn.Linear`'s.
"""

from __future__ import annotations

import importlib
import json
import re

import torch

from lrngpt.corpora.base import EOT
from lrngpt.errors import UserError
from lrngpt.models.gpt import GPT, GPTConfig
from lrngpt.tokenizer.bpe import MIN_VOCAB

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
    """The GPT2Config dict (config.json) of our GPT; refuses, naming the option, what GPT-2 lacks.

    Biases need no check: GPT-2 has one on every linear, and a bias we do not have is exported
    as zeros, which computes exactly what our bias-free linear does.
    """
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

def state_dict_from_hf(hf_sd: dict[str, torch.Tensor], gcfg: GPTConfig) -> dict[str, torch.Tensor]:
    """Hugging Face GPT-2 weights -> our GPT's state dict (float32, Conv1D weights transposed),
    checked key by key and shape by shape against the model the config describes."""
    with torch.device("meta"):
        expected = GPT(gcfg).state_dict()
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
        m = re.fullmatch(r"h\.(\d+)\.(.+)", name)
        if name in TOP:
            target, transpose = TOP[name], False
        elif m and m.group(2) in LAYER:
            target, transpose = LAYER[m.group(2)]
            target = f"blocks.{m.group(1)}.{target}"
        else:
            raise UserError(f"unexpected weight {key!r}; this is not a plain GPT-2 checkpoint")
        if target not in expected:
            raise UserError(f"weight {key!r} does not fit config.json (n_layer {gcfg.n_layer})")
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
        raise UserError(f"the weights lack {hf_name(missing[0])!r} (and {len(missing) - 1} more) that "
                        f"config.json implies (n_layer {gcfg.n_layer}); the file is incomplete or not GPT-2")
    for k, want in expected.items():
        if ours[k].shape != want.shape:
            key, transposed = source.get(k, (k, False))
            got, want = (ours[k].t(), want.t()) if transposed else (ours[k], want)  # the file's layout
            raise UserError(f"weight {key!r} has shape {tuple(got.shape)}, but config.json implies "
                            f"{tuple(want.shape)}; config.json and the weights do not belong together")
    return {k: ours[k] for k in expected}


def state_dict_to_hf(sd: dict[str, torch.Tensor], gcfg: GPTConfig) -> dict[str, torch.Tensor]:
    """Our GPT's state dict -> GPT2LMHeadModel's (names, Conv1D layout, float32, contiguous).

    A bias our model does not have becomes zeros; a tied head is left out, as Hugging Face saves
    it (safetensors refuses two names for one tensor, and from_pretrained re-ties it).
    """
    out: dict[str, torch.Tensor] = {}
    for hf, ours in TOP.items():
        out[f"transformer.{hf}"] = sd[ours]
    for i in range(gcfg.n_layer):
        for hf, (ours, transpose) in LAYER.items():
            key = f"blocks.{i}.{ours}"
            if key in sd:
                tensor = sd[key].t() if transpose else sd[key]
            else:  # an absent bias: zeros the width of its weight's output
                tensor = torch.zeros(sd[key.removesuffix("bias") + "weight"].shape[0])
            out[f"transformer.h.{i}.{hf}"] = tensor
    if not gcfg.tie_embeddings:
        out["lm_head.weight"] = sd["lm_head.weight"]
    return {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in out.items()}


def hf_name(our_key: str) -> str:
    """The Hugging Face name of one of our keys (messages speak the file's language)."""
    reverse = {ours: hf for hf, ours in TOP.items()} | {"lm_head.weight": "lm_head.weight"}
    m = re.fullmatch(r"blocks\.(\d+)\.(.+)", our_key)
    if m:
        reverse |= {f"blocks.{m.group(1)}.{ours}": f"h.{m.group(1)}.{hf}" for hf, (ours, _) in LAYER.items()}
    return reverse.get(our_key, our_key)
