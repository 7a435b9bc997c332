"""`lrn eval RUN_DIR`: bits per byte of a run's checkpoint."""

from __future__ import annotations

import lrngpt.api as api
from lrngpt.cli.common import add_checkpoint, add_corpus, add_device, command, emit, positive_int


def register(sub) -> None:
    p = command(
        sub, "eval", cmd_eval, "bits per byte of a trained run",
        "Validation bits per byte over the full validation split, training bpb over train.train_eval_tokens "
        "tokens, their gap (val - train) and the passes the run made over its training text. Bits per byte do "
        "not depend on the tokenizer, so runs with different vocabularies compare.",
        "examples:\n  lrn eval runs/mlp64 --json\n"
        "  lrn eval runs/mlp64 --checkpoint init --split val     # the untrained weights\n"
        "  lrn eval runs/mlp64 --context full --split val        # every target with its true history\n"
        "  lrn eval runs/mlp64 --by-reads   # train bpb of the targets read vs never read in training\n"
        "  lrn eval runs/mlp64 --corpus text:other.txt --split val")
    p.add_argument("run_dir", help="a run directory (lrn train --out)")
    p.add_argument("--split", choices=["val", "train"], default=None,
                   help="only this split (default: both, and their gap)")
    p.add_argument("--max-tokens", type=positive_int,
                   help="evaluate about N tokens, in windows spread evenly over the split, or its first N with the "
                        "run's train.eval_windows=prefix (default: all)")
    p.add_argument("--train-tokens", type=positive_int,
                   help="training-text tokens, spread over the split or its first ones as train.eval_windows says "
                        "(default: the run's train.train_eval_tokens)")
    add_checkpoint(p)
    p.add_argument("--context", choices=["window", "full"], default="window",
                   help="window: each seq_len window starts fresh, as in training and the book chapter's numbers; "
                        "full: every target gets its true preceding tokens (the GPT: windows overlapping by half)")
    p.add_argument("--by-reads", action="store_true",
                   help="split the train bpb into the targets training read at least once and those it never "
                        "read (the run's batches replayed from its seed): memorising vs. a different text")
    add_corpus(p, help="evaluate on another corpus, encoded with the run's tokenizer (default: the run's own)")
    add_device(p)


def cmd_eval(args) -> None:
    r = api.load(args.run_dir, args.checkpoint, args.device).eval(
        args.split, args.context, args.max_tokens, args.train_tokens, args.corpus, by_reads=args.by_reads)
    parts = [f"step {r['step']}" + (", full context" if args.context == "full" else "")]
    if "val_bpb" in r:
        parts.append(f"val bpb {r['val_bpb']:.4f} ({r['val_tokens']:,} tokens, {r['val_bytes']:,} bytes)")
    if "train_bpb" in r:
        parts.append(f"train bpb {r['train_bpb']:.4f}")
    if "train_bpb_read" in r:
        parts.append(f"(read {r['train_bpb_read']:.4f}, never read {r['train_bpb_unread']:.4f}; "
                     f"{r['read_share']:.1%} of training targets read)")
    if "gap" in r:
        parts.append(f"gap {r['gap']:+.4f}")
    if r.get("passes") is not None:
        parts.append(f"{r['passes']:.2f} passes over the training text")
    if r.get("best_val_bpb") is not None:
        parts.append(f"best periodic val bpb {r['best_val_bpb']:.4f} at step {r['best_step']}")
    emit(args, r, ", ".join(parts))
