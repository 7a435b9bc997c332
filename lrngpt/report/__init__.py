"""`lrn report DIR [DIR ...]`: a run, one or more sweeps, or a chapter directory as one self-contained
HTML page that leads with what a reader came for (a width study: the chapter's findings) and folds the
details. Everything is inline and a Content-Security-Policy allows nothing else, so it opens offline; the
embedding explorer (lrngpt.explorer), with its script and megabytes of vectors, is written beside it.
"""

from __future__ import annotations

import re
from pathlib import Path

from lrngpt.core import log as logging
from lrngpt.core.fsio import check_regular, user_path
from lrngpt.core.ownership import check_file_target, write_owned_file
from lrngpt.errors import UserError, option
from lrngpt.experiments.chapter_dir import ChapterDir
from lrngpt.experiments.finding import Finding
from lrngpt.experiments.sweepdir import SweepDir
from lrngpt.explorer import page as explorer
from lrngpt.explorer.views import check_dir
from lrngpt.report.chapter_page import write_chapter_page
from lrngpt.report.html import esc, page
from lrngpt.report.runs import run_sections
from lrngpt.report.sweeps import FINDINGS_SECTION, scale_notes, sweep_docs, sweep_points, sweep_sections
from lrngpt.store.layout import CHECKPOINTS, CONFIG, MARKER
from lrngpt.store.rundir import RunDir

__all__ = ["FINDINGS_SECTION", "RUN_SECTIONS", "SWEEP_SECTIONS", "WIDTH_SWEEP_SECTIONS", "build_report", "kind_of",
           "write_report_pages"]

RUN_SECTIONS = ["Headline", "Curves", "Embedding neighbours", "Under-trained tokens", "Embedding explorer", "Details"]
SWEEP_SECTIONS = ["Headline", "Figures", "Results", "Embedding neighbours", "Embedding explorer", "Details"]
WIDTH_SWEEP_SECTIONS = [FINDINGS_SECTION, *SWEEP_SECTIONS]  # a width study: the findings judged, first


def kind_of(d: Path) -> str:
    """'run', 'sweep' or 'chapter', from the files that `lrn train`, `lrn sweep` and `lrn chapter` write."""
    check_dir(d)
    if ChapterDir(d).plan() is not None:
        return "chapter"
    sweep_dir, run = SweepDir(d), RunDir(d)
    check_regular(sweep_dir.definition_path, "sweep definition")
    check_regular(run / CONFIG, "run config")
    if sweep_dir.holds_sweep():
        return "sweep"
    if run.holds_run():
        return "run"
    alone = " (a config.json alone is not one)" if (run / CONFIG).is_file() else ""
    raise UserError(f"{d} is neither a run directory (no {MARKER} naming it a run{alone}) nor a sweep directory (no "
                    f"{sweep_dir.definition_path.name}): give the directory `lrn train --out` or `lrn sweep --out` "
                    "wrote")


def explorer_path(out: Path) -> Path:
    return out.with_name(f"{out.stem}-explorer.html")


def default_out(dirs: list[Path]) -> Path:
    """DIR/report.html; for several sweeps, FIRST/report-with-SECOND[-THIRD...].html (FIRST's own report stays)."""
    if len(dirs) == 1:
        return dirs[0] / "report.html"
    others = "-".join(re.sub(r"[^A-Za-z0-9._-]+", "_", d.resolve().name) for d in dirs[1:])
    return dirs[0] / f"report-with-{others}.html"


def write_report_pages(dirs, out: str | Path | None = None, force: bool = False, tokens: list[str] | None = None,
                       checkpoint: str | None = None, findings: list[Finding] | None = None) -> dict:
    """Write the page (default DIR/report.html) and its explorer beside it; refuse to replace a file
    that is not an earlier report. `dirs`: a run directory, or sweep directories; `tokens`: the neighbour
    queries; `checkpoint`: only those weights' neighbours; `findings`: judged by the caller, shown first."""
    dirs = [Path(d) for d in ([dirs] if isinstance(dirs, str | Path) else dirs)]
    if not dirs:
        raise UserError("give a run directory, or one or more sweep directories")
    kinds = [kind_of(d) for d in dirs]
    if len(dirs) > 1 and set(kinds) != {"sweep"}:
        raise UserError("several directories make one report only when all are sweep directories "
                        f"({', '.join(f'{d} is a {k}' for d, k in zip(dirs, kinds, strict=True) if k != 'sweep')}); "
                        "report a run directory on its own")
    if checkpoint is not None and checkpoint not in CHECKPOINTS:
        raise UserError(f"{option('checkpoint')} must be last, best or init (got {checkpoint!r})")
    out = Path(out) if out is not None else default_out(dirs)  # "" is no default: refused below
    # a directory is refused (example report.html); an earlier unchanged report is replaced, nothing else is
    check_file_target(out, force, "report", replace_own=True, example="report.html")
    if kinds == ["chapter"]:  # the chapter's page again, from its directory alone
        chapter = ChapterDir(dirs[0])
        plan = chapter.plan()
        assert plan is not None  # kind_of found a chapter directory: one with its plan
        return {"path": str(write_chapter_page(chapter, plan, chapter.verdicts(), out)), "sections": ["Verdicts"],
                "explorer": None}
    explorer.check_page(explorer_path(out))
    with user_path(out.parent, "output directory"):
        out.parent.mkdir(parents=True, exist_ok=True)
    ready = [d for d in dirs if _has_checkpoint(d, kinds[0])]
    if not ready:  # no checkpoint yet: the report still renders, and says why there is no explorer
        written = {"error": f"{dirs[0]} has no checkpoint yet" if kinds[0] == "run" else
                   f"sweep {', '.join(map(str, dirs))} has no run with a checkpoint yet; run `lrn sweep` first"}
    else:  # a damaged checkpoint is an error, not a blank section
        written = explorer.write_explorer(ready, explorer_path(out), log=lambda m: None)
    text, sections = build_report(dirs, kinds[0], written, tokens, checkpoint, findings)
    write_owned_file(out, text, "report")  # recorded as lrn's; a kill never leaves half a page over the old one
    logging.debug(f"report: {out} written ({len(text.encode(errors='backslashreplace')):,} bytes; sections {', '.join(sections)})")
    return {"path": str(out), "sections": sections, "explorer": written.get("path")}


def _has_checkpoint(d: Path, kind: str) -> bool:
    if kind == "run":
        return RunDir(d).has_checkpoint("last")
    return any(SweepDir(d).run(str(p["name"])).has_checkpoint("last") for p in sweep_points(d))


def build_report(dirs, kind: str | None = None, explorer: dict | None = None, tokens: list[str] | None = None,
                 checkpoint: str | None = None, findings: list[Finding] | None = None) -> tuple[str, list[str]]:
    """The HTML text and the titles of its sections; `explorer` is what write_explorer returned."""
    dirs = [Path(d) for d in ([dirs] if isinstance(dirs, str | Path) else dirs)]
    kind = kind or kind_of(dirs[0])
    notes = []
    if kind == "run":
        sections = run_sections(dirs[0], tokens, checkpoint)
    else:
        docs = sweep_docs(dirs)
        sections, notes = sweep_sections(docs, findings or [], tokens, checkpoint), scale_notes(docs)
    sections.insert(-1, ("Embedding explorer", explorer_html(explorer, kind)))
    names = [d.resolve().name for d in dirs]
    title = f"{kind.capitalize()} {' + '.join(names)}" if kind == "run" or len(dirs) == 1 else \
        f"Sweeps {' + '.join(names)}"
    where = "<br>".join(esc(str(d.resolve())) for d in dirs)
    text = page(title, where, sections, "".join(notes))
    return text, [t for t, _ in sections]


def explorer_html(explorer: dict | None, kind: str) -> str:
    if not explorer or not explorer.get("path"):
        why = explorer.get("error") if explorer else "not written"
        return f"<p>No explorer page: {esc(str(why))}</p>"
    name = Path(explorer["path"]).name
    what = "its trained and untrained tables side by side" if kind == "run" else "a stepper through the widths"
    return (f'<p><a href="{esc(name)}">{esc(name)}</a> ({explorer["bytes"] / 1e6:.1f} MB, beside this report): '
            f"the embedding table as a 2-D map of {explorer['tokens'][0]:,} tokens coloured by category, a search box "
            f"for nearest neighbours, and {what}. It works offline, like this page.</p>")
