"""What the findings judge tells a student to run next: a `Move` written out (`command`) as `lrn ...`
and the matching `lrngpt.*` call. Which moves are safe is decided in lrngpt.experiments.findings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from lrngpt.experiments.presets import STUDIES


@dataclass
class Move:
    why: str  # what it does, for the sentence: "draws validation from all over the text"
    study: str | None = None  # another study to run beside this sweep; None: this sweep's own
    sets: dict = field(default_factory=dict)  # --set items it adds
    suffix: str = "-next"  # its --out: this sweep's + suffix
    beside: bool = False  # judged beside this sweep (lrn report DIR DIR2), not instead of it
    checked: str | None = None  # how the judge checked that it undermines no finding that shows
    eval_run: str | None = None  # lrn eval RUN --by-reads on this run instead of a sweep
    minutes: float | None = None  # a budgeted sweep's new budget (its plan chooses the steps)
    tag: str | None = None  # what the judge checks it against: fewer-steps, longer, more-text, chunks
    meta: dict | None = None  # the sweep it changes, when not the one the finding was judged on
    axes: dict = field(default_factory=dict)  # --axis items it changes (None: back to the study's own)
    scale: str | None = None  # another scale: the next one up, where the widths train


def cli_value(v) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def command(move: Move, meta: dict) -> dict:
    """{"cli", "api", "why", "checked"} of `move` for the sweep described by `meta` (lrngpt.experiments.summary.sweep_meta)."""
    meta = move.meta or meta
    out = meta.get("out") or "DIR"
    if move.eval_run is not None:
        run = f"{out}/runs/{move.eval_run}"
        return {"cli": f"lrn eval {run} --by-reads && lrn report {out}",
                "api": f'lrngpt.load("{run}").eval(split=None, by_reads=True)', "why": move.why,
                "checked": move.checked}
    study = move.study or meta.get("source") or meta.get("preset") or "embed-dim"
    sets = {**(meta.get("sets") or {}), **move.sets}
    if STUDIES.get(move.study or "", {}).get("steps_factor") and "train.steps" not in move.sets:
        sets.pop("train.steps", None)  # the 4x-steps study derives its own from the scale's
    minutes = move.minutes or meta.get("minutes")  # a budget: planned anew, its own steps, batch and corpus size
    scale = move.scale or (meta.get("scale") if meta.get("scale") not in (None, "budget") else None)
    how = f" --minutes {minutes:g}" if minutes else f" --scale {scale}" if scale else ""
    new = f"{out}{move.suffix}"
    axes = dict(meta.get("axes") or {}) if move.study in (None, meta.get("source")) else {}  # its own grid, again
    axes = {k: v for k, v in {**axes, **move.axes}.items() if v is not None}
    cli = f"lrn sweep {study}{how}" + "".join(f" --set {k}={cli_value(v)}" for k, v in sets.items()) + "".join(
        f" --axis {k}={','.join(map(cli_value, v))}" for k, v in axes.items()) + f" --out {new}"
    if move.beside:
        cli += f" && lrn report {out} {new}"
    kw = [f'"{study}"', f"minutes={minutes:g}" if minutes else f'scale="{scale}"' if scale else "scale=None"]
    if sets:
        kw.append(f"set={json.dumps(sets)}")
    if axes:
        kw.append(f"axes={json.dumps(axes)}")
    kw.append(f'out="{new}"')
    return {"cli": cli, "api": f"lrngpt.sweep({', '.join(kw)})", "why": move.why, "checked": move.checked}
