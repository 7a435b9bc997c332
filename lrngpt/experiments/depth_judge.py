"""The width-depth scale series judged: does the spread across shapes shrink as the runs read more
tokens per non-embedding parameter? Only levels whose shapes trained count; the trend is judged on
the lowest and the highest of them.
"""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path

from lrngpt.core.fsio import read_json_object
from lrngpt.errors import UserError
from lrngpt.experiments.depth_series import CHAPTER as PROTOCOL
from lrngpt.experiments.finding import Claim, Finding
from lrngpt.experiments.finding import Verdict as V
from lrngpt.experiments.shape_findings import MAX_CHANGE, judge_shapes, non_embedding
from lrngpt.experiments.stats import lsq_slope, mean_or_none
from lrngpt.experiments.sweepdir import SweepDir

TREND_Z = 1.0  # moved: the ends differ by more than TREND_Z x sqrt(noise_low^2 + noise_high^2)
FLAT_SHARE = 0.1  # flat: changed by less than this share of itself, with a noise small enough to see that
MIN_LEVELS = 2  # a trend needs two levels
WIDTH_NEXT = ("the deep, narrow shapes also get the narrowest token table and LM head, which the non-embedding count "
              "leaves out; a level with more tokens per parameter would tell whether they catch up later")
CLAIM = Claim("width-depth-series", "As the runs read more tokens per non-embedding parameter, the loss's change "
              "across shapes (d_model / n_layer spanning 40x at a fixed non-embedding parameter count) shrinks toward "
              "Kaplan et al.'s 3%", PROTOCOL, 4)


def level_doc(path: str | Path) -> dict:
    """A finished level's summary document (summary.json), labelled by its directory's name."""
    sweep_dir = SweepDir(path)
    summary = sweep_dir.summary_path("json")
    if not summary.exists():
        raise UserError(f"{sweep_dir.path}: no summary.json there; run the level's sweep first (lrngpt.sweep(... "
                        f"out={sweep_dir.path}))")
    doc = read_json_object(summary, "sweep summary")
    if not isinstance(doc.get("rows"), list):
        raise UserError(f"{summary}: no rows list; it is not a sweep's summary (rerun the level's sweep)")
    return {**doc, "label": sweep_dir.path.name}


def tokens_per_param(rows: list[dict]) -> float | None:
    """Tokens a run read over its non-embedding parameters, the mean over the rows that say both."""
    return mean_or_none(r["tokens_read"] / non_embedding(r) for r in rows if r.get("tokens_read") and non_embedding(r))


def level_result(doc: dict) -> dict:
    """One level: its tokens per parameter, finding 4 judged on it, its spread and noise."""
    finding = judge_shapes(doc)
    nums = finding.numbers
    return {"name": doc["label"], "tokens_per_param": tokens_per_param(doc["rows"]), "verdict": str(finding.verdict),
            "spread": nums.get("change"), "noise": nums.get("noise"), "reason": finding.reason,
            "shapes": [{k: e[k] for k in ("n_layer", "n_embd", "ratio", "non_embedding", "val_bpb", "val_bpbs")}
                       for e in nums.get("shapes", [])]}


def judge_levels(levels: list[dict]) -> Finding:
    """The series verdict on level results (level_result's), lowest tokens per parameter first."""
    usable = sorted((lv for lv in levels if lv["spread"] is not None and lv["noise"] is not None
                     and lv["tokens_per_param"]), key=lambda lv: lv["tokens_per_param"])
    evidence = [f"{lv['name']}: {lv['tokens_per_param']:.3g} tokens per non-embedding parameter, spread "
                f"{lv['spread']:.2%} +- {lv['noise']:.2%} (finding 4 there: {lv['verdict']})" for lv in usable]
    skipped = [lv["name"] for lv in levels if lv not in usable]
    if skipped:
        evidence.append(f"no spread with noise at {', '.join(skipped)} (too few shapes or seeds finished)")
    numbers: dict = {"levels": levels, "trend": None}
    found = partial(Finding.judged, CLAIM, evidence=evidence, numbers=numbers)  # each at the numbers it ends with
    stale = [lv for lv in usable if lv["verdict"] == V.CANNOT_SHOW]
    usable = [lv for lv in usable if lv not in stale]
    if len(usable) < MIN_LEVELS and stale:
        return found(V.CANNOT_SHOW, [
            f"{'only one level' if usable else 'no level'} trained every shape past token frequencies "
            f"({', '.join(lv['name'] for lv in stale)} did not): a trend needs {MIN_LEVELS} levels, and untrained shapes "
            "differ by how little each has learned"],
            next="levels at more tokens per parameter (a larger budget), or the study at --scale full on a GPU")
    if len(usable) < MIN_LEVELS:
        return found(V.CANNOT_TELL, [f"{len(usable)} level(s) with a spread and its noise: a trend needs {MIN_LEVELS}"],
                     next="finish the series' levels (two seeds a shape each)")
    low, high = usable[0], usable[-1]
    shrink = low["spread"] - high["spread"]
    noise = math.hypot(low["noise"], high["noise"])
    slope = lsq_slope([math.log2(lv["tokens_per_param"]) for lv in usable], [lv["spread"] for lv in usable])
    numbers["trend"] = {"low": low["name"], "high": high["name"], "shrink": shrink, "noise": noise, "z": TREND_Z,
                        "slope_per_doubling": slope, "spreads": [[lv["tokens_per_param"], lv["spread"], lv["noise"]]
                                                                 for lv in usable]}
    evidence.append(f"from {low['name']} to {high['name']} the spread {'shrinks' if shrink > 0 else 'grows'} by "
                    f"{abs(shrink):.2%} (noise {noise:.2%}); least squares {slope:+.2%} per doubling of tokens per "
                    "parameter")
    if high["verdict"] == V.SHOWS:
        return found(V.SHOWS)
    beyond = TREND_Z * noise
    if shrink > beyond:
        return found(V.MOVING, [f"the spread shrinks by {shrink:.2%}, beyond its noise of {beyond:.2%}, but is still "
                                f"{high['spread']:.2%} at {high['name']} (the claim: at most {MAX_CHANGE:.0%})"],
                     next="train longer: a level with more tokens per parameter (--minutes)")
    if -shrink > beyond:
        return found(V.NOT_MOVING, [f"the spread grows by {-shrink:.2%}, beyond its noise of {beyond:.2%}"], next=WIDTH_NEXT)
    flat = FLAT_SHARE * low["spread"]
    if abs(shrink) < flat and beyond < flat:
        return found(V.NOT_MOVING, [f"the spread stays at {high['spread']:.2%} (it changed by {abs(shrink):.2%}, less "
                                    f"than {FLAT_SHARE:.0%} of itself, with a noise of {beyond:.2%})"], next=WIDTH_NEXT)
    return found(V.CANNOT_TELL, [f"the spread changes by {shrink:+.2%}, within its noise of {beyond:.2%}"],
                 next="add seeds to each level (the noise), or a level with more tokens per parameter")


def judge_series(dirs: list[Path]) -> Finding:
    """The series finding over the finished level directories."""
    return judge_levels([level_result(level_doc(d)) for d in dirs])
