"""`lrn sweep STUDY_OR_FILE --out DIR`: the book chapter's width studies, or any grid of config keys."""

from __future__ import annotations

from lrngpt.cli.common import add_json, emit
from lrngpt.errors import UserError


def register(sub) -> None:
    from lrngpt.experiments.budget import BUDGET_HELP
    from lrngpt.experiments.presets import CLI_SCALES, STUDIES

    p = sub.add_parser(
        "sweep", help="run a grid of training runs (the embedding-width study) and tabulate it",
        description="Train one run per point of a grid (config keys x seeds), skipping finished points and "
                    "resuming killed ones, then write DIR/lines.txt, DIR/summary.{md,csv,json} and "
                    f"DIR/figures/*.png; for a width study, judge the book chapter's three findings on it (the closing "
                    "lines; 'findings' in --json). Studies of the book chapter on choosing the embedding width: "
                    f"{', '.join(STUDIES)}; or a sweep file (JSON with base, set, axes, scale). --scale full is "
                    "the book chapter's protocol (on TinyStories, lrn's choice of text: a pinned revision, 2.2 GB; its "
                    "shape, schedule and evaluation windows; a GPU job); cpu and tiny shrink length, batch and corpus, never what the study varies. In a Slurm "
                    "job array, each task runs its own shard.",
        epilog="examples:\n  lrn sweep embed-dim --scale cpu --out runs/embed-dim\n"
               "  lrn sweep embed-dim --minutes 25 --out runs/width --dry-run     # the plan for an evening, nothing run\n"
               "  lrn sweep embed-dim --scale full --out runs/embed-dim-full --dry-run   # the grid, nothing run\n"
               "  lrn sweep embed-dim --scale cpu --out runs/wide --axis model.n_embd=64,1024\n"
               "  lrn sweep embed-dim --scale cpu --out runs/embed-dim --summary-only --json")
    p.add_argument("source", metavar="STUDY_OR_FILE",
                   help=f"a study ({', '.join(STUDIES)}) or a sweep file (.json)")
    p.add_argument("--out", required=True, help="the sweep directory (shared by all shards)")
    p.add_argument("--scale", choices=CLI_SCALES,
                   help="full: the book chapter's protocol, on TinyStories (a GPU job; refused on a machine without "
                        "one unless --device is given); cpu: about 30 min for embed-dim on 2 cores; tiny: seconds "
                        "(default: the file's scale, else DIR's, else full with a CUDA GPU and cpu without)")
    p.add_argument("--minutes", type=float, metavar="N",
                   help=BUDGET_HELP)
    p.add_argument("--shard", metavar="I/N",
                   help="run only the points k with k mod N == I (default: in a Slurm job array, task k of "
                        "SLURM_ARRAY_TASK_COUNT, counted from SLURM_ARRAY_TASK_MIN; else 0/1, every point)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="override a base config value, e.g. --set data.corpus=text:my.txt")
    p.add_argument("--axis", dest="axes", action="append", default=[], metavar="KEY=V1,V2",
                   help="replace or add an axis, e.g. --axis model.n_embd=8,64,512")
    p.add_argument("--device", help="shorthand for --set train.device=DEV (default: the config's, auto)")
    p.add_argument("--dry-run", action="store_true",
                   help="list this shard's points: state, steps, passes over the training text and an estimated "
                        "time from 3 timed training steps of each model here, the corpus and its revision; train "
                        "and download nothing (a small local corpus is prepared to count its tokens)")
    p.add_argument("--summary-only", action="store_true",
                   help="only gather the summary from the run directories that exist")
    add_json(p)
    p.set_defaults(func=cmd_sweep)


def cmd_sweep(args) -> None:
    import os
    import sys
    from pathlib import Path

    from lrngpt.experiments.dry_run import plan, plan_text
    from lrngpt.experiments.findings import finding_lines, judge
    from lrngpt.experiments.grid import resolve_shard, resolve_sweep
    from lrngpt.experiments.runner import run_sweep, summarize, write_definition
    from lrngpt.experiments.sweepdir import SweepDir

    shard, note = resolve_shard(args.shard, os.environ)
    if note and not args.summary_only:
        print(f"lrn sweep: {note}", file=sys.stderr)
    sets = args.sets + ([f"train.device={args.device}"] if args.device else [])
    out = Path(args.out)
    from lrngpt.experiments.budget import resolve_budget

    budget = resolve_budget(args.source, args.minutes, args.scale, sets, args.axes, out,
                            log=lambda m: print(f"lrn sweep: {m}", file=sys.stderr))
    if budget is not None:
        plan_sets, plan_axes = budget.items()
        sweep = resolve_sweep(args.source, "budget", sets + plan_sets, args.axes + plan_axes, out=out)
        sweep.budget = budget.record()
    else:
        sweep = resolve_sweep(args.source, args.scale, sets, args.axes, out=out)
    if sweep.note and not args.summary_only:
        print(f"lrn sweep: {sweep.note}", file=sys.stderr)
    if args.dry_run:
        r = plan(sweep, out, shard, known=budget.point_seconds if budget is not None else None)
        text = plan_text(r)
        if budget is not None:
            from lrngpt.experiments.budget import budget_text

            r["budget"] = budget.record()
            text += "\n" + budget_text(budget)
        emit(args, r, text)
        return
    if budget is not None and not args.summary_only:
        from lrngpt.experiments.budget import budget_text

        print(f"lrn sweep: {budget_text(budget)}", file=sys.stderr)
    if args.summary_only:
        if not SweepDir(out).holds_sweep():
            raise UserError(f"{out} holds no sweep (no sweep.json) to summarize; run the sweep first")
        write_definition(sweep, out)  # refuses a directory that holds another sweep
        result = summarize(out)
    else:
        result = run_sweep(sweep, out, shard)
    keys = ("rows", "table", "figures", "scale", "sweep", "preset", "corpus", "about", "by_width", "seeds", "pending",
            "tables", "lines", "trained", "skipped", "shard")
    doc = {k: result[k] for k in keys if k in result}
    findings = judge([result])  # a width study: the chapter's findings judged on this sweep alone
    closing = [""] + finding_lines(findings) + [f"(judged on this sweep alone: `lrn report {out} DIR2 ...` judges it "
                                                "with a seed-variance or small-data sweep)"] if findings else []
    if findings:
        doc["findings"] = findings
    text = "\n".join([*result["lines"], "",
                      f"{len(result['rows'])} of {result['points']} runs finished ({result['scale']} scale); "
                      f"table {result['table']}", *(f"figure {f}" for f in result["figures"]), *closing])
    emit(args, doc, text)

