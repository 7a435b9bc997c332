"""`lrn export RUN_DIR --format hf --out DIR`: a GPT run as a Hugging Face GPT-2 directory."""

from __future__ import annotations

import lrngpt.api as api
from lrngpt.cli.common import add_checkpoint, add_force, add_out, command, emit


def register(sub) -> None:
    p = command(
        sub, "export", cmd_export, "export a GPT run as a Hugging Face GPT-2 directory (transformers, model hubs)",
        "Write a GPT run as a Hugging Face GPT-2 directory (config.json, model.safetensors, tokenizers, README.md) "
        "that transformers loads with no custom code and `lrn import-gpt2` reads back. Only pre-norm GPTs with a "
        "GELU or ReLU FFN are GPT-2; other runs are refused, naming the option.",
        "examples:\n  lrn export runs/gpt-cpu --format hf --out exports/gpt-cpu\n"
        "  lrn export runs/gpt-cpu --out exports/gpt-cpu-best --checkpoint best --json")
    p.add_argument("run_dir", help="the run directory to export (a GPT run)")
    p.add_argument("--format", choices=["hf"], default="hf",
                   help="hf: a Hugging Face transformers GPT-2 directory, the only format so far")
    add_out(p, "directory to write: new, empty, or an earlier export (with --force)")
    add_checkpoint(p, ("last", "best"), what="which weights to export")
    add_force(p, "an earlier export in --out that nobody changed; it is swapped for the new one whole")
    p.add_argument("--license", metavar="ID",
                   help="the licence on the model card, a Hub licence id (mit, apache-2.0, ...); default: the "
                        "corpus's when lrn knows it (tinystories cdla-sharing-1.0, nsmc cc0-1.0, stories mit)")


def cmd_export(args) -> None:
    r = api.export_hf(args.run_dir, args.out, checkpoint=args.checkpoint, force=args.force, license=args.license)
    zeros = f"; zero biases for {', '.join(r['zero_biases'])}" if r["zero_biases"] else ""
    text = (f"exported {r['run_dir']} (step {r['step']}, {r['params']:,} parameters, "
            f"{r['activation_function']}, tied {str(r['tie_word_embeddings']).lower()}{zeros}) to {r['out']}\n"
            f"load it: AutoModelForCausalLM.from_pretrained({r['out']!r}), AutoTokenizer.from_pretrained({r['out']!r})")
    if r["tokenizer_vocab_size"] < r["vocab_size"]:
        text += (f"\nnote: the tokenizer has {r['tokenizer_vocab_size']} tokens for the model's {r['vocab_size']} "
                 "rows (the corpus had no more merges); transformers loads it, lrn import-gpt2 refuses it")
    emit(args, r, text)
