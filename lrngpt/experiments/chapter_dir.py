"""A chapter directory and its one owner, `ChapterDir`: chapter.json (the plan), timing.jsonl (a row a
finished part), each part's directory, pip.json, superposition.json, verdicts.json and report.html.
A command reads each file once (lrngpt.core.once.parsed, which the sweeps' files go through too); the
timing rows are kept here, as a record cut by a kill must not lose the row appended after it.
"""

from __future__ import annotations

import json
from pathlib import Path

from lrngpt.core.fsio import damaged, json_safe, read_json_object, user_path
from lrngpt.core.once import parsed
from lrngpt.core.ownership import check_dir_target, lrn_kind, write_manifest, write_owned_file
from lrngpt.errors import UserError, option
from lrngpt.experiments.chapter_plan import CLAIMS, ChapterPlan
from lrngpt.experiments.finding import Finding
from lrngpt.experiments.summary import collect
from lrngpt.experiments.time_ledger import append_row, read_rows

KIND = "chapter"
PLAN, TIMING, VERDICTS, PAGE = "chapter.json", "timing.jsonl", "verdicts.json", "report.html"
RESULTS = {"pip.json": "PIP estimate", "superposition.json": "superposition result"}


class ChapterDir:
    """The files of one chapter directory, the only code that opens them."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._timing: dict[str, dict] | None = None

    def plan(self) -> ChapterPlan | None:
        """The plan the directory was started with (None: not a chapter directory yet); a damaged one is
        named with the fix."""
        path = self.path / PLAN
        if not path.is_file() or lrn_kind(self.path) != KIND:
            return None
        try:
            return parsed(path, "chapter plan", lambda p: ChapterPlan.from_dict(read_json_object(p, "chapter plan")))
        except (ValueError, TypeError):
            raise UserError(f"chapter plan {path} is not the plan lrn wrote (edited or damaged); choose a new "
                            f"directory for {option('out')} and run the chapter again (the finished studies inside "
                            "stay readable with `lrn report`)") from None

    def check_new(self) -> None:
        """A new or empty directory (a chapter directory resumes instead: plan())."""
        check_dir_target(self.path, False, KIND)

    def start(self, plan: ChapterPlan) -> None:
        with user_path(self.path, option("out")):
            self.path.mkdir(parents=True, exist_ok=True)
        write_manifest(self.path, KIND)
        write_owned_file(self.path / PLAN, json.dumps(plan.to_dict(), indent=1), "chapter plan")

    def timing(self) -> dict[str, dict]:
        """Each finished part's row ({"part", "est_seconds", "seconds"}), by part."""
        if self._timing is None:
            self._timing = {r["part"]: r for r in read_rows(
                self.path / TIMING, "chapter timing", "is damaged", "the part it names runs again, resuming what it "
                "had done", required="part")}
        return self._timing

    def finish(self, part: str, est_seconds: float, seconds: float) -> None:
        """`part` finished in `seconds` (its plan said `est_seconds`): a row of timing.jsonl."""
        row = {"part": part, "est_seconds": est_seconds, "seconds": round(seconds, 1)}
        done = self.timing()  # (read before the append: the rows so far, then this one)
        append_row(self.path / TIMING, row, "chapter timing", TIMING)
        done[part] = row

    def seconds(self) -> float:
        """The parts' seconds so far."""
        return round(sum(r["seconds"] for r in self.timing().values()), 1)

    def part(self, name: str) -> Path:
        return self.path / name

    def write_result(self, name: str, doc: dict) -> None:
        write_owned_file(self.path / name, json.dumps(json_safe(doc)), "chapter result")

    def result(self, name: str) -> dict | None:
        """pip.json or superposition.json (None: that part has not run)."""
        path, what = self.path / name, RESULTS[name]
        return parsed(path, what, lambda p: read_json_object(p, what, own=True)) if path.is_file() else None

    def sweep(self, name: str) -> dict:
        """A sweep part collected (its rows, so far: partial), as the judges and figures take it."""
        d = self.part(name)
        return {**collect(d, partial=True), "out": str(d), "dir": d, "label": d.name}

    def write_verdicts(self, found: list[dict]) -> None:
        write_owned_file(self.path / VERDICTS, json.dumps(json_safe({"verdicts": found})), "chapter result")

    def verdicts(self) -> list[dict]:
        """verdicts.json as `lrn chapter` wrote it, each finding of a study the chapter claims."""
        path = self.path / VERDICTS
        if not path.is_file():
            raise UserError(f"{self.path} holds a chapter that has not finished: run the same `lrn chapter` command "
                            "again to finish it; it writes the page itself")
        found = read_json_object(path, "chapter verdicts", own=True).get("verdicts")
        try:
            if not isinstance(found, list) or not all(Finding.from_dict(v).study in CLAIMS for v in found):
                raise ValueError("not a list of findings")
        except (KeyError, TypeError, ValueError, AttributeError):
            raise damaged(path, "chapter verdicts", "not the findings lrn writes") from None
        return found

    def write_page(self, html: str, page: Path | None = None) -> Path:
        return write_owned_file(page or self.path / PAGE, html, "report")
