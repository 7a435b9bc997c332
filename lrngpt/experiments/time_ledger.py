"""A budgeted sweep's actual times (DIR/timing.jsonl, one JSON object a line, appended; each row with
the "invocation" that wrote it) and the plan corrected by them: `pace` is measured over estimated
seconds of the points trained so far, `corrected` scales the rest by it. A row whose times are no
times (NaN, negative, past MAX_RECORD_S) is named with the fix (`read_rows`).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import psutil

from lrngpt.core.fsio import json_safe, user_path
from lrngpt.core.ownership import record_existing
from lrngpt.core.validate import show_value
from lrngpt.errors import UserError
from lrngpt.training.timing import clock

COMMAND_START_S = 300.0  # a process older than this when its sweep begins is a notebook's, not a command's


def invocation_seconds() -> float:
    """Seconds since this process started (psutil) for a command; 0 in a long-lived one (a notebook) or
    where the start cannot be read."""
    try:
        age = time.time() - psutil.Process().create_time()
    except psutil.Error:
        return 0.0
    return age if 0 <= age < COMMAND_START_S else 0.0


MAX_RECORD_S = 366 * 86400.0  # no run of a sweep times itself past a year (train.max_days refuses far less)


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def points_run(rows: list[dict]) -> dict[str, dict]:
    """The last record of each point trained (a point trained again, after a kill, counts once)."""
    return {r["name"]: r for r in rows if r.get("event") == "point" and isinstance(r.get("name"), str)}


def pace(rows: list[dict]) -> float | None:
    """Measured / estimated seconds over the points trained so far (None before the first)."""
    done = [r for r in points_run(rows).values() if _num(r.get("seconds")) and _num(r.get("estimate"))]
    if not done:
        return None
    return sum(r["seconds"] for r in done) / sum(r["estimate"] for r in done)


def corrected(point_seconds: dict, rows: list[dict]) -> dict[str, float]:
    """The plan's seconds per point: measured for the points trained, the estimate x the pace for the rest."""
    p, done = pace(rows), points_run(rows)
    return {name: round(done[name]["seconds"] if name in done else est * (p or 1.0), 1)
            for name, est in point_seconds.items()}


def invocation_id() -> str:
    """This invocation's mark on its rows, from its start (a killed invocation's runs still count: `account`)."""
    return f"{os.getpid()}@{time.time() - invocation_seconds():.0f}"


def account(budget: dict, rows: list[dict]) -> dict:
    """The plan against the record: estimated and actual seconds, the pace, the points measured."""
    timed = [(str(r.get("invocation", f"row {i}")), r) for i, r in enumerate(rows) if _num(r.get("seconds"))]
    ran = {inv for inv, r in timed if r.get("event") == "run"}  # its run row holds its points' seconds
    counted = [(inv, r) for inv, r in timed if r.get("event") in ("run", "summary")
               or (r.get("event") == "point" and inv not in ran)]  # (a killed invocation: its points' rows)
    runs = {inv for inv, r in counted if r["event"] != "summary"}
    done, p = points_run(rows), pace(rows)
    return {"minutes": budget.get("minutes"), "estimate_s": budget.get("est_seconds"),
            "actual_s": round(sum(r["seconds"] for _, r in counted), 1) if runs else None, "invocations": len(runs),
            "points_measured": len(done), "points_planned": len(budget.get("point_seconds") or {}),
            "pace": None if p is None else round(p, 3)}


def account_text(a: dict) -> str:
    est = "-" if not _num(a["estimate_s"]) else clock(a["estimate_s"])
    if a["actual_s"] is None:
        return f"budget {a['minutes']:g} min: planned {est}; no invocation has finished yet"
    runs = f" over {a['invocations']} invocations" if a["invocations"] > 1 else ""
    pace_text = "" if a["pace"] is None else f"; the runs took {a['pace']:.2f}x their estimates"
    return (f"budget {a['minutes']:g} min: planned {est}, took {clock(a['actual_s'])}{runs} "
            f"({a['points_measured']} of {a['points_planned']} runs trained{pace_text})")


def _num(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def append_row(path: Path, row: dict, what: str, record_name: str) -> None:
    """One line of an appended timing record, then recorded as lrn's."""
    with user_path(path, what), open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(json_safe(row)) + "\n")
    record_existing(path, record_name, append=True)


def read_rows(path: Path, what: str, damaged: str, fix: str, required: str | None = None) -> list[dict]:
    """The rows of an appended timing record ([] without one); a damaged line is named with the fix, a
    last line cut by a kill dropped."""
    if not path.is_file():
        return []
    with user_path(path, what):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    rows = []
    for i, line in enumerate(lines, 1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            row = None
        if not isinstance(row, dict) or (required is not None and not isinstance(row.get(required), str)):
            if i == len(lines):
                break
            raise UserError(f"{what} {path}, line {i}, {damaged}: delete the line ({fix})")
        for key in ("seconds", "estimate"):  # times that are no times (NaN, negative, past MAX_RECORD_S)
            if (v := row.get(key)) is not None and not (_num(v) and 0 <= v <= MAX_RECORD_S):
                raise UserError(f"{what} {path}, line {i}, has {key} {show_value(v)}, which is not a time a run takes "
                                f"(0 to {MAX_RECORD_S:.0f} seconds); it is damaged: delete the line ({fix})")
        rows.append(row)
    return rows
