"""`lrn sweep STUDY_OR_FILE --out DIR`: the book chapter's width studies, or any grid of config keys."""

from __future__ import annotations

import lrngpt.api as api
from lrngpt.api.frontend import BUDGET_HELP, CLI_SCALES, QUIET_MACHINE, STUDIES
from lrngpt.cli.common import add_corpus, add_device, add_out, add_set, command, emit, stderr_note

KEYS = ("rows", "table", "figures", "scale", "sweep", "preset", "corpus", "about", "by_width", "seeds", "pending",
        "tables", "lines", "trained", "skipped", "busy", "kept", "shard", "findings", "packing")  # what --json prints


def register(sub) -> None:
    p = command(
        sub, "sweep", cmd_sweep, "run a grid of training runs (the embedding-width study) and tabulate it",
        "Train one run per point of a grid (config keys x seeds), skipping finished points and resuming killed "
        "ones, then write DIR/summary.{md,csv,json} and figures; for a width study, judge the book chapter's three "
        f"findings on it. Studies: {', '.join(STUDIES)}; or a sweep file (JSON with base, set, axes, scale). cpu and "
        "tiny scales shrink length, batch and corpus, never what the study varies. In a Slurm job array, each task "
        "runs its own shard.",
        "examples:\n  lrn sweep embed-dim --scale cpu --out runs/embed-dim\n"
        "  lrn sweep embed-dim --minutes 25 --out runs/width --dry-run     # the plan for an evening, nothing run\n"
        "  lrn sweep embed-dim --scale full --out runs/embed-dim-full --dry-run   # the grid, nothing run\n"
        "  lrn sweep embed-dim --scale cpu --out runs/wide --axis model.n_embd=64,1024\n"
        "  lrn sweep embed-dim --scale cpu --out runs/mine --corpus text:my.txt   # the study on your text\n"
        "  lrn sweep embed-dim --out runs/embed-dim --summary-only --json          # from DIR alone")
    p.add_argument("source", metavar="STUDY_OR_FILE", help=f"a study ({', '.join(STUDIES)}) or a sweep file (.json)")
    add_out(p, "the sweep directory (shared by all shards)")
    p.add_argument("--scale", choices=CLI_SCALES,
                   help="full: the book chapter's protocol (a GPU job); cpu: about 30 min for embed-dim on "
                        f"{QUIET_MACHINE}; tiny: seconds (default: the file's, else DIR's, else full with a CUDA GPU)")
    p.add_argument("--minutes", type=float, metavar="N", help=BUDGET_HELP)
    p.add_argument("--shard", metavar="I/N",
                   help="run only the points k with k mod N == I (default: in a Slurm job array, task k of "
                        "SLURM_ARRAY_TASK_COUNT, counted from SLURM_ARRAY_TASK_MIN; else 0/1, every point)")
    p.add_argument("--points-at-once", type=int, metavar="N",
                   help="train N points at a time, each in its own process with its share of the CPU threads "
                        "(default: chosen from a measurement of the smallest and largest model, said in the dry run)")
    add_set(p, "a base config value")
    add_corpus(p, sets_config=True)
    p.add_argument("--axis", dest="axes", action="append", default=[], metavar="KEY=V1,V2",
                   help="replace or add an axis, e.g. --axis model.n_embd=8,64,512")
    add_device(p, sets_config=True)
    p.add_argument("--dry-run", action="store_true",
                   help="list this shard's points: state, steps, passes and the time 3 timed steps of each model "
                        "estimate here; train and download nothing")
    p.add_argument("--summary-only", action="store_true",
                   help="only gather the summary (and the findings) from the run directories in DIR, read from "
                        "DIR alone: the other options are not needed and not used")


def cmd_sweep(args) -> None:
    if args.summary_only:  # read-only: from the directory alone, whatever the other flags say
        doc = api.load_sweep(args.out).summarize()
    else:
        what = dict(scale=args.scale, out=args.out, set=args.overrides, axes=args.axes, corpus=args.corpus,
                    device=args.device, minutes=args.minutes, shard=args.shard, notes=stderr_note("sweep"),
                    points_at_once=args.points_at_once)
        if args.dry_run:
            r = api.sweep(args.source, dry_run=True, **what)
            return emit(args, r, api.texts.sweep_dry_run_text(r))
        doc = api.sweep(args.source, **what).result or {}
    emit(args, {k: doc[k] for k in KEYS if k in doc}, api.texts.sweep_summary_text(doc, args.out))
