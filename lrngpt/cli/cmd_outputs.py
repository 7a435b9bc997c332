"""`lrn report`, `lrn import-gpt2` and `lrn export`: what lrn writes for people and other tools
(lrngpt.api.outputs): an HTML page of runs or sweeps, a Hugging Face GPT-2 directory in and out."""

from __future__ import annotations

import lrngpt.api as api
from lrngpt.cli.common import add_checkpoint, add_force, add_out, command, emit


def register(sub) -> None:
    p = command(
        sub, "report", cmd_report, "a run or sweep directory (or several sweeps) as one self-contained HTML page",
        "Write one HTML file (every image inside, so it opens offline) that leads with the headline numbers and "
        "figures, and beside it OUT-explorer.html, the embedding explorer. Several sweep directories share one "
        "page. A width study's page opens with the book chapter's three findings, each judged on the sweeps given: "
        "give its seed-variance and small-data sweeps too; --json carries them ('findings').",
        "examples:\n"
        "  lrn report runs/embed-dim        # runs/embed-dim/report.html + report-explorer.html\n"
        "  lrn report runs/embed-dim runs/embed-dim-long   # both sweeps on one page\n"
        "  lrn report runs/small runs/full  # small-data curves over the full-data val bpb\n"
        '  lrn report runs/mine --token " Lily" --token " happy" --checkpoint best')
    p.add_argument("dirs", nargs="+", metavar="DIR",
                   help="a run directory (lrn train --out), or one or more sweep directories (lrn sweep --out)")
    add_out(p, "the HTML file to write; an earlier page lrn wrote is replaced, any other file never (default "
               "DIR/report.html; for several sweeps FIRST/report-with-OTHERS.html)", metavar="FILE", required=False)
    p.add_argument("--token", dest="tokens", action="append", metavar="TEXT",
                   help='a token or word for the neighbour table, with its leading space: --token " Lily" '
                        "(repeatable; default: frequent content words, or the stories corpus's category words)")
    add_checkpoint(p, default=None, what="the weights whose neighbours are shown",
                   extra=" (default: the last, and the best beside it when they differ)", run=None)
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
    p = command(
        sub, "export", cmd_export, "export a GPT run as a Hugging Face GPT-2 directory (transformers, model hubs)",
        "Write a GPT run as a Hugging Face GPT-2 directory (config.json, model.safetensors, tokenizers, README.md) "
        "that transformers loads with no custom code and `lrn import-gpt2` reads back. Only pre-norm GPTs with a "
        "GELU or ReLU FFN are GPT-2; other runs are refused, naming the option.",
        "examples:\n  lrn export runs/gpt-cpu --format hf --out exports/gpt-cpu\n"
        "  lrn export runs/gpt-cpu --out exports/gpt-cpu-best --checkpoint best --json")
    p.add_argument("--format", choices=["hf"], default="hf",
                   help="hf: a Hugging Face transformers GPT-2 directory, the only format so far")
    add_out(p, "directory to write: new, empty, or an earlier export (with --force)")
    add_checkpoint(p, ("last", "best"), what="which weights to export", run="the run directory to export (a GPT run)")
    add_force(p, "an earlier export in --out that nobody changed; it is swapped for the new one whole")
    p.add_argument("--license", metavar="ID",
                   help="the licence on the model card, a Hub licence id (mit, apache-2.0, ...); default: the "
                        "corpus's when lrn knows it (tinystories cdla-sharing-1.0, nsmc cc0-1.0, stories mit)")


def cmd_report(args) -> None:
    r = api.write_report(args.dirs, args.out, tokens=args.tokens, checkpoint=args.checkpoint)
    emit(args, r, f"wrote {r['path']} ({', '.join(r['sections'])})"
                  + (f" and {r['explorer']}" if r["explorer"] else ""))


def cmd_import_gpt2(args) -> None:
    r = api.import_gpt2(args.hf_dir, args.out, force=args.force)
    text = (f"imported {r['hf_dir']} ({r['weights']}, {r['tokenizer']}) into {r['run_dir']}: "
            f"{r['params']['total']:,} parameters, V {r['vocab_size']}, context {r['context_length']}, "
            f"D {r['n_embd']}, H {r['n_head']}, L {r['n_layer']}\n"
            f"try: lrn sample {r['run_dir']} --prompt 'Once upon a time' --top-k 40")
    emit(args, r, text)


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
