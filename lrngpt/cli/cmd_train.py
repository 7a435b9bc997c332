"""`lrn train`: one run from a config file or preset."""

from __future__ import annotations

from lrngpt.cli.common import add_json, emit
from lrngpt.errors import UserError


def register(sub) -> None:
    p = sub.add_parser(
        "train", help="train an MLP or GPT language model",
        description="Train one model from a named config or a JSON or YAML file, changed with --set. Names: mlp-chapter "
                    "(the book chapter's MLP and protocol, on TinyStories), mlp-cpu, mlp-tiny, gpt-default, and the "
                    "seed project's GPT configs cpu and nsmc (lrn config list says what each is; lrn config "
                    "show NAME lists every key). The run directory gets the config, the tokenizer, metrics and "
                    "checkpoints; --steps stops early and --resume continues bit-exactly.",
        epilog="examples:\n  lrn train --config mlp-cpu --out runs/mlp64\n"
               "  lrn train --config mlp-cpu --set model.n_embd=128 --out runs/mlp128\n"
               "  lrn train --config cpu --out runs/gpt-cpu                 # the seed project's small GPT\n"
               "  lrn train --config mlp-chapter --dry-run --json           # parameters, passes, config; no training\n"
               "  lrn train --out runs/mlp64 --resume\n"
               "  lrn train --out runs/mlp64 --resume --set train.steps=800 --extend   # train on, with a new schedule")
    p.add_argument("--config", metavar="NAME_OR_FILE",
                   help="a config name (lrn config list), a JSON or YAML file, or lrn config show --json output (default: with --resume, the run's own)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set model.n_embd=128 or train.compile=True (JSON, else a Python literal, else a string); the keys: lrn config keys")
    p.add_argument("--corpus", metavar="CORPUS",
                   help="shorthand for --set data.corpus=CORPUS (default: the config's data.corpus)")
    p.add_argument("--device", help="shorthand for --set train.device=DEV: auto, cpu, cuda, cuda:N or mps "
                                    "(default: the config's train.device)")
    p.add_argument("--out", metavar="RUN_DIR", help="the run directory to write; no default, it is required unless --dry-run")
    p.add_argument("--steps", type=int,
                   help="stop at this global step; the schedule still follows train.steps (default: train.steps)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its ckpt_last.pt")
    p.add_argument("--extend", action="store_true",
                   help="with --resume: accept a new learning-rate schedule (another train.steps, warmup_steps, lr "
                        "or min_lr) from the checkpoint's step on, recorded in the run; without it such a resume "
                        "is refused, since the rate would jump")
    p.add_argument("--force", action="store_true", help="start over in a directory that holds another run")
    p.add_argument("--dry-run", action="store_true",
                   help="print the parameter breakdown, the training tokens, the tokens the steps read, the passes "
                        "over the training text and the steps of one pass; train nothing, download nothing (a "
                        "small local corpus is prepared, and cached, to count its tokens)")
    add_json(p)
    p.set_defaults(func=cmd_train)


def resolve_config(args):
    from lrngpt.runconfig.schema import config_from, preset_names, read_config_dict
    from lrngpt.store.rundir import RunDir

    overrides = list(args.overrides)
    if args.corpus:
        overrides.append(f"data.corpus={args.corpus}")
    if args.device:
        overrides.append(f"train.device={args.device}")
    if args.config:
        base, source = read_config_dict(args.config), args.config
    elif args.resume and args.out:
        RunDir(args.out).check_is_run()  # --resume of a directory that holds no run: say that, not "give --config"
        base, source = RunDir(args.out).config_dict(), str(RunDir(args.out) / "config.json")
    else:
        raise UserError(f"give --config NAME_OR_FILE (names: {', '.join(preset_names())}; lrn config list)")
    return config_from(base, overrides, source)


def run_sizing(cfg) -> tuple[dict, str]:
    """What a run reads: its training tokens (None where the corpus is big or remote and not prepared
    yet), the tokens its steps read, the passes over the training text and the steps of one pass."""
    from lrngpt.data.prepared import dry_run_prepared

    tc = cfg.train
    read = tc.steps * tc.tokens_per_step
    data = dry_run_prepared(cfg.data, log=lambda m: None)
    n_train = len(data.tokens("train")) if data is not None else None
    doc = {"train_tokens": n_train, "val_tokens": len(data.tokens("val")) if data is not None else None,
           "tokens_read": read, "passes": read / max(1, n_train) if n_train is not None else None,
           "one_pass_steps": max(1, n_train // tc.tokens_per_step) if n_train is not None else None}
    steps = f"{tc.steps:,} steps x {tc.batch_size} x {tc.seq_len} read {read:,} tokens"
    if n_train is None:
        return doc, (f"data: {steps}; {cfg.data.corpus} is not prepared yet (big, or downloaded): "
                     f"`lrn data prepare --corpus {cfg.data.corpus}` counts its tokens, and so does training")
    return doc, (f"data: {n_train:,} training tokens; {steps} = {doc['passes']:.2f} passes over the training "
                 f"text; one pass is --set train.steps={doc['one_pass_steps']:,}")


def cmd_train(args) -> None:
    from lrngpt.models import param_breakdown
    from lrngpt.training.trainer import train

    cfg = resolve_config(args)
    if args.dry_run:  # no network; a small local corpus is prepared (cached) to count its tokens
        from lrngpt.corpora import pinned_source

        params = param_breakdown(cfg.model_type, cfg.model)
        source = pinned_source(cfg.data.corpus)
        sizing, said = run_sizing(cfg)
        result = {"params": params, "config": cfg.to_dict(), "corpus": cfg.data.corpus,
                  "revision": source["revision"] if source else None, **sizing}
        from lrngpt.runconfig.help import width_line

        shape = width_line(cfg)  # a GPT's depth, width and heads; how an aspect ratio gave the width
        emit(args, result, "\n".join([*(f"{k:>20}: {v:,}" for k, v in params.items()), *([shape] if shape else []),
                                      said]))
        return
    if not args.out:
        raise UserError("give --out RUN_DIR, the directory the run writes to")
    if args.extend and not args.resume:
        raise UserError("--extend continues a run with a new schedule; give it with --resume")
    summary = train(cfg, args.out, resume=args.resume, force=args.force, stop_at=args.steps, extend=args.extend)
    from lrngpt.device.distributed import Distributed

    if not Distributed.from_env().master:  # under torchrun, rank 0 alone reports
        return
    summary["run_dir"] = str(args.out)
    def bpb(v, fmt: str = ".4f") -> str:  # summary.json holds null where there were no bytes to score
        return "n/a" if v is None else format(v, fmt)

    text = (f"{args.out}: step {summary['step']}, val bpb {bpb(summary['val_bpb'])}"
            + (f", train bpb {bpb(summary['train_bpb'])}, gap {bpb(summary.get('gap'), '+.4f')}"
               if summary.get("train_bpb") is not None else ""))
    emit(args, summary, text)
