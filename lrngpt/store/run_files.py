"""What summary.json (`check_summary`) and each metrics.jsonl row (`check_metric`) must hold, checked as
RunDir reads them: anything else is a UserError naming the file, line or field and how to recover."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lrngpt.core import log
from lrngpt.core.fsio import read_regular
from lrngpt.errors import UserError

# What readers rely on in summary.json: field -> (types, required). Numbers may be null (NaN).
_NUMBER = (int, float, type(None))
SUMMARY_FIELDS = {
    "step": ((int,), True), "finished": ((bool,), True), "val_bpb": (_NUMBER, True),
    "params": ((dict,), True), "seconds": ((int, float), True),
    "train_bpb": (_NUMBER, False), "gap": (_NUMBER, False), "val_loss": (_NUMBER, False),
    "passes": (_NUMBER, False), "best_val_bpb": (_NUMBER, False), "best_step": ((int, type(None)), False),
    "val_tokens": ((int,), False), "val_bytes": ((int,), False), "train_tokens": ((int,), False),
    "tokens_seen": ((int,), False), "corpus": ((str,), False), "device": ((str,), False),
    # what the run computed in (lrngpt.device.precision)
    "device_name": ((str,), False), "capability": ((list, type(None)), False), "dtype": ((str,), False),
    "tf32": ((bool,), False), "compile": ((bool,), False),
    # the train bpb split by what training read (absent when train.train_eval_tokens is 0), the validation split's kind
    "train_bpb_read": (_NUMBER, False), "train_bpb_unread": (_NUMBER, False), "read_share": (_NUMBER, False),
    "read_twice_share": (_NUMBER, False), "val_split": ((str, type(None)), False),
}
# What by_reads.json (`lrn eval --by-reads`) must hold for `lrn report`
BY_READS_FIELDS = {"step": ((int,), True), **{k: (_NUMBER, False) for k in ("train_bpb_read", "train_bpb_unread",
                                                                           "read_share")}}
# Per-row numbers of metrics.jsonl (other keys are kept as they are), and what a row must hold
METRIC_NUMBERS = ("loss", "train_bpb", "lr", "tokens_per_s", "val_bpb", "val_loss")
METRIC_FIELDS = {"step": ((int,), True), "final": ((bool,), False), **{k: (_NUMBER, False) for k in METRIC_NUMBERS}}


def _kind(v: Any) -> str:
    return "null" if v is None else {bool: "a boolean", str: "a string", list: "a list", dict: "an object"}.get(
        type(v), "a number" if isinstance(v, int | float) else type(v).__name__)


def check_fields(doc: dict, fields: dict, where: str, fix: str) -> dict:
    """`doc`'s fields checked against `fields` (name -> (types, required)), an absent one read as null,
    NaN too; a UserError says `where`, the field and `fix`."""
    doc = dict(doc)
    for key, (kinds, required) in fields.items():
        if key not in doc:
            if required:
                raise UserError(f"{where} has no {key!r}; {fix}")
            doc[key] = None
            continue
        v = doc[key]
        ok = isinstance(v, kinds) and not (isinstance(v, bool) and bool not in kinds)
        if not ok or (key in ("step", "seconds") and v < 0):
            raise UserError(f"{where}: {key} is {_kind(v)} ({json.dumps(v)[:40]}), not what lrn writes; {fix}")
        if isinstance(v, float) and v != v:
            doc[key] = None
    return doc


def check_summary(doc: dict, path: Path) -> dict:
    """summary.json's fields checked (and NaN read as null); a UserError names the file and the field."""
    fix = f"it is damaged: {_evaluate_again(path)}"
    doc = check_fields(doc, SUMMARY_FIELDS, f"run summary {path}", fix)
    params = doc["params"]
    if not isinstance(params.get("total"), int) or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in params.values()):
        raise UserError(f"run summary {path}: params must map names to parameter counts with a 'total'; {fix}")
    return doc


def _evaluate_again(path: Path) -> str:
    return (f"move it away and run `lrn train --out {Path(path).parent} --resume` (a sweep's point: the same "
            "`lrn sweep` command), which evaluates the run again")


def check_metric(row: Any, where: str) -> dict:
    """One metrics.jsonl row: an object with an integer step and numbers (null or NaN: no value, dropped)."""
    if not isinstance(row, dict):
        raise UserError(f"{where} is {_kind(row)}, not an object like {{\"step\": 10, \"loss\": 2.5}}; "
                        "delete the line")
    checked = check_fields(row, METRIC_FIELDS, where, "delete the line")
    return {k: v for k, v in checked.items() if k in row and not (k in METRIC_NUMBERS and v is None)}


# ---- readings of one run -------------------------------------------------------------------

def periodic_evals(metrics: list[dict]) -> dict[int, float]:
    """step -> val bpb of the periodic evaluations, step 0 (the untrained model) included; a step
    that a resumed run repeated keeps its last value."""
    return {m["step"]: m["val_bpb"] for m in metrics
            if isinstance(m.get("val_bpb"), int | float) and not m.get("final") and isinstance(m.get("step"), int)}


def best_periodic_val(metrics: list[dict]) -> tuple[float | None, int | None]:
    """Lowest periodic val bpb after step 0 and its step (the earliest, on a tie)."""
    by_step = {s: v for s, v in periodic_evals(metrics).items() if s > 0}
    if not by_step:
        return None, None
    step = min(by_step, key=lambda s: (by_step[s], s))
    return by_step[step], step


def run_passes(summary: dict) -> float | None:
    """Passes over the training text, as summary.json says them (None: it has none, shown as "-")."""
    return float(summary["passes"]) if isinstance(summary.get("passes"), int | float) else None


def read_metrics_file(path: Path) -> list[dict]:
    """The rows of a metrics.jsonl, checked ([] when there is none); a last line that is not JSON (cut by
    a kill mid-write) is skipped, with a warning."""
    if not path.exists():
        return []
    lines = read_regular(path, "metrics file").decode("utf-8", errors="replace").splitlines()
    rows = []
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            if i == last:  # a line cut by a kill mid-write (or garbage): skipped, and said once
                log.warning_once(f"metrics file {path}, line {i + 1} (the last), is not JSON (cut short by a kill "
                           "mid-write?); it is skipped")
                continue
            raise UserError(f"metrics file {path}, line {i + 1}, is not JSON; delete the line") from None
        rows.append(check_metric(row, f"metrics file {path}, line {i + 1}"))
    return rows

