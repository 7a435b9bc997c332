"""The page of `lrn chapter`: every study's verdict and reason first, then each study's figures and
evidence, the plan against the time it took, and what each protocol gives up against the chapter's.
Built from the chapter directory alone, so `lrn report DIR` writes the same page again.
"""

from __future__ import annotations

from pathlib import Path

from lrngpt.analysis.pip_figure import figure as pip_figure
from lrngpt.analysis.superposition import figure as superposition_figure
from lrngpt.experiments import chapter_plan as cp
from lrngpt.experiments.chapter_dir import ChapterDir
from lrngpt.experiments.chapter_plan import ChapterPlan
from lrngpt.experiments.figures import figure_pngs, plot_series, png_bytes
from lrngpt.experiments.finding import Finding
from lrngpt.experiments.planted_figure import plot_planted
from lrngpt.report.html import bullets, esc, figure, page, rows_table, slug
from lrngpt.report.sweeps import finding_html, verdict_html


def _figures(chapter: ChapterDir, study: str, found: list[Finding]) -> list[tuple[bytes, str]]:
    """The figures of one study, drawn from its directory (the width-depth levels: from its finding,
    which holds them; their summaries are not read again); a study not run yet draws none."""
    if study == "width":
        docs = [chapter.sweep(n) for n in ("width", "seeds", "small-data")]
        return [(png, caption) for _, caption, png in figure_pngs(docs)]
    if study == "width-depth":
        return [(png_bytes(plot_series(found[0].numbers["levels"])),
                 "val bpb by shape at each number of tokens per parameter")]
    if study == "planted":
        return [(png_bytes(plot_planted(chapter.part("planted"))),
                 "input reads against each row's own movement, planted ids marked")]
    pip, toy = chapter.result("pip.json"), chapter.result("superposition.json")
    if study == "pip" and pip is not None:
        return [(png_bytes(pip_figure(pip)), "PIP loss by width k, and the width study's val bpb by d")]
    if study == "superposition" and toy is not None:
        return [(png_bytes(superposition_figure(toy)), "W^T W and ||W_i|| per sparsity")]
    return []


def write_chapter_page(chapter: ChapterDir, plan: ChapterPlan, verdicts: list[dict], path: Path | None = None) -> Path:
    """The page from the verdicts' documents (DIR/verdicts.json, as cp.verdicts returns them), written to
    `path` (default DIR/report.html)."""
    out, found = chapter.path, [Finding.from_dict(v) for v in verdicts]
    studies = [s for s in cp.CLAIMS if s != "seeds"]
    lead = rows_table(["study", "claim", "verdict", "reason"],  # each study links to its evidence and figures
                      [[f'<a href="#{slug(f.study or "")}" style="white-space: nowrap">{esc(f.study or "")}</a>',
                        esc(f.title), verdict_html(f), esc(f.reason or "")] for f in found], raw=True)
    times = chapter.timing()
    rows = [[p.name, p.est_seconds, times.get(p.name, {}).get("seconds", "not run")] for p in plan.parts]
    spent = chapter.seconds()
    plan_html = (rows_table(["part", "estimated seconds", "seconds"], rows)
                 + f"<p>planned {plan.est_seconds / 60:.1f} min"
                 + (f" for a budget of {plan.minutes:g} min" if plan.minutes else "")
                 + f"; the parts took {spent / 60:.1f} min</p>")
    dev = "".join(f"<h3>{esc(p.name)}</h3>{bullets(p.deviations)}" for p in plan.parts if p.deviations)
    sections = [("Verdicts", lead)]
    for s in studies:  # each study: its claim, its findings, its figures
        mine, (what, source) = [f for f in found if f.study == s], cp.CLAIMS[s]
        if mine:
            sections.append((s, f"<p><b>{esc(what)}</b> ({esc(source)})</p>" + "".join(map(finding_html, mine))
                             + "".join(figure(png, caption) for png, caption in _figures(chapter, s, mine))))
    sections += [("Plan and time", plan_html), ("Protocols against the chapter's", dev or "<p>none</p>")]
    title = f"The book chapter on this machine: {out.resolve().name}"
    return chapter.write_page(page(title, esc(str(out.resolve())), sections, footer="Written by lrn chapter."), path)

