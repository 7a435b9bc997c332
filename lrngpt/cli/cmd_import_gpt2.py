"""`lrn import-gpt2 HF_DIR --out RUN_DIR`: a local Hugging Face GPT-2 checkpoint as an lrn run."""

from __future__ import annotations

import lrngpt.api as api
from lrngpt.cli.common import add_force, add_out, command, emit


def register(sub) -> None:
    p = command(
        sub, "import-gpt2", cmd_import_gpt2, "import a local Hugging Face GPT-2 directory as a run",
        "Read a local Hugging Face GPT-2 directory (config.json; model.safetensors or "
        "pytorch_model.bin; tokenizer.json or vocab.json + merges.txt) and write an lrn run "
        "directory that lrn eval, sample and embed accept. Nothing is downloaded.",
        "examples:\n  lrn import-gpt2 path/to/hf-gpt2 --out runs/gpt2\n"
        "  lrn import-gpt2 exports/gpt-cpu --out runs/gpt-cpu-back --force --json")
    p.add_argument("hf_dir", help="the Hugging Face model directory (config.json, weights, tokenizer)")
    add_out(p, "the run directory to write", metavar="RUN_DIR")
    add_force(p, "an lrn run already in --out (only its own files go)")


def cmd_import_gpt2(args) -> None:
    r = api.import_gpt2(args.hf_dir, args.out, force=args.force)
    text = (f"imported {r['hf_dir']} ({r['weights']}, {r['tokenizer']}) into {r['run_dir']}: "
            f"{r['params']['total']:,} parameters, V {r['vocab_size']}, context {r['context_length']}, "
            f"D {r['n_embd']}, H {r['n_head']}, L {r['n_layer']}\n"
            f"try: lrn sample {r['run_dir']} --prompt 'Once upon a time' --top-k 40")
    emit(args, r, text)
