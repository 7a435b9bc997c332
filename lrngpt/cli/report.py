"""`lrn report DIR`: a run or sweep directory as one self-contained HTML page."""

from __future__ import annotations

from lrngpt.cli.common import add_json, emit


def register(sub) -> None:
    p = sub.add_parser("report", help="a run or sweep directory as one self-contained HTML page",
                       description="Write one HTML file (config, metrics, curves, sweep tables and figures, "
                                   "embedding neighbours) with every image inside it, so it opens offline, and "
                                   "beside it OUT-explorer.html, the interactive embedding explorer "
                                   "(lrn embed explore), which the report links to.",
                       epilog="examples:\n  lrn report runs/embed-dim   # runs/embed-dim/report.html + report-explorer.html\n"
                              "  lrn report runs/demo --out demo-report.html --json")
    p.add_argument("dir", metavar="DIR", help="a run directory (lrn train --out) or a sweep directory (lrn sweep --out)")
    p.add_argument("--out", metavar="FILE", help="the HTML file to write (default: DIR/report.html)")
    p.add_argument("--force", action="store_true",
                   help="replace --out and its explorer page even when they are not earlier lrn pages (default: refuse)")
    add_json(p)
    p.set_defaults(func=cmd_report)


def cmd_report(args) -> None:
    from lrngpt.report import write_report

    r = write_report(args.dir, args.out, force=args.force)
    emit(args, r, f"wrote {r['path']} ({', '.join(r['sections'])})"
                  + (f" and {r['explorer']}" if r["explorer"] else ""))
