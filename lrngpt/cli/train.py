"""`lrn train`: one run from a config file or preset."""

from __future__ import annotations

import os

from lrngpt.cli.common import add_json, emit
from lrngpt.errors import UserError


def register(sub) -> None:
    p = sub.add_parser("train", help="train an MLP or GPT language model",
                       description="Train a model. Presets: mlp-chapter, mlp-cpu, mlp-tiny, gpt-default, "
                                   "or a JSON file such as configs/cpu.json.")
    p.add_argument("--config", help="a preset name or a JSON file (default with --resume: the run's own)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set model.n_embd=128 (repeatable)")
    p.add_argument("--corpus", help="shorthand for --set data.corpus=SPEC")
    p.add_argument("--device", help="shorthand for --set train.device=DEV (auto, cpu, cuda, mps)")
    p.add_argument("--out", help="run directory")
    p.add_argument("--steps", type=int, help="stop at this global step (default: train.steps)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from ckpt_last.pt")
    p.add_argument("--force", action="store_true", help="start over in a directory that holds another run")
    p.add_argument("--dry-run", action="store_true", help="print the parameter breakdown and config; train nothing")
    add_json(p)
    p.set_defaults(func=cmd_train)


def resolve_config(args):
    from lrngpt.config import apply_overrides, from_dict, preset_names, read_config_dict
    from lrngpt.run import RunDir

    overrides = list(args.overrides)
    if args.corpus:
        overrides.append(f"data.corpus={args.corpus}")
    if args.device:
        overrides.append(f"train.device={args.device}")
    if args.config:
        base, source = read_config_dict(args.config), args.config
    elif args.resume and args.out and RunDir(args.out).holds_run():
        base, source = RunDir(args.out).config_dict(), str(RunDir(args.out) / "config.json")
    else:
        raise UserError(f"give --config PRESET_OR_FILE (presets: {', '.join(preset_names())})")
    try:
        return from_dict(apply_overrides(base, overrides))
    except UserError as e:
        try:
            from_dict(base)
        except UserError:  # the file itself is at fault, not a --set: name it
            raise UserError(f"{source}: {e}") from None
        raise


def cmd_train(args) -> None:
    from lrngpt.models import param_breakdown
    from lrngpt.train import train

    cfg = resolve_config(args)
    if args.dry_run:
        params = param_breakdown(cfg.model_type, cfg.model)
        result = {"params": params, "config": cfg.to_dict()}
        emit(args, result, "\n".join(f"{k:>20}: {v:,}" for k, v in params.items()))
        return
    if not args.out:
        raise UserError("give --out RUN_DIR, the directory the run writes to")
    summary = train(cfg, args.out, resume=args.resume, force=args.force, stop_at=args.steps)
    if int(os.environ.get("RANK", 0)) != 0:  # under torchrun, rank 0 alone reports
        return
    summary["run_dir"] = str(args.out)
    def bpb(v, fmt: str = ".4f") -> str:  # summary.json holds null where there were no bytes to score
        return "n/a" if v is None else format(v, fmt)

    text = (f"{args.out}: step {summary['step']}, val bpb {bpb(summary['val_bpb'])}"
            + (f", train bpb {bpb(summary['train_bpb'])}, gap {bpb(summary.get('gap'), '+.4f')}"
               if summary.get("train_bpb") is not None else ""))
    emit(args, summary, text)
