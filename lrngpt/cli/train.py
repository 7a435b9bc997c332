"""`lrn train`: one run from a config file or preset."""

from __future__ import annotations

from lrngpt.cli.common import add_json, emit
from lrngpt.errors import UserError


def register(sub) -> None:
    p = sub.add_parser(
        "train", help="train an MLP or GPT language model",
        description="Train one model from a named config or a JSON or YAML file, changed with --set. Names: mlp-chapter "
                    "(the book chapter's MLP exactly, on TinyStories), mlp-cpu, mlp-tiny, gpt-default, and the "
                    "seed project's GPT configs cpu and nsmc (lrn config list says what each is; lrn config "
                    "show NAME lists every key). The run directory gets the config, the tokenizer, metrics and "
                    "checkpoints; --steps stops early and --resume continues bit-exactly.",
        epilog="examples:\n  lrn train --config mlp-cpu --out runs/mlp64\n"
               "  lrn train --config mlp-cpu --set model.n_embd=128 --out runs/mlp128\n"
               "  lrn train --config cpu --out runs/gpt-cpu                 # the seed project's small GPT\n"
               "  lrn train --config mlp-chapter --dry-run --json           # parameters and config, no training\n"
               "  lrn train --out runs/mlp64 --resume")
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
    p.add_argument("--force", action="store_true", help="start over in a directory that holds another run")
    p.add_argument("--dry-run", action="store_true",
                   help="print the parameter breakdown and the resolved config; train nothing, download nothing")
    add_json(p)
    p.set_defaults(func=cmd_train)


def resolve_config(args):
    from lrngpt.config import config_from, preset_names, read_config_dict
    from lrngpt.run import RunDir

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


def cmd_train(args) -> None:
    from lrngpt.models import param_breakdown
    from lrngpt.train import train

    cfg = resolve_config(args)
    if args.dry_run:  # touches neither the network nor the corpus
        from lrngpt.corpora import pinned_source

        params = param_breakdown(cfg.model_type, cfg.model)
        source = pinned_source(cfg.data.corpus)
        result = {"params": params, "config": cfg.to_dict(), "corpus": cfg.data.corpus,
                  "revision": source["revision"] if source else None}
        emit(args, result, "\n".join(f"{k:>20}: {v:,}" for k, v in params.items()))
        return
    if not args.out:
        raise UserError("give --out RUN_DIR, the directory the run writes to")
    summary = train(cfg, args.out, resume=args.resume, force=args.force, stop_at=args.steps)
    from lrngpt.distributed import Distributed

    if not Distributed.from_env().master:  # under torchrun, rank 0 alone reports
        return
    summary["run_dir"] = str(args.out)
    def bpb(v, fmt: str = ".4f") -> str:  # summary.json holds null where there were no bytes to score
        return "n/a" if v is None else format(v, fmt)

    text = (f"{args.out}: step {summary['step']}, val bpb {bpb(summary['val_bpb'])}"
            + (f", train bpb {bpb(summary['train_bpb'])}, gap {bpb(summary.get('gap'), '+.4f')}"
               if summary.get("train_bpb") is not None else ""))
    emit(args, summary, text)
