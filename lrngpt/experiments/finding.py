"""One claim judged on a student's runs: a `Finding`, made by its one constructor (`Finding.judged`)
in every judge; `as_dict` is what --json prints and DIR/verdicts.json keeps, `from_dict` reads it.
Its sentences come from `say`: a word that depends on a sign comes from the number. What it tells a
student to run next is a `Move`, written out (`command`) as `lrn ...` and the matching `lrngpt.*`
call; which moves are safe is decided in lrngpt.experiments.findings.
"""

from __future__ import annotations

import json
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from lrngpt.experiments.presets import STUDIES
from lrngpt.experiments.thresholds import TRAINED


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
    tag: str | None = None  # what the judge checks it against: fewer-steps, longer (more-text: found by it)
    axes: dict = field(default_factory=dict)  # --axis items it changes (None: back to the study's own)
    scale: str | None = None  # another scale: the next one up, where the widths train


def cli_value(v) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def command(move: Move, meta: dict) -> dict:
    """{"cli", "api", "why", "checked"} of `move` for the sweep described by `meta` (lrngpt.experiments.summary.sweep_meta)."""
    out = meta.get("out") or "DIR"
    if move.eval_run is not None:
        run = f"{out}/runs/{move.eval_run}"
        return {"cli": f"lrn eval {run} --by-reads && lrn report {out}", "why": move.why, "checked": move.checked,
                "api": f'lrngpt.load("{run}").eval(split=None, by_reads=True)'}
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
    kw = [f'"{study}"', f"minutes={minutes:g}" if minutes else f'scale="{scale}"' if scale else "scale=None",
          *(f"{k}={json.dumps(v)}" for k, v in (("set", sets), ("axes", axes)) if v), f'out="{new}"']
    return {"cli": cli, "api": f"lrngpt.sweep({', '.join(kw)})", "why": move.why, "checked": move.checked}


class Verdict(StrEnum):
    SHOWS = "shows"
    DOES_NOT_SHOW = "does not show"
    CANNOT_TELL = "cannot tell"
    CANNOT_SHOW = "cannot show at this scale"
    MOVING = "moving toward the claim"
    NOT_MOVING = "not moving toward the claim"
    WORKS = "works"
    FAILS = "fails"
    WITHIN = "within 5%"
    APART = "apart"


HOLDS = {Verdict.SHOWS, Verdict.MOVING, Verdict.WORKS, Verdict.WITHIN}  # the page's colours
FAILS = {Verdict.DOES_NOT_SHOW, Verdict.NOT_MOVING, Verdict.FAILS, Verdict.APART}


@dataclass(frozen=True)
class Claim:
    key: str
    text: str  # the claim, in lrn's words
    source: str  # whose claim it is and what it says (quotes come from lrngpt.experiments.chapter)
    number: int | None = None  # the chapter's findings 1-4


@dataclass(frozen=True)
class Span:
    """Two ends of a range: formatted, one number when both ends read the same."""
    lo: float
    hi: float

    def __format__(self, spec: str) -> str:
        a, b = format(self.lo, spec), format(self.hi, spec)
        return a if a == b else f"{a} to {b}"


class _Words(string.Formatter):
    def format_field(self, value, format_spec: str) -> str:
        if "|" in format_spec:  # "up|down" or "up|down|level": the word for the sign, read at 4 decimals
            words, v = format_spec.split("|"), round(value, 4)
            return words[0] if v > 0 else words[1] if v < 0 or len(words) < 3 else words[2]
        if format_spec.startswith("~"):  # the size alone: the word beside it carries the sign
            return format(abs(value), format_spec[1:])
        return format(value, format_spec)


_WORDS = _Words()


def say(template: str, **numbers) -> str:
    """A sentence from its numbers: str.format, plus "{x:up|down|level}" and "{x:~.4f}" (|x|)."""
    return _WORDS.format(template, **numbers)


def of_untrained(row: dict) -> float | None:
    """Train bpb (val bpb where it has none) over the untrained model's val bpb (its periodic_val at step 0), else None."""
    start = next((v for s, v in row.get("periodic_val") or [] if s == 0 and v), None)
    return None if start is None else (row["val_bpb"] if row.get("train_bpb") is None else row["train_bpb"]) / start


def untrained_because(stale: dict, total: int, none: str, tail: str, prefix: str = "") -> str:
    """Why a claim about trained models cannot show: the `stale` of `total` (name -> its share of the
    untrained bpb) have not trained past token frequencies."""
    who = none if len(stale) == total else \
        f"{prefix}{', '.join(map(str, stale))} {'has' if len(stale) == 1 else 'have'} not"
    return say("{who} trained past token frequencies: {it} {r:.0%} of the untrained model's bpb on the training "
               "text, above " + tail, who=who, it="it scores" if len(stale) == 1 else "they score",
               r=Span(min(stale.values()), max(stale.values())), t=TRAINED)


@dataclass
class Finding:
    claim: Claim
    verdict: Verdict
    reason: str | None = None  # why it does not show, cannot tell or cannot show: the deciding numbers
    evidence: list[str] = field(default_factory=list)
    numbers: dict = field(default_factory=dict)
    next: str | None = None  # what can change the verdict (None: nothing these runs can)
    commands: list[dict] = field(default_factory=list)  # {"cli", "api", "why", "checked"} (advice.command)
    study: str | None = None  # the chapter's part it was judged on (lrn chapter)
    moves: list[Move] = field(default_factory=list)  # what would tell, until the findings judge checks them

    @classmethod
    def judged(cls, claim: Claim, verdict: Verdict, because: Sequence[str] = (), evidence: Sequence[str] = (),
               numbers: dict | None = None, moves: Sequence[Move] = (), next: str | None = None) -> Finding:
        """The one constructor: `because` the sentences (from `say`) that decide the verdict."""
        return cls(claim, Verdict(verdict), "; ".join(because) or None, list(evidence), dict(numbers or {}),
                   next, [], None, list(moves))

    @property
    def title(self) -> str:
        return f"{self.claim.number}. {self.claim.text}" if self.claim.number else self.claim.text

    def as_dict(self) -> dict:
        return {"number": self.claim.number, "key": self.claim.key, "finding": self.claim.text,
                "verdict": str(self.verdict), "reason": self.reason, "next": self.next, "commands": self.commands,
                "evidence": self.evidence, "chapter": self.claim.source, "numbers": self.numbers,
                **({"study": self.study, "summary": self.title} if self.study else {})}

    @classmethod
    def from_dict(cls, d: dict) -> Finding:
        """A finding as as_dict wrote it (DIR/verdicts.json, a sweep's --json)."""
        return cls(Claim(d["key"], d["finding"], d.get("chapter") or "", d.get("number")), Verdict(d["verdict"]),
                   d.get("reason"), list(d.get("evidence") or []), dict(d.get("numbers") or {}), d.get("next"),
                   list(d.get("commands") or []), d.get("study"))

    def lines(self) -> list[str]:
        """The finding as lines of text (lrn sweep's closing lines)."""
        out = [f"{self.title}: {self.verdict.upper()}" + (f": {self.reason}." if self.reason else ".")]
        out += [f"   - {e}" for e in self.evidence]
        if self.next:
            out.append(f"   next: {self.next}.")
        return out + [f"     $ {c['cli']}" for c in self.commands]
