"""What the findings judge tells a student to run next, as commands: `lrn ...` and the matching
`lrngpt.*` call.

A `Move` is one change to this sweep (another study beside it, the same study with more `--set`
items, or `lrn eval --by-reads` on its runs); `command(move, meta)` writes it out for the sweep the
judge read (its study or file, its scale or budget, the --set items it was run with, its --out).
Which moves are safe is decided in lrngpt.experiments.findings, which checks each against the
findings that show; this module only writes them down.

`sweep_meta(definition, out)` recovers from sweep.json what the sweep was run with: its --set items
are the keys where its base config differs from its study's at its scale (and its budget's plan).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from lrngpt.errors import UserError
from lrngpt.experiments.grid import resolve_base
from lrngpt.experiments.presets import STUDIES
from lrngpt.runconfig.schema import flat_keys
from lrngpt.runconfig.values import DERIVED


@dataclass
class Move:
    why: str  # what it does, for the sentence: "draws validation from all over the text"
    study: str | None = None  # another study to run beside this sweep; None: this sweep's own
    sets: dict = field(default_factory=dict)  # --set items it adds
    suffix: str = "-next"  # its --out: this sweep's + suffix
    beside: bool = True  # judged beside this sweep (lrn report DIR DIR2), not instead of it
    checked: str | None = None  # how the judge checked that it undermines no finding that shows
    eval_run: str | None = None  # lrn eval RUN --by-reads on this run instead of a sweep
    minutes: float | None = None  # a budgeted sweep's new budget (its plan chooses the steps)
    tag: str | None = None  # what the judge checks it against: fewer-steps, longer, more-text, chunks
    meta: dict | None = None  # the sweep it changes, when not the one the finding was judged on
    axes: dict = field(default_factory=dict)  # --axis items it changes (None: back to the study's own)


def _value(v) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def _sets_cli(sets: dict) -> str:
    return "".join(f" --set {k}={_value(v)}" for k, v in sets.items())


def command(move: Move, meta: dict) -> dict:
    """{"cli", "api", "why", "checked"} of `move` for the sweep described by `meta` (sweep_meta)."""
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
    scale = meta.get("scale") if meta.get("scale") not in (None, "budget") else None
    how = f" --minutes {minutes:g}" if minutes else f" --scale {scale}" if scale else ""
    new = f"{out}{move.suffix}"
    axes = dict(meta.get("axes") or {}) if move.study in (None, meta.get("source")) else {}  # its own grid, again
    axes = {k: v for k, v in {**axes, **move.axes}.items() if v is not None}
    cli = f"lrn sweep {study}{how}{_sets_cli(sets)}" + "".join(
        f" --axis {k}={','.join(map(_value, v))}" for k, v in axes.items()) + f" --out {new}"
    if move.beside:
        cli += f" && lrn report {out} {new}"
    kw = [f'"{study}"', f"minutes={minutes:g}" if minutes else f'scale="{scale}"' if scale else "scale=None"]
    if sets:
        kw.append("set={" + ", ".join(f'"{k}": {json.dumps(v)}' for k, v in sets.items()) + "}")
    if axes:
        kw.append("axes={" + ", ".join(f'"{k}": {json.dumps(v)}' for k, v in axes.items()) + "}")
    kw.append(f'out="{new}"')
    return {"cli": cli, "api": f"lrngpt.sweep({', '.join(kw)})", "why": move.why, "checked": move.checked}


def sweep_meta(definition: dict, out: str | Path | None) -> dict:
    """What the sweep in `out` was run with: source, scale, budget minutes, its --set items, out."""

    source, scale = definition.get("source") or definition.get("preset"), definition.get("scale")
    budget = definition.get("budget") if isinstance(definition.get("budget"), dict) else None
    meta = {"source": source, "preset": definition.get("preset"), "scale": scale, "out": None if out is None else
            str(out), "minutes": (budget or {}).get("minutes"), "sets": None}
    base = definition.get("base")
    if not isinstance(source, str) or not isinstance(scale, str) or not isinstance(base, dict):
        return meta
    plan = [f"{k}={_value(v)}" for k, v in ((budget or {}).get("sets") or {}).items()]
    try:
        ref = resolve_base(source, scale, plan)[0]  # the base alone: no point is built
    except (UserError, OSError, ValueError, TypeError, KeyError):
        return meta  # a sweep file moved away, or a preset this lrn no longer has: no --set items
    mine, theirs = flat_keys(base), flat_keys(ref)
    meta["sets"] = {k: v for k, v in mine.items() if k != "name" and k not in DERIVED
                    and theirs.get(k, object()) != v and k not in ((budget or {}).get("sets") or {})}
    axes, study = definition.get("axes") or {}, STUDIES.get(source, {}).get("axes", {})
    planned = (budget or {}).get("axes") or {}
    meta["axes"] = {k: v for k, v in axes.items() if study.get(k) != v and k not in planned}
    return meta
