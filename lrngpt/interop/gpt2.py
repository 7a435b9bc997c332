"""Import a local Hugging Face GPT-2 checkpoint (config.json; model.safetensors, a sharded index or
pytorch_model.bin; tokenizer.json or vocab.json + merges.txt) as an ordinary lrn run directory, all of
it checked before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers

from lrngpt.core.fsio import check_output, check_regular, read_json
from lrngpt.corpora.base import EOT
from lrngpt.errors import UserError, option
from lrngpt.interop.gpt2_map import gpt_config_from_hf, safetensors, state_dict_from_hf
from lrngpt.models.build import param_breakdown
from lrngpt.models.gpt import GPTConfig
from lrngpt.runconfig.schema import from_dict
from lrngpt.store.checkpoint import make_payload, non_finite_tensor
from lrngpt.store.rundir import RunDir
from lrngpt.tokenizer.bpe import Tokenizer

SOURCE = "gpt2-import"


# ---- config -------------------------------------------------------------------------------

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
    run.start(force, kind=SOURCE, resume_hint=False)  # --force: no file of an earlier run left behind
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
