"""The page of `lrn chapter`: every study's verdict first, with its reason, then each study's figure and
evidence, the plan against the time it took, and what each protocol gives up against the chapter's.

Built from the chapter directory alone (DIR/chapter.json, DIR/verdicts.json and the parts' own
directories), so `lrn report DIR` writes the same page again.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from lrngpt.analysis.pip_figure import figure as pip_figure
from lrngpt.analysis.superposition import figure as superposition_figure
from lrngpt.core.own_json import read_own_json_object
from lrngpt.core.ownership import write_owned_file
from lrngpt.errors import UserError
from lrngpt.experiments import chapter_plan as cp
from lrngpt.experiments.chapter_plan import ChapterPlan
from lrngpt.experiments.figures import figure_pngs, plot_series, png_bytes
from lrngpt.experiments.finding import Finding
from lrngpt.experiments.planted_figure import plot_planted
from lrngpt.report.html import esc, figure, page, rows_table, slug
from lrngpt.report.sweeps import finding_html, verdict_html

PAGE = "report.html"


def _png(fig) -> bytes:
    data = png_bytes(fig)
    plt.close(fig)
    return data


def _figures(out: Path, study: str, plan: ChapterPlan) -> list[tuple[bytes, str]]:
    """The figures of one study, drawn from its directory; a study not run yet draws none."""
    if study == "width":
        docs = [cp._doc(out / n) for n in ("width", "seeds", "small-data")]
        return [(png, caption) for _, caption, png in figure_pngs(docs)]
    if study == "width-depth":
        levels = [out / p.name for p in plan.parts if p.name.startswith("width-depth/")]
        return [(_png(plot_series(levels)), "val bpb by shape at each number of tokens per parameter")]
    if study == "planted":
        return [(_png(plot_planted(out / "planted")), "input reads against each row's own movement, planted ids marked")]
    if study == "pip" and (out / "pip.json").is_file():
        result = read_own_json_object(out / "pip.json", "PIP estimate")
        return [(_png(pip_figure(result)), "PIP loss by width k, and the width study's val bpb by d")]
    if study == "superposition" and (out / "superposition.json").is_file():
        result = read_own_json_object(out / "superposition.json", "superposition result")
        return [(_png(superposition_figure(result)), "W^T W and ||W_i|| per sparsity")]
    return []


def _study_html(out: Path, study: str, found: list[Finding], plan: ChapterPlan) -> str:
    what, source = cp.STUDIES[study]
    body = f"<p><b>{esc(what)}</b> ({esc(source)})</p>" + "".join(map(finding_html, found))
    for png, caption in _figures(out, study, plan):
        body += figure(png, caption)
    return body


def chapter_page(out: Path, plan: ChapterPlan, verdicts: list[dict]) -> str:
    """The page from the verdicts' documents (DIR/verdicts.json, as cp.verdicts returns them)."""
    out, found = Path(out), [Finding.from_dict(v) for v in verdicts]
    studies = [s for s in cp.STUDIES if s != "seeds"]
    lead = rows_table(["study", "claim", "verdict", "reason"],  # each study links to its evidence and figures
                      [[f'<a href="#{slug(f.study or "")}" style="white-space: nowrap">{esc(f.study or "")}</a>',
                        esc(f.title), verdict_html(f), esc(f.reason or "")] for f in found], raw=True)
    times = cp.part_times(out)
    rows = [[p.name, p.est_seconds, times.get(p.name, {}).get("seconds", "not run")] for p in plan.parts]
    spent = cp.total_seconds(out)
    plan_html = (rows_table(["part", "estimated seconds", "seconds"], rows)
                 + f"<p>planned {plan.est_seconds / 60:.1f} min"
                 + (f" for a budget of {plan.minutes:g} min" if plan.minutes else "")
                 + f"; the parts took {spent / 60:.1f} min</p>")
    dev = "".join(f"<h3>{esc(p.name)}</h3><ul>" + "".join(f"<li>{esc(d)}</li>" for d in p.deviations) + "</ul>"
                  for p in plan.parts if p.deviations)
    sections = [("Verdicts", lead)]
    for s in studies:
        mine = [f for f in found if f.study == s]
        if mine:
            sections.append((s, _study_html(out, s, mine, plan)))
    sections += [("Plan and time", plan_html), ("Protocols against the chapter's", dev or "<p>none</p>")]
    title = f"The book chapter on this machine: {out.resolve().name}"
    return page(title, esc(str(out.resolve())), sections, footer="Written by lrn chapter.")


def write_chapter_page(out: Path, plan: ChapterPlan, verdicts: list[dict], page: Path | None = None) -> Path:
    return write_owned_file(page or Path(out) / PAGE, chapter_page(out, plan, verdicts), "report")


def is_chapter(d: Path) -> bool:
    return cp.stored_plan(Path(d)) is not None


def stored_verdicts(d: Path) -> list[dict]:
    """DIR/verdicts.json as `lrn chapter` wrote it: judged once, read here (a chapter not finished has none)."""
    path = Path(d) / cp.VERDICTS_FILE
    if not path.is_file():
        raise UserError(f"{d} holds a chapter that has not finished: run the same `lrn chapter` command again to "
                        "finish it; it writes the page itself")
    found = read_own_json_object(path, "chapter verdicts").get("verdicts")
    try:
        if not isinstance(found, list) or not all(Finding.from_dict(v).study in cp.STUDIES for v in found):
            raise ValueError("not a list of findings")
    except (KeyError, TypeError, ValueError, AttributeError):
        raise UserError(f"chapter verdicts {path} are not what lrn wrote (edited or damaged): run the same "
                        "`lrn chapter` command with a new --out") from None
    return found


def write_chapter_report(d: Path, page: Path) -> dict:
    """`lrn report DIR` on a chapter directory: the page again, from the directory alone."""
    plan = cp.stored_plan(Path(d))
    assert plan is not None  # the caller found a chapter directory, which is one with its plan (is_chapter)
    written = write_chapter_page(Path(d), plan, stored_verdicts(d), page)
    return {"path": str(written), "sections": ["Verdicts"], "explorer": None}
