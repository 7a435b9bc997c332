"""`lrn chapter` and `lrngpt.run_chapter`: every study of the book chapter in one command, planned to one time
budget on this machine (the protocol: lrngpt.experiments.chapter_plan), resumable part by part, with one
page that opens with every verdict.

Each sweep part runs through the call a user makes alone (`sweep`), into DIR/<part>, so each is a sweep
directory that `lrn report` and `lrngpt.load_sweep` read. DIR/chapter.json holds the plan, DIR/timing.jsonl
each part's seconds beside its estimate, DIR/verdicts.json the verdicts and DIR/report.html the page. Run
again on the same DIR, it resumes: a finished part is skipped, a killed one resumed by its own machinery.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, cast

from lrngpt.analysis.pip import corpus_estimate
from lrngpt.analysis.superposition import train_toy
from lrngpt.api.checks import checked
from lrngpt.api.sweeps import plan_sweep, sweep
from lrngpt.api.texts import chapter_plan_text
from lrngpt.core import log as logging
from lrngpt.errors import BudgetTooShort, UserError
from lrngpt.experiments import chapter_plan as cp
from lrngpt.experiments import depth_series, planted
from lrngpt.experiments.budget import from_record
from lrngpt.experiments.chapter_plan import too_short
from lrngpt.report.chapter_page import write_chapter_page

Notes = Callable[[str], None] | None
Scale = Literal["tiny", "full"] | None


def _sweep_part(name: str, source: str, scale: str | None, out: Path, say, *, minutes: float | None = None,
                passes: float | None = None, sets: list[str] | None = None, axes: dict | None = None,
                what: str = "") -> dict:
    """A part that is one sweep: planned by its own dry run (a budget's probe included). A share too short
    here is refused with the whole budget that would give this part its smallest plan."""
    try:
        r = plan_sweep(source, scale, out=out / name, minutes=minutes, passes=passes, set=sets or None,
                       axes=axes or None, notes=say)
    except BudgetTooShort as e:
        raise UserError(too_short(name, minutes or 0.0, e.smallest)) from None
    b = r.get("budget") or {}
    part: dict[str, Any] = {"name": name, "kind": "sweep", "source": source, "scale": scale, "set": list(sets or []),
            "axes": dict(axes or {}), "what": what, "corpus": r.get("corpus"),
            "est_seconds": round(float(b.get("est_seconds") or r.get("est_seconds") or 0.0), 1),
            "point_seconds": b.get("point_seconds") or {p["name"]: round(p.get("est_seconds") or 0.0, 1)
                                                        for p in r["points"]},
            "deviations": list(b.get("gives_up") or [])}
    if b:  # the budget planned here is the one trained: its steps, corpus and widths as the sweep's settings
        plan_sets, _ = from_record(b).items()
        part.update(scale="budget", budget=b, set=part["set"] + plan_sets,  # trained as planned: no second probe
                    est_seconds=round(part["est_seconds"] - float((b.get("parts") or {}).get("probe") or 0.0), 1),
                    axes={**part["axes"], **b["axes"]})
        part["points_at_once"] = (b.get("packing") or {}).get("points_at_once")  # measured with the plan
    return part


def _depth_plan(minutes: float | None, tiny: bool, say) -> dict:
    try:
        # None (no share of a budget) is plan_series' to refuse, in its words
        return depth_series.plan_series(60.0 if tiny else cast(float, minutes), log=say, tiny=tiny)
    except BudgetTooShort as e:
        raise UserError(too_short("width-depth", minutes or 0.0, e.smallest)) from None


def _plan(scale: str, minutes: float | None, out: Path, say, corpus: str | None = None) -> dict:
    """Every part with its estimate: the budgeted parts probe this machine (seconds each)."""
    laptop = scale == "laptop"
    text = [f"data.corpus={corpus}"] if corpus else []  # --scale full on a machine without the download
    share = cp.shares(minutes) if laptop and minutes else {}
    parts = []
    width = _sweep_part("width", "embed-dim", None if laptop else scale, out, say, minutes=share.get("width"), sets=text,
                        passes=cp.CHAPTER_PASSES if laptop else None,
                        axes=None if laptop else {"model.n_embd": cp.WIDTHS} if scale == "tiny" else None,
                        what=cp.STUDIES["width"][0])
    parts.append(width)
    seed_sets = [x for x in width["set"] if not x.startswith("model.n_embd=")] if laptop else text
    seeds = {"name": "seeds", "kind": "sweep", "source": "seed-variance", "scale": "budget" if laptop else scale,
             "set": seed_sets, "points_at_once": width.get("points_at_once"),
             "axes": {"model.n_embd": [cp.SEED_WIDTH], "train.seed": cp.EXTRA_SEEDS}, "what": cp.STUDIES["seeds"][0],
             "corpus": width["corpus"], "deviations": [f"seed 1337 is the width study's own d = {cp.SEED_WIDTH} run, "
                                                       "reused: the same config is not trained twice"]}
    d64 = [s for n, s in width["point_seconds"].items() if n.startswith(f"d{cp.SEED_WIDTH}-")]
    seeds["est_seconds"] = round(len(cp.EXTRA_SEEDS) * (d64[0] if d64 else 0.0) + 6.0, 1)
    parts.append(seeds)
    parts.append(_sweep_part("small-data", "embed-dim-small-data", None if laptop else scale, out, say, sets=text,
                             minutes=share.get("small-data"), axes={"model.n_embd": cp.SMALL_TINY_WIDTHS}
                             if scale == "tiny" else None, what=cp.STUDIES["small-data"][0]))
    if scale == "full":  # the study at its own scale: one level, judged by finding 4's rule
        parts.append(_sweep_part("width-depth/full", "width-depth", "full", out, say, sets=text,
                                 what=cp.STUDIES["width-depth"][0]))
    else:
        series = _depth_plan(share.get("width-depth"), scale == "tiny", say)
        for lv in series["levels"]:
            parts.append({"name": f"width-depth/{lv['name']}", "kind": "sweep", "source": lv["source"],
                          "scale": lv["scale"], "set": list(lv["set"]),
                          "axes": dict(lv["axes"]), "what": f"{cp.STUDIES['width-depth'][0]} ({lv['name']})",
                          "est_seconds": round(float(lv["est_seconds"]), 1), "deviations": []})
        parts[-1]["deviations"] = list(series.get("deviations") or [])
    pl = planted.planted_plan(share.get("planted"), scale="tiny" if scale == "tiny" else "cpu")  # a GPU: cpu's
    parts.append({"name": "planted", "kind": "planted", "plan": pl, "what": cp.STUDIES["planted"][0],
                  "est_seconds": round(float(pl["est_seconds"]), 1), "deviations": list(pl.get("deviations") or [])})
    tiny = scale == "tiny"
    parts.append({"name": "pip", "kind": "pip", "corpus": width["corpus"], "vocab_size": 512 if tiny else 4096,
                  "top": None if tiny else cp.PIP_TOP, "what": cp.STUDIES["pip"][0], "est_seconds": cp.PIP_S,
                  "deviations": [] if tiny else [f"the {cp.PIP_TOP:,} most frequent tokens as rows, as the authors' "
                                                 "code keeps the most frequent words"]})
    parts.append({"name": "superposition", "kind": "superposition", "steps": 100 if tiny else 1000,
                  "what": cp.STUDIES["superposition"][0], "est_seconds": cp.SUPERPOSITION_S, "deviations": []})
    total = cp.START_S + cp.PLAN_S + cp.REPORT_S + sum(p["est_seconds"] for p in parts)
    return {"version": cp.VERSION, "scale": scale, "minutes": minutes, "out": str(out), "parts": parts,
            "est_seconds": round(total, 1)}


def _run_part(part: dict, out: Path, say, progress: bool | None) -> None:
    where = out / part["name"]
    if part["kind"] == "sweep":
        sweep(part["source"], part["scale"], out=where, set=part["set"] or None, axes=part["axes"] or None,
              progress=progress, notes=say, points_at_once=part.get("points_at_once"))
    elif part["kind"] == "planted":
        planted.run_planted(where, part["plan"], log=say)
    elif part["kind"] == "pip":
        r = corpus_estimate(part["corpus"], part["vocab_size"], top=part["top"], sweep=out / "width", log=say)
        cp.write_part_json(out, "pip.json", r)
    elif part["kind"] == "superposition":
        cp.write_part_json(out, "superposition.json", train_toy(20, 5, steps=part["steps"], seed=0))


@checked
def run_chapter(out: str | Path, minutes: float | None = None, scale: Scale = None, dry_run: bool = False,
                corpus: str | None = None, progress: bool | None = None, notes: Notes = None) -> dict:
    """Every study of the book chapter in one call (`lrn chapter --minutes 60 --out DIR`): the width
    study's findings 1 and 2 at the chapter's own 0.12 passes, the seed noise, the small-data finding 3,
    width against depth as a series of tokens per parameter, under-trained tokens on planted tokens, the
    PIP prediction beside the measured best width, and superposition, each planned from a measured probe
    to fit `minutes` (default 60) here. `scale` "full" runs each study at the chapter's scale instead (a GPU
    job), "tiny" in seconds; `corpus` (with a scale) is the text of every sweep instead of the scale's (a GPU
    machine without the download: "stories:100MB"). With dry_run=True, the plan and its estimate (probes only, nothing trained or
    written). Run again on the same `out`, it resumes. Returns {"plan", "verdicts", "report", "seconds", "text"}.

    Example: ``r = lrngpt.run_chapter("runs/chapter", minutes=60, dry_run=True); r["plan"]["est_seconds"]``"""
    say = notes or logging.info
    scale_name = cp.check_scale(scale)
    if scale_name != "laptop" and minutes is not None:
        raise UserError("--minutes plans the laptop protocol; leave out --scale (or leave out --minutes)")
    if corpus is not None and scale_name == "laptop":
        raise UserError("--corpus goes with --scale full or tiny; the laptop plan generates the text its budget "
                        "needs (a study on your own text: `lrn sweep STUDY --minutes N --corpus text:FILE`)")
    out = Path(out)
    stored = cp.stored_plan(out)
    if scale_name == "laptop":  # left out on a resume: the stored plan's
        minutes = stored["minutes"] if minutes is None and stored is not None else \
            cp.check_minutes(cp.DEFAULT_MINUTES if minutes is None else minutes)
    if stored is not None:
        cp.check_same(stored, scale_name, minutes, out)
        plan = stored
    else:
        cp.check_chapter_out(out)
        started = time.perf_counter()
        plan = _plan(scale_name, minutes, out, say, corpus)
        plan["planning_seconds"] = round(time.perf_counter() - started, 1)
    if dry_run:
        return {"plan": plan, "text": chapter_plan_text(plan)}
    if stored is None:
        cp.start(out, plan)
    say(chapter_plan_text(plan))
    done = cp.finished_parts(out)
    for part in plan["parts"]:
        if part["name"] in done:
            continue
        say(f"chapter: {part['name']} ({part['what']}), about {part['est_seconds'] / 60:.1f} min")
        t0 = time.perf_counter()
        _run_part(part, out, say, progress)
        cp.record_part(out, part, time.perf_counter() - t0)
    verdicts = cp.verdicts(out, plan)
    report = write_chapter_page(out, plan, verdicts)
    seconds = cp.total_seconds(out)
    text = "\n".join([*cp.verdict_lines(verdicts), f"report: {report}",
                      f"{seconds / 60:.1f} min for the parts (planned {plan['est_seconds'] / 60:.1f})"])
    return {"plan": plan, "verdicts": verdicts, "report": str(report), "seconds": seconds, "text": text}
