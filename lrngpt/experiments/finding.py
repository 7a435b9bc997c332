"""One claim judged on a student's runs: a `Finding`, made by its one constructor (`Finding.judged`)
in every judge; `as_dict` is what --json prints and DIR/verdicts.json keeps, `from_dict` reads it.
Its sentences come from `say`: a word that depends on a sign comes from the number.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from lrngpt.experiments.advice import Move
from lrngpt.experiments.thresholds import TRAINED


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
