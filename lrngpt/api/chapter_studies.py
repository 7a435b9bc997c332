"""`lrn chapter` and `lrngpt.run_chapter`: every study of the book chapter, planned to one time budget here
(lrngpt.experiments.chapter_plan, chapter_budget), resumable part by part. Each sweep part runs through
`sweep` into DIR/<part>, a sweep directory `lrn report` reads."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal, cast

from lrngpt.analysis.pip import corpus_estimate
from lrngpt.analysis.superposition import train_toy
from lrngpt.api.checks import checked
from lrngpt.api.sweeps import Notes, sweep
from lrngpt.api.texts import chapter_plan_text
from lrngpt.core import log as logging
from lrngpt.errors import UserError, option
from lrngpt.experiments import chapter_budget as cb
from lrngpt.experiments import chapter_plan as cp
from lrngpt.experiments import planted
from lrngpt.experiments.chapter_dir import ChapterDir
from lrngpt.experiments.chapter_plan import Part
from lrngpt.report.chapter_page import write_chapter_page

Scale = Literal["tiny", "full"] | None


def _run_part(part: Part, chapter: ChapterDir, say, progress: bool | None) -> None:
    where = chapter.part(part.name)
    if part.kind == "sweep":
        sweep(cast(str, part.source), part.scale, out=where, set=part.set or None, axes=part.axes or None,
              progress=progress, notes=say, points_at_once=part.points_at_once)
    elif part.kind == "planted":
        planted.run_planted(where, cast(dict, part.plan), log=say)
    elif part.kind == "pip":
        r = corpus_estimate(cast(str, part.corpus), cast(int, part.vocab_size), top=part.top,
                            sweep=chapter.part("width"), log=say)
        chapter.write_result("pip.json", r)
    elif part.kind == "superposition":
        chapter.write_result("superposition.json", train_toy(20, 5, steps=cast(int, part.steps), seed=0))


@checked
def run_chapter(out: str | Path, minutes: float | None = None, scale: Scale = None, dry_run: bool = False,
                corpus: str | None = None, progress: bool | None = None, notes: Notes = None) -> dict:
    """Every study of the book chapter in one call (`lrn chapter --minutes 60 --out DIR`), each planned from a
    measured probe to fit `minutes` (default 60) here; `scale` "full" runs each at the chapter's scale (a GPU
    job), "tiny" in seconds; `corpus` (with a scale) the text of every sweep. dry_run=True: the plan and its
    estimate only. Again on the same `out`, it resumes. Returns {"plan", "verdicts", "report", "seconds", "text"}.

    Example: ``r = lrngpt.run_chapter("runs/chapter", minutes=60, dry_run=True); r["plan"]["est_seconds"]``"""
    say = notes or logging.info
    scale_name = scale or "laptop"  # (@checked refuses any other scale)
    if scale_name != "laptop" and minutes is not None:
        raise UserError(f"{option('minutes')} plans the laptop protocol; leave out {option('scale')} (or leave out {option('minutes')})")
    if corpus is not None and scale_name == "laptop":
        raise UserError(f"{option('corpus')} goes with {option('scale')} full or tiny; the laptop plan generates the text its budget "
                        "needs (a study on your own text: `lrn sweep STUDY --minutes N --corpus text:FILE`)")
    out = Path(out)
    chapter = ChapterDir(out)
    stored = chapter.plan()
    if scale_name == "laptop":  # left out on a resume: the stored plan's
        minutes = stored.minutes if minutes is None and stored is not None else \
            cb.check_minutes(cb.DEFAULT_MINUTES if minutes is None else minutes)
    if stored is not None:
        cp.check_same(stored, scale_name, minutes, out)
        plan = stored
    else:
        chapter.check_new()
        plan = cb.plan_laptop(cast(float, minutes), str(out), say) if scale_name == "laptop" else \
            cb.plan_scale(scale_name, str(out), say, corpus)
    if dry_run:
        return {"plan": plan.to_dict(), "text": chapter_plan_text(plan)}
    if stored is None:
        chapter.start(plan)
    say(chapter_plan_text(plan))
    done = chapter.timing()
    for part in (p for p in plan.parts if p.name not in done):
        say(f"chapter: {part.name} ({part.what}), about {part.est_seconds / 60:.1f} min")
        t0 = time.perf_counter()
        _run_part(part, chapter, say, progress)
        chapter.finish(part.name, part.est_seconds, time.perf_counter() - t0)
    verdicts = cp.verdicts(chapter, plan)
    report = write_chapter_page(chapter, plan, verdicts)
    seconds = chapter.seconds()
    text = "\n".join([*cp.verdict_lines(verdicts), f"report: {report}",
                      f"{seconds / 60:.1f} min for the parts (planned {plan.est_seconds / 60:.1f})"])
    return {"plan": plan.to_dict(), "verdicts": verdicts, "report": str(report), "seconds": seconds, "text": text}
