"""`lrn train`, `lrn eval` and `lrn sample`: a run trained, measured in bits per byte and sampled
(lrngpt.api.runs: train, load)."""

from __future__ import annotations

import sys

import lrngpt.api as api
from lrngpt.cli.common import (
    add_checkpoint,
    add_corpus,
    add_device,
    add_force,
    add_out,
    add_set,
    command,
    emit,
    positive_int,
    seed,
)


def register(sub) -> None:
    p = command(
        sub, "train", cmd_train, "train an MLP or GPT language model",
        "Train one model from a named config (lrn config list) or a JSON or YAML file, changed with --set. The run "
        "directory gets the config, the tokenizer, metrics and checkpoints; --resume continues bit-exactly.",
        "examples:\n  lrn train --config mlp-cpu --out runs/mlp64\n"
        "  lrn train --config mlp-cpu --set model.n_embd=128 --out runs/mlp128\n"
        "  lrn train --config cpu --out runs/gpt-cpu                 # the seed project's small GPT\n"
        "  lrn train --config mlp-chapter --dry-run --json           # parameters, passes, config; no training\n"
        "  lrn train --out runs/mlp64 --resume\n"
        "  lrn train --out runs/mlp64 --resume --set train.steps=800 --extend   # train on, with a new schedule")
    p.add_argument("--config", metavar="NAME_OR_FILE",
                   help="a config name (lrn config list), a JSON or YAML file, or lrn config show --json output "
                        "(default: with --resume, the run's own)")
    add_set(p)
    add_corpus(p, sets_config=True)
    add_device(p, sets_config=True)
    add_out(p, "the run directory to write; no default, it is required unless --dry-run", metavar="RUN_DIR",
            required=False)
    p.add_argument("--steps", type=int,
                   help="stop at this global step; the schedule still follows train.steps (default: train.steps)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its ckpt_last.pt")
    p.add_argument("--extend", action="store_true",
                   help="with --resume: accept a new learning-rate schedule (train.steps, warmup_steps, lr or "
                        "min_lr) from the checkpoint's step on; without it such a resume is refused")
    add_force(p, "an earlier lrn run in --out: its files go, so two runs never mix")
    p.add_argument("--dry-run", action="store_true",
                   help="print the parameters, the training tokens, the tokens the steps read, the passes and the "
                        "steps of one pass; train and download nothing")
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
    p = command(sub, "sample", cmd_sample, "generate text from a trained run",
        "Continue a prompt with the run's model: temperature, then top-k, then top-p (nucleus) filtering; "
        "a fixed seed gives the same text every time. --temperature 0 is greedy decoding: the most likely "
        "token at every step.",
        'examples:\n  lrn sample runs/mlp64 --prompt "Once upon a time"\n'
        '  lrn sample runs/mlp64 --prompt "Lily saw a" --temperature 0.8 --top-k 40 --num-samples 3 --json\n'
        '  lrn sample runs/gpt-cpu --prompt "Once upon a time" --temperature 0   # greedy')
    p.add_argument("--prompt", required=True, help="the text to continue")
    p.add_argument("--max-new-tokens", type=int, default=100, help="tokens to generate at most")
    p.add_argument("--temperature", type=float, default=1.0, help="divides the logits; below 1 is more certain; 0 is greedy (the most likely token each step)")
    p.add_argument("--top-k", type=int, default=None, help="keep only the k most likely tokens (default: all of them)")
    p.add_argument("--top-p", type=float, default=1.0,
                   help="keep the most likely tokens that hold this much probability; 1.0 keeps all")
    p.add_argument("--seed", type=seed, default=0, help="random seed of the first sample")
    p.add_argument("--num-samples", type=positive_int, default=1, help="how many samples, with seeds seed, seed+1, ...")
    p.add_argument("--no-stop", action="store_true", help="keep going past <|endoftext|>")
    p.add_argument("--no-cache", action="store_true", help="GPT: recompute the whole window at every token instead of using the KV cache (same tokens, slower)")
    add_checkpoint(p)
    add_device(p)


def bpb(v, fmt: str = ".4f") -> str:  # summary.json holds null where there were no bytes to score
    return "n/a" if v is None else format(v, fmt)


def cmd_train(args) -> None:
    if args.dry_run:  # no network; a small local corpus is prepared (cached) to count its tokens
        r = api.plan(args.config, out=args.out if args.resume and not args.config else None, set=args.overrides,
                     corpus=args.corpus, device=args.device)
        return emit(args, r, api.texts.run_plan_text(r))
    summary = api.train(args.config, args.out, resume=args.resume, extend=args.extend, force=args.force,
                        steps=args.steps, set=args.overrides, corpus=args.corpus, device=args.device).result
    if summary is None:  # under torchrun, rank 0 alone reports
        return
    summary = {**summary, "run_dir": str(args.out)}
    text = (f"{args.out}: step {summary['step']}, val bpb {bpb(summary['val_bpb'])}"
            + (f", train bpb {bpb(summary['train_bpb'])}, gap {bpb(summary.get('gap'), '+.4f')}"
               if summary.get("train_bpb") is not None else ""))
    emit(args, summary, text)


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


def cmd_sample(args) -> None:
    result = api.load(args.run_dir, args.checkpoint, args.device).samples(
        args.prompt, args.num_samples, args.max_new_tokens, args.temperature, args.top_k, args.top_p, args.seed,
        stop_at_eot=not args.no_stop, use_cache=not args.no_cache,
        on_text=None if args.json else _printer())  # --json: one document at the end
    if args.json:
        emit(args, result)
    else:
        print(flush=True)  # what was printed is "\n---\n".join(the samples' texts), as it was generated


def _printer():
    """on_text: each piece printed at once, samples apart by a --- line; a reader that closes the pipe
    (`| head`) stops the sampling at the next token (BrokenPipeError: lrn exits quietly)."""
    current = 0

    def write(i: int, piece: str) -> None:
        nonlocal current
        if i != current:
            current = i
            sys.stdout.write("\n---\n")
        print(piece, end="", flush=True)

    return write
