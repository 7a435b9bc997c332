"""The book chapter on a laptop (`lrn chapter`): its parts (width, seeds, small-data, width-depth,
planted, pip, superposition), the plan stored in DIR/chapter.json, and the verdicts judged on them.
How the parts share a budget: lrngpt.experiments.chapter_budget; docs/chapter-on-a-laptop.md has the
measurements behind each protocol.
"""

from __future__ import annotations

import math
import types
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Protocol, Union, get_args, get_origin, get_type_hints

from lrngpt.core.fsio import json_safe
from lrngpt.errors import UserError, option
from lrngpt.experiments import planted
from lrngpt.experiments.finding import Claim, Finding
from lrngpt.experiments.finding import Verdict as V
from lrngpt.experiments.findings import judge
from lrngpt.experiments.shape_findings import judge_series


class ChapterFiles(Protocol):
    """What the verdicts read and write of a chapter directory (lrngpt.experiments.chapter_dir.ChapterDir,
    which imports this module: a Protocol keeps the import graph without a cycle)."""
    def part(self, name: str) -> Path: ...
    def sweep(self, name: str) -> dict: ...
    def result(self, name: str) -> dict | None: ...
    def write_verdicts(self, found: list[dict]) -> None: ...


VERSION = 1
CHAPTER_SCALES = ("laptop", "tiny", "full")  # the chapter's protocols (a sweep's scales: presets.SCALES)
SEED_WIDTH, EXTRA_SEEDS = 64, [1338, 1339]  # the chapter's own check: d = 64 twice more, only the seed changed

CLAIMS = {  # study -> (what the chapter argues, its source); a sweep preset is a study of presets.STUDIES
    "width": ("findings 1 and 2: each doubling of d saves less; no turn while hardly a token is read twice",
              "the book chapter"),
    "seeds": ("the noise: d = 64 trained twice more with only the seed changed", "the book chapter"),
    "small-data": ("finding 3: on a small prefix read many times the curve turns", "the book chapter"),
    "width-depth": ("finding 4: at a fixed non-embedding parameter count, d_model / n_layer changed 40-fold "
                    "changes the loss only a little", "Kaplan et al. 2020, cited by the book chapter"),
    "planted": ("a rare token's row is under-trained (fewer reads than numbers); tied, it moves all the same",
                "lrn's own rule, input reads < d, on the lecture's remark that a rare token may be under-trained"),
    "pip": ("the width chosen before training by the PIP loss (Yin & Shen 2018), beside the measured best",
            "the book chapter"),
    "superposition": ("sparse features are stored in fewer dimensions than features (Elhage et al. 2022)",
                      "the lecture on embedding tables, which remarks on superposition"),
}


def seeds_reuse(width_rows: list[dict], seeds_rows: list[dict]) -> list[dict]:
    """The seeds part's rows with the width study's run at SEED_WIDTH added (the same config, trained once)."""
    have = {r.get("seed") for r in seeds_rows}
    mine = [r for r in width_rows if r.get("n_embd") == SEED_WIDTH and r.get("seed") not in have]
    keys = ("steps", "corpus", "batch_size", "train_tokens")
    ref = seeds_rows[0] if seeds_rows else None
    return seeds_rows + [r for r in mine if ref is None or all(r.get(k) == ref.get(k) for k in keys)]


SUPERPOSITION = Claim("superposition", CLAIMS["superposition"][0], "the lecture: several features can share one "
                      "representation (superposition), so d numbers per token do not make d named features")
PIP = Claim("pip", CLAIMS["pip"][0], "the book chapter, on Yin & Shen (2018): their results were measured with the PIP "
            "loss and word tests, ours with the validation loss of next-token prediction")
# where each study's premise held when measured (docs/chapter-on-a-laptop.md): the next step of "cannot show"
CAN_SHOW = {"laptop": "the laptop plan, `lrn chapter --minutes 60 --out DIR` (its measured hour trained every width "
                      "and the superposition toy)",
            "full": "`lrn chapter --scale full --out DIR` on a GPU, each study at the book chapter's own scale"}


def superposition_verdict(result: dict) -> Finding:
    """Shows when sparse features leave more features represented than dimensions, and more than dense
    ones do; a toy that keeps more than one feature a dimension when dense has not trained yet."""
    rows, dims = sorted(result["sparsities"], key=lambda r: r["sparsity"]), result["dims"]
    dense, sparse = rows[0]["represented"], max(r["represented"] for r in rows)
    at = next(r["sparsity"] for r in rows if r["represented"] == sparse)
    evidence = [f"{r['represented']} of {result['features']} features represented (norm above 0.5) at sparsity "
                f"{r['sparsity']:g}" for r in rows]
    numbers = {"dims": dims, "dense": dense, "sparsest": sparse, "at": at, "steps": result.get("steps")}
    if dense > dims:
        return Finding.judged(SUPERPOSITION, V.CANNOT_SHOW, [
            f"dense, the toy keeps {dense} features in {dims} dimensions, more than one a dimension: after "
            f"{result.get('steps')} steps it has not trained to the paper's dense picture, so more features when sparse "
            "is not yet superposition"], evidence, numbers, next="train the toy longer: at 1,000 steps (the laptop "
            "plan's) it keeps 5 features in 5 dimensions when dense")
    shows = sparse > dims and sparse > dense
    return Finding.judged(SUPERPOSITION, V.SHOWS if shows else V.DOES_NOT_SHOW, [] if shows else [
        f"dense features kept {dense} and the sparsest kept {sparse} in {dims} dimensions: sparsity did not add "
        "features beyond the dimensions"], evidence, numbers)


def pip_verdict(result: dict, untrained: bool = False) -> Finding:
    """The prediction beside the measured best width: a comparison, not a finding that shows or fails."""
    k = result["optimal"]["k"]
    s = result.get("sweep") or {}
    d = s.get("best_width")
    lo, hi = result["within"]["5%"]
    numbers = {"k": k, "within_5%": [lo, hi], "best_width": d}
    evidence = [f"PIP-optimal width k = {k} (within 5%: {lo} ... {hi}); the width study's best d = {d}"] + (
        [f"PIP loss at d = {d}: {s['pip_loss_at_best_width']:.2f}x its lowest"] if s.get("pip_loss_at_best_width")
        else [])
    if d is None:
        return Finding.judged(PIP, V.CANNOT_TELL, ["the width study measured no best width"], evidence, numbers)
    if untrained:
        return Finding.judged(PIP, V.CANNOT_SHOW, ["the width study's widths have not trained (finding 1's premise): "
                                                   "its best width says nothing yet"], evidence, numbers,
                              next="train the width study until its widths train (finding 1's next step)")
    if lo <= d <= hi:
        return Finding.judged(PIP, V.WITHIN, [], evidence, numbers)
    return Finding.judged(PIP, V.APART, [s.get("far_apart") or (
        f"the prediction is {max(k, d) / max(1, min(k, d)):.1f}x from the measured best (signal rank "
        f"{result['signal_rank']} of {result['rows']} tokens, {result['tokens']:,} training tokens): "
        f"{s.get('yardsticks', '')}")], evidence, numbers)


def verdict_lines(verdicts: list[dict]) -> list[str]:
    out = ["The chapter on this machine, study by study:"]
    for v in map(Finding.from_dict, verdicts):
        out.append(f"- {v.study}: {v.verdict.upper()}: {v.title}" + (f"; {v.reason}" if v.reason else ""))
    return out


@dataclass
class Part:
    """One part as planned: a sweep (source, scale, set, axes, budget), the planted pair (`plan`), the
    PIP estimate (corpus, vocab_size, top) or the superposition toy (steps)."""
    name: str
    kind: str
    what: str
    est_seconds: float
    deviations: list[str] = field(default_factory=list)
    source: str | None = None
    scale: str | None = None
    set: list[str] = field(default_factory=list)
    axes: dict = field(default_factory=dict)
    corpus: str | None = None
    points_at_once: int | None = None
    budget: dict | None = None
    point_seconds: dict = field(default_factory=dict)
    plan: dict | None = None
    vocab_size: int | None = None
    top: int | None = None
    steps: int | None = None


@dataclass
class ChapterPlan:
    """The chapter planned: its parts in order, the whole's estimate and what it gave up to fit (`shrunk`)."""
    scale: str
    minutes: float | None
    out: str
    parts: list[Part]
    est_seconds: float
    version: int = VERSION
    shrunk: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return json_safe(asdict(self))

    @classmethod
    def from_dict(cls, doc) -> ChapterPlan:
        """The plan `to_dict` wrote, from the JSON object `doc`; ValueError or TypeError (a field missing,
        parts that are no list) for anything else."""
        plan = _typed(cls, {**doc, "parts": [_typed(Part, p) for p in doc.get("parts", [])]})
        times = [plan.est_seconds, *(p.est_seconds for p in plan.parts)]
        if plan.version != VERSION or plan.scale not in CHAPTER_SCALES or not plan.parts or (plan.scale == "laptop") != \
                (plan.minutes is not None) or not all(math.isfinite(t) and t >= 0 for t in times):
            raise ValueError("not a chapter plan")
        return plan


def _typed(cls, doc):
    """`cls` made from the dict `doc`, each field of the type it declares (ValueError otherwise; TypeError
    where a field it needs is missing)."""
    hints = get_type_hints(cls)  # (a dataclass's: its fields)
    if not isinstance(doc, dict) or not all(_is(v, hints[k]) for k, v in doc.items() if k in hints):
        raise ValueError(f"not a {cls.__name__}")
    return cls(**{k: v for k, v in doc.items() if k in hints})


def _is(value, hint) -> bool:
    """`value`, as JSON gives it, is of the type `hint` (X | None, list[str], dict; a float may be an int)."""
    if get_origin(hint) in (Union, types.UnionType):
        return any(_is(value, h) for h in get_args(hint))
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    kind = get_origin(hint) or hint
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        return False
    return kind is not list or not get_args(hint) or all(_is(v, get_args(hint)[0]) for v in value)


def check_same(stored: ChapterPlan, scale: str, minutes: float | None, out: Path) -> None:
    if stored.scale != scale or (scale == "laptop" and minutes != stored.minutes):
        was = f"--minutes {stored.minutes:g}" if stored.minutes is not None else f"--scale {stored.scale}"
        now = f"--minutes {minutes:g}" if scale == "laptop" else f"--scale {scale}"
        raise UserError(f"{out} holds the chapter planned with {was}, not {now}: run the same command to resume it "
                        f"(`lrn chapter {was} --out {out}`), or give a new {option('out')}")


def verdicts(chapter: ChapterFiles, plan: ChapterPlan) -> list[dict]:
    """Every study's Finding, in the plan's order, written to DIR/verdicts.json (what this returns)."""
    wide, seeds, small = (chapter.sweep(n) for n in ("width", "seeds", "small-data"))
    seeds["rows"] = seeds_reuse(wide.get("rows") or [], seeds.get("rows") or [])
    width = judge([wide, seeds, small])  # findings 1-3, the width study's seed-1337 run among the seeds
    levels = [chapter.part(p.name) for p in plan.parts if p.name.startswith("width-depth/")]
    pip, toy = chapter.result("pip.json"), chapter.result("superposition.json")
    assert pip is not None and toy is not None  # every part ran before the verdicts
    studies = {"width": width[:2], "small-data": width[2:], "width-depth": [judge_series(levels)],
               "planted": planted.planted_findings(chapter.part("planted")),
               "pip": [pip_verdict(pip, "untrained" in width[0].numbers)],
               "superposition": [superposition_verdict(toy)]}
    up = {"tiny": "laptop", "laptop": "full"}.get(plan.scale)
    found = []
    for study, findings in studies.items():
        for f in findings:
            f.study = study
            if f.verdict == V.CANNOT_SHOW:  # the chapter's own next scale, not a sweep's
                where = up if study != "width-depth" or up is None else "full"
                f.next, f.commands = (f"run it where it can: {CAN_SHOW[where]}" if where else None), []
            found.append(f.as_dict())
    chapter.write_verdicts(found)
    return found
