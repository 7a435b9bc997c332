"""The book chapter's findings 1-3 on the embedding width, judged on a student's own sweeps (one
judge each: lrngpt.experiments.judges; the rules: docs/embedding-width-study.md).

A series (one sweep's runs at one steps / prefix setting) with a training prefix or at least
MANY_PASSES passes is small-data (finding 3); the other series with the most widths is the full-data
one (findings 1 and 2); seeds at one width give the noise. Every move a judge suggests is checked
against the findings that show before it becomes a command (`advise`).
"""

from __future__ import annotations

from lrngpt.experiments.finding import Finding, Move, Verdict, command
from lrngpt.experiments.judges import judge_no_turn, judge_savings, judge_small_data, reading_moves
from lrngpt.experiments.presets import STUDIES
from lrngpt.experiments.shape_findings import is_shape_study, judge_shapes
from lrngpt.experiments.stats import mean_or_none
from lrngpt.experiments.summary import by_width, settings
from lrngpt.experiments.thresholds import FEW_PASSES, MANY_PASSES
from lrngpt.experiments.trend import Noise, seed_noise

EXTRA = ("read_share", "read_twice_share", "train_bpb_read", "train_bpb_unread", "tokens_read")  # seed means


def is_width_study(doc: dict) -> bool:
    """A width preset, or any sweep with model.n_embd as an axis (not a shape study)."""
    return not is_shape_study(doc) and (doc.get("preset") in STUDIES or "model.n_embd" in (doc.get("axes") or {}))


def _meta(doc: dict) -> dict:
    return {"preset": doc.get("preset"), "source": doc.get("preset"), "scale": doc.get("scale"),
            "out": doc.get("out"), **(doc.get("meta") or {})}


def series_of(docs: list[dict]) -> list[dict]:
    """Each sweep's series: its label, passes, whether it is small-data, its widths in order."""
    out = []
    for doc in docs:
        rows = doc.get("rows") or []
        groups = settings(rows)
        per: dict[str, list[dict]] = {}
        for e in by_width(rows):
            if e["val_bpb"] is None:  # no bytes to score: not a point of the curve
                continue
            group = groups[(e["series"], e["n_embd"])]
            per.setdefault(e["series"], []).append({**e, **{k: mean_or_none(r.get(k) for r in group) for k in EXTRA},
                                                    "name": group[0].get("name"),
                                                    "val_split": group[0].get("val_split"),
                                                    "periodic_val": group[0].get("periodic_val") or []})
        name = str(doc.get("label") or doc.get("sweep") or "sweep")
        for label, entries in per.items():
            passes = mean_or_none(e.get("passes") for e in entries)
            small = bool(entries[0].get("train_tokens")) or (passes is not None and passes >= MANY_PASSES)
            out.append({"sweep": name, "series": label, "label": f"{name}: {label}", "entries": entries,
                        "passes": passes, "small": small, "train_tokens": entries[0].get("train_tokens"),
                        "meta": _meta(doc), "steps": entries[0].get("steps")})
    return out


def at_step(full: dict, steps: int) -> tuple[int, dict] | None:
    """The full-data series at the last periodic evaluation at or before `steps` that every width made."""
    common = set.intersection(*({int(s) for s, v in e["periodic_val"] if 0 < s <= steps and v is not None}
                                for e in full["entries"]))
    if not common:
        return None
    t = max(common)
    entries = [{**e, "val_bpb": dict((int(s), v) for s, v in e["periodic_val"])[t]} for e in full["entries"]]
    return t, {**full, "entries": entries, "label": f"{full['label']} at step {t:,}"}


def check(move: Move, shows: set[int], full: dict | None, noise: Noise) -> str | None:
    """None when `move` is safe (its `checked` filled in), else why it would undermine a finding."""
    passes = (full or {}).get("passes")
    if move.tag == "fewer-steps":
        steps = move.sets["train.steps"]
        if 1 not in shows:
            move.checked = "finding 1 does not show here: fewer steps undermine no finding that shows"
            return None
        then = at_step(full, steps) if full else None
        if then is None:
            return (f"fewer steps ({steps:,}) are not offered: finding 1 shows, and these runs measured no val bpb at "
                    f"or before step {steps:,} to check it there")
        t, earlier = then
        f1 = judge_savings(earlier, noise)
        if f1.verdict != Verdict.SHOWS:
            return (f"fewer steps ({steps:,}) are not offered: they would undermine finding 1, which at step {t:,} of "
                    f"these runs {f1.verdict}" + (f" ({f1.reason})" if f1.reason else ""))
        move.checked = f"finding 1 still shows on these runs' periodic val bpb at step {t:,}"
    elif move.tag == "longer":
        if move.minutes:
            move.checked = f"the plan keeps the reading under {FEW_PASSES} passes: finding 2's premise stays"
            return None
        if full is not None and 2 in shows and passes is not None and 2 * passes > FEW_PASSES:
            bigger = next((m for m in reading_moves({**full, "passes": 2 * passes}) if m.tag == "more-text"), None)
            if bigger is None:
                return "more steps are not offered: they would read the text past finding 2's premise"
            move.sets = {**move.sets, **bigger.sets}
            move.why += f", on a larger text ({bigger.sets['data.corpus']})"
            move.checked = f"finding 2 shows: with twice the steps the text must be larger to stay under {FEW_PASSES} passes"
            return None
        move.checked = (f"finding 2 shows and keeps its premise: {2 * passes:.2f} passes" if 2 in shows and passes
                        else "finding 2 does not show here: more steps undermine no finding that shows")
    return None


def advise(found: list[Finding], full: dict | None, noise: Noise, meta: dict, small: dict | None) -> list[Finding]:
    """Each finding's moves checked and written out as commands (`commands`, `next`) for the sweep each
    changes: finding 3's own (no other study) change the small-data sweep, every other the full-data one."""
    shows = {f.claim.number or 0 for f in found if f.verdict == Verdict.SHOWS}
    for f in found:
        kept, notes = [], []
        for move in f.moves:
            problem = check(move, shows, full, noise)
            (notes.append(problem) if problem else kept.append(move))
        own = small["meta"] if small is not None and f.claim.number == 3 else meta
        f.moves, f.commands = [], [command(m, meta if m.study else own) for m in kept]
        f.next = "; ".join(["; or ".join(m.why for m in kept)] * bool(kept) + notes) or None
    return found


def judge(docs: list[dict]) -> list[Finding]:
    """Findings 1-3 on the width-study sweeps among `docs`, then finding 4 on each shape study."""
    shape = [judge_shapes(d) for d in docs if is_shape_study(d)]
    docs = [d for d in docs if is_width_study(d)]
    if not docs:
        return shape
    series = series_of(docs)
    noise = seed_noise(docs)
    full_candidates = [s for s in series if not s["small"] and len(s["entries"]) >= 2]
    # the series with the most widths (ties: the fewest passes, the first given)
    full = min(full_candidates, key=lambda s: (-len(s["entries"]), s["passes"] or 0.0), default=None)
    small = max((s for s in series if s["small"]), key=lambda s: len(s["entries"]), default=None)
    others = [s for s in full_candidates if s is not full]
    found = [judge_savings(full, noise), judge_no_turn(full, others, noise), judge_small_data(small, full, noise)]
    meta = (full or small or {"meta": _meta(docs[0])})["meta"]
    return [*advise(found, full, noise, meta, small), *shape]


def finding_lines(findings: list[Finding]) -> list[str]:
    """The judgement as lines of text (lrn sweep's closing lines)."""
    return ["The book chapter's findings, judged on this sweep:", *(x for f in findings for x in f.lines())] \
        if findings else []
