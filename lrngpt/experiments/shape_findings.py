"""Width against depth at a fixed budget (finding 4), judged on one shape sweep's summary document.

Kaplan et al. (2020): with the non-embedding parameters fixed, the loss changes by at most 3% while
d_model / n_layer varies 40-fold. The change is (worst - best) / best of the shapes' seed-mean val bpb,
the noise the largest seed max - min over the best; it shows when change + noise <= MAX_CHANGE
(docs/width-depth-study.md derives the thresholds). The width-depth scale series (`judge_series`): does
that change shrink as the runs read more tokens per non-embedding parameter? Only levels whose shapes
trained count; the trend is judged on the lowest and the highest of them.
"""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path

from lrngpt.core.fsio import read_json_object
from lrngpt.errors import UserError
from lrngpt.experiments.depth_series import CHAPTER as PROTOCOL
from lrngpt.experiments.finding import Claim, Finding, of_untrained, say, untrained_because
from lrngpt.experiments.finding import Verdict as V
from lrngpt.experiments.presets import SHAPE_STUDIES
from lrngpt.experiments.stats import lsq_slope, mean_or_none
from lrngpt.experiments.sweepdir import SweepDir
from lrngpt.experiments.thresholds import TRAINED

MAX_CHANGE = 0.03  # the loss may change by at most 3% across the shapes (Kaplan et al.'s 3%)
RATIO_SPAN = 40.0  # d_model / n_layer must span at least 40x (Kaplan et al.'s 40-fold)
PARAMS_TOLERANCE = 0.01  # non-embedding parameters at most 1% apart (largest / smallest - 1): the budget held
MIN_SHAPES = 3  # fewer make no curve to judge

CHAPTER = ("the chapter, citing Kaplan et al. (2020): with the non-embedding parameters fixed, changing d_model / "
           "n_layer 40-fold changes the loss only a little; 6 layers x 4,288 came within 3% of 48 layers x 1,600 "
           "(GPT-2's largest model)")
CLAIM = Claim("width-depth-flat", "At a fixed non-embedding parameter count the loss changes by at most 3% while "
              "d_model / n_layer varies 40-fold", CHAPTER, 4)
SEEDS_NEXT = "add seeds, e.g. --axis train.seed=1337,1338,1339 (at least two a shape give the noise)"


def is_shape_study(doc: dict) -> bool:
    """The width-depth preset, or any sweep with model.n_layer on an axis (alone or linked)."""
    return doc.get("preset") in SHAPE_STUDIES or any(
        "model.n_layer" in str(key).split("+") for key in (doc.get("axes") or {}))


def non_embedding(row: dict) -> int | None:
    """A GPT row's parameters outside the token and position tables and the LM head."""
    return row.get("non_embedding", (row.get("breakdown") or {}).get("blocks"))


def shapes(rows: list[dict]) -> list[dict]:
    """Per (n_layer, n_embd), widest first: d/L, non-embedding parameters, val bpb over seeds."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if r.get("n_layer") and r.get("n_embd") and r.get("val_bpb") is not None:
            groups.setdefault((r["n_layer"], r["n_embd"]), []).append(r)
    out = []
    for (n_layer, n_embd), group in groups.items():
        vals = [r["val_bpb"] for r in group]
        out.append({"n_layer": n_layer, "n_embd": n_embd, "ratio": n_embd / n_layer,
                    "of_untrained": mean_or_none(of_untrained(r) for r in group),
                    "non_embedding": non_embedding(group[0]), "seeds": [r.get("seed") for r in group],
                    "val_bpb": sum(vals) / len(vals), "val_bpbs": vals, "spread": max(vals) - min(vals),
                    "tokens_read": group[0].get("tokens_read")})
    return sorted(out, key=lambda s: -s["ratio"])


def _name(e: dict) -> str:
    return f"{e['n_layer']} x {e['n_embd']} (d/L {e['ratio']:.3g})"


def judge_shapes(doc: dict) -> Finding:
    """The finding judged on one shape sweep's summary document."""
    entries = shapes(doc.get("rows") or [])
    label = str(doc.get("label") or doc.get("sweep") or "sweep")
    if len(entries) < MIN_SHAPES:
        return Finding.judged(CLAIM, V.CANNOT_TELL, [f"only {len(entries)} shapes: a change across shapes needs "
                                                     f"{MIN_SHAPES} or more"], [f"{label}: {len(entries)} shapes finished"],
                              next="run the width-depth preset's shapes (lrn sweep width-depth --out DIR)")
    listed = "; ".join(f"{_name(e)}: {e['val_bpb']:.4f}" + (f" over {len(e['seeds'])} seeds" if len(e["seeds"]) > 1
                                                              else "") for e in entries)
    evidence = [f"val bpb by shape, n_layer x n_embd ({label}): {listed}"]
    span = max(e["ratio"] for e in entries) / min(e["ratio"] for e in entries)
    params = [e["non_embedding"] for e in entries]
    numbers: dict = {"span": span, "shapes": entries}
    found = partial(Finding.judged, CLAIM, evidence=evidence, numbers=numbers)  # each at the numbers it ends with
    if any(p is None for p in params):
        return found(V.CANNOT_TELL, ["the rows do not say their non-embedding parameters (a GPT's blocks)"])
    unequal = max(params) / min(params) - 1
    evidence.append(f"non-embedding parameters {min(params):,} to {max(params):,} ({unequal:.2%} apart); "
                    f"d/L spans {span:.1f}x")
    numbers["params_apart"] = unequal
    if unequal > PARAMS_TOLERANCE:
        return found(V.CANNOT_TELL, [f"the shapes' non-embedding parameters differ by {unequal:.1%}, more than "
                                     f"{PARAMS_TOLERANCE:.0%}: the budget was not held fixed"],
                     next="give each depth the width that keeps 12 n_layer d^2 equal (the width-depth preset's shapes)")
    if span < RATIO_SPAN:
        return found(V.CANNOT_TELL, [f"d/L spans only {span:.1f}x, short of the {RATIO_SPAN:.0f}x the finding is about"],
                     next="add a wider-shallower or a deeper-narrower shape")
    best, worst = min(entries, key=lambda e: e["val_bpb"]), max(entries, key=lambda e: e["val_bpb"])
    change = (worst["val_bpb"] - best["val_bpb"]) / best["val_bpb"]
    slope = lsq_slope([math.log2(e["ratio"]) for e in entries], [e["val_bpb"] for e in entries])  # per doubling
    seeded = [e for e in entries if len(e["seeds"]) > 1]
    numbers.update(change=change, best=best, worst=worst, slope_per_doubling=slope)
    evidence.append(say("lowest at {b}, highest at {w}: the loss changes by {c:.2%}; least squares {s:+.4f} bpb per "
                        "doubling of d/L (the {which} shapes worse)", b=_name(best), w=_name(worst), c=change, s=slope,
                        which="wider, shallower" if slope > 0 else "deeper, narrower"))
    tokens = best.get("tokens_read")
    per = tokens / best["non_embedding"] if tokens and best["non_embedding"] else None
    if per is not None:
        evidence.append(f"each run read {tokens:,} tokens, {per:.2g} per non-embedding parameter")
    spread = max(seeded, key=lambda e: e["spread"]) if seeded else None
    noise = spread["spread"] / best["val_bpb"] if spread else 0.0
    if spread:
        numbers.update(noise=noise, noise_bpb=spread["spread"])
        evidence.append(f"seed noise {spread['spread']:.4f} bpb ({noise:.2%} of the lowest), the largest max - min "
                        f"over the seeds of one shape ({_name(spread)}, seeds {', '.join(map(str, spread['seeds']))})")
    stale = {_name(e): e["of_untrained"] for e in entries if (e["of_untrained"] or 0) > TRAINED}
    if stale:
        numbers["untrained"] = stale
        return found(V.CANNOT_SHOW, [untrained_because(stale, len(entries), "no shape has", "{t:.0%}, so the shapes "
                                                       "differ by how little each has learned yet")],
                     next="train longer: the study at the next scale up (--scale cpu, then --scale full on a GPU)")
    if not spread:
        return found(V.CANNOT_TELL, ["one seed per shape: no noise to judge the change against"], next=SEEDS_NEXT)
    if change + noise <= MAX_CHANGE:
        return found(V.SHOWS)
    if change - noise > MAX_CHANGE:
        return found(V.DOES_NOT_SHOW, [f"val bpb is {change:.1%} higher at {_name(worst)} than at {_name(best)}, beyond "
                                       f"the {MAX_CHANGE:.0%} and the seed noise of {noise:.2%}"],
                     next="train longer: " + (f"these runs read {per:.2g} tokens per non-embedding parameter, and "
                                              if per else "") + "Kaplan et al.'s finding is about models trained far "
                     "longer (--scale full reads 40x the tokens of --scale cpu, on a GPU)")
    return found(V.CANNOT_TELL, [f"the change of {change:.2%} is within the seed noise ({noise:.2%}) of the "
                                 f"{MAX_CHANGE:.0%}"], next=SEEDS_NEXT)


def shape_table(rows: list[dict]) -> list[str]:
    """A Markdown table of the shapes (the sweep's summary.md)."""
    out = ["| n_layer | n_embd | d/L | non-embedding params | val bpb | seeds | max-min |",
           "|---:|---:|---:|---:|---:|---|---:|"]
    for e in shapes(rows):
        params = "-" if e["non_embedding"] is None else f"{e['non_embedding']:,}"
        out.append(f"| {e['n_layer']} | {e['n_embd']} | {e['ratio']:.3g} | {params} | {e['val_bpb']:.4f} | "
                   f"{', '.join(map(str, e['seeds']))} | {e['spread']:.4f} |")
    return out


TREND_Z = 1.0  # moved: the ends differ by more than TREND_Z x sqrt(noise_low^2 + noise_high^2)
FLAT_SHARE = 0.1  # flat: changed by less than this share of itself, with a noise small enough to see that
MIN_LEVELS = 2  # a trend needs two levels
WIDTH_NEXT = ("the deep, narrow shapes also get the narrowest token table and LM head, which the non-embedding count "
              "leaves out; a level with more tokens per parameter would tell whether they catch up later")
SERIES_CLAIM = Claim("width-depth-series", "As the runs read more tokens per non-embedding parameter, the loss's change "
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
    found = partial(Finding.judged, SERIES_CLAIM, evidence=evidence, numbers=numbers)  # each at the numbers it ends with
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
