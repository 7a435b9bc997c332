"""`lrn report DIR [DIR ...]`: a run directory, or one or more sweep directories, as one self-contained HTML page."""

from __future__ import annotations

import lrngpt.api as api
from lrngpt.cli.common import add_checkpoint, add_out, command, emit


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
                   extra=" (default: the last, and the best beside it when they differ)")


def cmd_report(args) -> None:
    r = api.write_report(args.dirs, args.out, tokens=args.tokens, checkpoint=args.checkpoint)
    emit(args, r, f"wrote {r['path']} ({', '.join(r['sections'])})"
                  + (f" and {r['explorer']}" if r["explorer"] else ""))
