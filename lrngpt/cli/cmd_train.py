"""`lrn train`: one run from a config file or preset."""

from __future__ import annotations

import lrngpt.api as api
from lrngpt.cli.common import add_corpus, add_device, add_force, add_out, add_set, command, emit


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
