"""`lrn chapter --minutes 60 --out DIR`: every study of the book chapter in one command, on this machine."""

from __future__ import annotations

import lrngpt.api as api
from lrngpt.api.frontend import HEADROOM, MAX_MINUTES, QUIET_MACHINE
from lrngpt.cli.common import add_out, command, emit, stderr_note


def register(sub) -> None:
    p = command(
        sub, "chapter", cmd_chapter, "every study of the book chapter in one command, planned to a time budget here",
        "Run every study the book chapter on choosing the embedding width argues (the width findings, seed noise, "
        "small data, width against depth, under-trained tokens, the PIP-optimal width, superposition), each at a "
        "protocol where its claim can show on this machine within --minutes, planned from measured probes; again, "
        "it resumes. DIR/report.html opens with every verdict and its reason.",
        "examples:\n  lrn chapter --minutes 60 --out runs/chapter --dry-run   # the plan and its estimate\n"
        "  lrn chapter --minutes 60 --out runs/chapter             # the hour\n"
        "  lrn chapter --scale full --out runs/chapter-full        # the book chapter's scale: a GPU job\n"
        "  lrn chapter --scale tiny --out runs/chapter-check --json  # seconds: every part, tiny")
    add_out(p, "the directory of the book chapter's studies: one folder per study, the plan, the verdicts and the page")
    p.add_argument("--minutes", type=float, metavar="N",
                   help=f"fit the whole book chapter into N minutes here (default 60, at most {MAX_MINUTES:g}), filling "
                        f"at most {HEADROOM * 100:.0f}%% of them (the hour measured on {QUIET_MACHINE}); a slower "
                        "machine shrinks each study toward the smallest protocol at which its claim can still show")
    p.add_argument("--scale", choices=["tiny", "full"],
                   help="full: each study at the book chapter's own scale (a GPU job); tiny: seconds, for a check "
                        "(default: the laptop plan for --minutes)")
    p.add_argument("--corpus", metavar="SPEC",
                   help="with --scale: the text of every sweep instead of the scale's (e.g. stories:100MB on a GPU "
                        "machine without the TinyStories download; default: the scale's own)")
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan (each part, its estimate, what it gives up) from measured probes, "
                        "remembered a few hours so that a second dry run answers in seconds; train and write nothing")


def cmd_chapter(args) -> None:
    r = api.run_chapter(args.out, minutes=args.minutes, scale=args.scale, dry_run=args.dry_run,
                        corpus=args.corpus, notes=stderr_note("chapter"))
    emit(args, r["plan"] if args.dry_run else {k: r[k] for k in ("verdicts", "report", "seconds")}, r["text"])
