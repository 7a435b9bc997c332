"""Export a GPT run as a Hugging Face GPT-2 directory (`lrn export RUN --format hf --out DIR`).

DIR loads with transformers' AutoModelForCausalLM / AutoTokenizer.from_pretrained and no custom code,
and `lrn import-gpt2` reads it back: config.json, model.safetensors (float32, Conv1D layout, zeros for
biases we lack), generation_config.json, the BPE as tokenizer.json and as vocab.json + merges.txt,
tokenizer_config.json (split_special_tokens: a literal <|endoftext|> is text, as in lrn) and a model
card, README.md. GPT-2's positions are absolute: transformers cannot generate past n_positions, so the
card's snippet sizes its generation to fit (and generation_config.json has no max_length, which would
warn beside max_new_tokens). Only pre-norm GPTs with an ungated GELU or ReLU FFN are GPT-2; the rest are
refused, naming the option. Every file is built in memory first, then the directory is swapped in whole
(lrngpt.core.ownership.owned_dir); --force replaces only an earlier, unchanged export.
"""

from __future__ import annotations

import json
from pathlib import Path

from lrngpt.core import log as logging
from lrngpt.core.ownership import check_dir_target, owned_dir
from lrngpt.corpora.base import EOT
from lrngpt.corpora.hf import parse_spec
from lrngpt.corpora.tinystories import REPOSITORY as TINYSTORIES
from lrngpt.errors import UserError
from lrngpt.interop.gpt2 import LAYER, hf_config_from_gpt, safetensors, state_dict_to_hf
from lrngpt.store.rundir import RunDir, load_run
from lrngpt.tokenizer.bpe import Tokenizer

KIND = "hf-export"


def tokenizer_files(tok: Tokenizer, context_length: int) -> dict[str, str]:
    """tokenizer.json, vocab.json, merges.txt and tokenizer_config.json of the run's tokenizer."""
    model = json.loads(tok.to_str())["model"]
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    config = {
        "tokenizer_class": "GPT2Tokenizer", "bos_token": EOT, "eos_token": EOT, "unk_token": EOT,
        # eos as pad (GPT-2 has none) so padding=True works, on the left, where a decoder generates from
        "pad_token": EOT, "padding_side": "left", "add_prefix_space": False, "add_bos_token": False,
        "model_max_length": context_length, "errors": "replace",
        # GPT-2's default (true) rewrites " ," as "," when decoding; lrn decodes bytes as they are
        "clean_up_tokenization_spaces": False,
        # a literal <|endoftext|> in a text is text, as in lrn (the special id comes from eos_token_id)
        "split_special_tokens": True,
    }
    return {
        "tokenizer.json": tok.to_str(),
        "vocab.json": json.dumps(model["vocab"], ensure_ascii=False),
        "merges.txt": "#version: 0.2\n" + "".join(f"{m}\n" for m in merges),
        "tokenizer_config.json": json.dumps(config, indent=2, ensure_ascii=False) + "\n",
    }


# The snippet in the card and in the README (tests run both as written): generation sized to the context.
SNIPPET = """\
from transformers import AutoModelForCausalLM, AutoTokenizer
model = AutoModelForCausalLM.from_pretrained("PATH")
tok = AutoTokenizer.from_pretrained("PATH")
inputs = tok("Once upon a time", return_tensors="pt")
# positions are absolute: the prompt and the new tokens must fit the context (n_positions)
room = model.config.n_positions - inputs.input_ids.shape[1]
out = model.generate(**inputs, max_new_tokens=min(40, room), do_sample=True, top_k=40)
print(tok.decode(out[0]))
"""

# Corpora whose source and licence are known: (Hub dataset id, licence of the data).
KNOWN_DATA = {
    "tinystories": (TINYSTORIES, "cdla-sharing-1.0"),
    "nsmc": ("e9t/nsmc", "cc0-1.0"),
    "stories": (None, "mit"),  # lrn's own generator: its words and templates ship under lrn's MIT licence
}
# the same datasets read as `hf:ID`
KNOWN_HUB = {dataset: licence for dataset, licence in KNOWN_DATA.values() if dataset}


def card_metadata(corpus: str, license: str | None) -> tuple[str, list[str]]:
    """The card's licence (--license, else a known corpus's, else unknown) and Hub datasets for a corpus."""
    kind, _, arg = corpus.partition(":")
    dataset, known = KNOWN_DATA.get(kind, (None, None))  # tinystories:PATH is the same data on disk
    if kind == "hf":
        name = parse_spec(arg)[0]  # as the corpus read it: revision, config, split and ?stream dropped
        if name.count("/") == 1 and not Path(name).exists():  # a Hub id, not a local directory
            dataset, known = name, KNOWN_HUB.get(name)
    return license or known or "unknown", [dataset] if dataset else []


def _front_matter(name: str, license: str, datasets: list[str], corpus: str, bpb: float | None) -> str:
    """YAML front matter by huggingface_hub's ModelCardData (a dependency of lrn's), val bpb as an
    evaluation result, which the Hub shows."""
    from huggingface_hub import EvalResult, ModelCardData  # here: only an export needs it

    results = [] if bpb is None else [EvalResult(
        task_type="text-generation", dataset_type=datasets[0] if datasets else "custom", dataset_name=corpus,
        dataset_split="validation", metric_type="bits_per_byte", metric_name="validation bits per byte",
        metric_value=round(bpb, 6))]
    data = ModelCardData(library_name="transformers", license=license, pipeline_tag="text-generation",
                         tags=["gpt2", "lrn-gpt"], datasets=datasets or None, model_name=name,
                         eval_results=results or None)
    return data.to_yaml()


def model_card(run, hf_config: dict, params: int, summary: dict | None, checkpoint: str,
               license: str | None = None) -> str:
    """README.md for a model hub: what the model is, what it was trained on, how to load it."""
    c = run.config
    name = c.name or run.dir.name
    # summary.json's val_bpb is the final weights' (full split); the best checkpoint has its periodic one
    key, how = ("best_val_bpb", "best periodic evaluation") if checkpoint == "best" else ("val_bpb", "full split")
    value = (summary or {}).get(key)
    value = value if isinstance(value, int | float) and value == value else None
    bpb = f"{value:.4f} ({how})" if value is not None else "not measured"
    lic, datasets = card_metadata(c.data.corpus, license)
    ctx = hf_config["n_positions"]
    return f"""---
{_front_matter(name, lic, datasets, c.data.corpus, value)}
---

# {name}

A GPT-2-architecture language model trained with lrn-gpt and exported with `lrn export --format hf`.

| | |
| --- | --- |
| parameters | {params:,} |
| layers, heads, width | {hf_config['n_layer']}, {hf_config['n_head']}, {hf_config['n_embd']} |
| context length | {ctx} |
| vocabulary | {hf_config['vocab_size']} (byte-level BPE, `{EOT}` = id {hf_config['eos_token_id']}) |
| activation | {hf_config['activation_function']}, tied embeddings: {str(hf_config['tie_word_embeddings']).lower()} |
| training corpus | `{c.data.corpus}` |
| licence | {lic} |
| steps | {run.step:,} |
| validation bits per byte | {bpb} |

The context is {ctx} tokens, prompt included, and GPT-2's positions are absolute: transformers
cannot generate past it (an `IndexError`), so size the new tokens to fit, as below (without
`max_new_tokens`, transformers' default of 20 new tokens is capped at {ctx}). Inside the context
the logits and greedy text equal `lrn sample`'s; past it `lrn sample` slides its window, which
transformers does not. The tokenizer pads with `{EOT}` on the left, so `tok(texts, padding=True)`
batches; a literal `{EOT}` inside a text is text, as in lrn (`split_special_tokens`): the token
itself is `tok.eos_token_id`.

```python
{SNIPPET}```

`PATH` is this directory, or its id on a model hub.
"""


def export_run_hf(run_dir: str | Path, out: str | Path, checkpoint: str = "last", force: bool = False,
              license: str | None = None) -> dict:
    """Write the run's `checkpoint` weights as a Hugging Face GPT-2 directory; returns a summary.
    `license` (a Hub licence id such as mit) goes on the card (default: card_metadata's)."""
    run_dir, out = Path(run_dir), Path(out)
    check_dir_target(out, force, KIND)  # before any work
    run = load_run(run_dir, checkpoint)
    if run.config.model_type != "gpt":
        raise UserError(f"{run_dir} is not a GPT run (model_type {run.config.model_type!r}); only GPT runs "
                        "can be exported as GPT-2")
    gcfg = run.config.model
    try:
        hf_config = hf_config_from_gpt(gcfg, run.tokenizer.eot_id)
    except UserError as e:
        raise UserError(f"{run_dir} cannot be exported as GPT-2: {e.text}") from None
    st = safetensors()
    if st is None:
        raise UserError("exporting needs the safetensors package: `pip install safetensors` "
                        "(or `pip install lrngpt[gpt2]`)")

    sd = run.model.state_dict()
    tensors = state_dict_to_hf(sd, gcfg)
    zero_biases = [hf for hf, (ours, _) in LAYER.items() if f"blocks.0.{ours}" not in sd]
    params = run.model.param_breakdown()["total"]
    eot = run.tokenizer.eot_id
    files = {  # all in memory, in the order written, before --out changes
        "config.json": json.dumps(hf_config, indent=2) + "\n",
        "model.safetensors": st.save(tensors, metadata={"format": "pt"}),
        "generation_config.json": json.dumps({"bos_token_id": eot, "eos_token_id": eot, "pad_token_id": eot},
                                             indent=2) + "\n",
        **tokenizer_files(run.tokenizer, gcfg.context_length),
        "README.md": model_card(run, hf_config, params, RunDir(run_dir).summary(), checkpoint, license),
    }
    blobs = {name: f if isinstance(f, bytes) else f.encode("utf-8") for name, f in files.items()}
    check_dir_target(out, force, KIND)  # again, just before writing: the directory may have changed meanwhile
    with owned_dir(out, KIND) as tmp:
        for name, blob in blobs.items():
            (tmp / name).write_bytes(blob)
    logging.debug(f"export: {out} holds {', '.join(f'{n} ({len(b):,} B)' for n, b in blobs.items())}")
    return {"run_dir": str(run_dir), "out": str(out), "format": "hf", "checkpoint": checkpoint,
            "step": run.step, "files": list(blobs), "params": params,
            "vocab_size": hf_config["vocab_size"], "tokenizer_vocab_size": run.tokenizer.vocab_size,
            "activation_function": hf_config["activation_function"],
            "tie_word_embeddings": hf_config["tie_word_embeddings"], "zero_biases": zero_biases}
