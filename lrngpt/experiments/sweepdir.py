"""A sweep directory and its one owner, `SweepDir`: sweep.json (the definition, written once by the
first shard, checked field by field, its version honoured), runs/<name>/ (one run directory a point),
lines.txt, summary.md|csv|json, figures/*.png and a budget's timing.jsonl.

The summary files are rewritten whenever the sweep runs, and only while they are as lrn wrote them:
a lines.txt you edited is kept (--summary-only refuses instead).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from lrngpt.core import log as logging
from lrngpt.core.fsio import check_output, create_exclusive, json_safe, read_json, read_json_object, user_path
from lrngpt.core.once import parsed
from lrngpt.core.ownership import (
    NEW,
    OURS,
    SWEEP_FILE,
    SWEEP_RUNS,
    describe_dir,
    entries,
    not_lrns,
    record_existing,
    state,
    write_owned_files,
)
from lrngpt.errors import UserError, option
from lrngpt.experiments.presets import SCALES
from lrngpt.experiments.time_ledger import append_row, read_rows
from lrngpt.runconfig.schema import from_dict
from lrngpt.store.layout import CONFIG
from lrngpt.store.rundir import RunDir

VERSION = 1  # the sweep.json format this lrn writes and reads
DEFINITION, RUNS, LINES, FIGURES_DIR, TIMING = SWEEP_FILE, SWEEP_RUNS, "lines.txt", "figures", "timing.jsonl"
SUMMARIES = {"md": "summary.md", "csv": "summary.csv", "json": "summary.json"}
FIGURE_NAMES = ("val_bpb_by_width", "train_vs_val", "val_bpb_by_shape", "val_bpb_by_step")  # figures.PLOTS draws them
SUMMARY_FILE, FIGURE_FILE, TIMING_FILE = "sweep summary", "sweep figure", "timing record"  # what the record calls them
MAX_LINES_BYTES = 1 << 20  # lines.txt shown on a page: a line a run, so about ten thousand runs


class SweepDir:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.definition_path, self.timing_path = self.path / DEFINITION, self.path / TIMING

    def run_path(self, name: str) -> Path:
        return self.path / RUNS / str(name)

    def run(self, name: str) -> RunDir:
        """The run directory of one point."""
        return RunDir(self.run_path(name))

    def runs_on_disk(self) -> list[str]:
        """Names of the run directories under runs/, whatever sweep.json says."""
        runs = self.path / RUNS
        return sorted(r.name for r in runs.glob("*") if r.is_dir()) if runs.is_dir() else []

    def summary_path(self, kind: str) -> Path:
        return self.path / SUMMARIES[kind]

    @property
    def figures_dir(self) -> Path:
        return self.path / FIGURES_DIR

    def holds_sweep(self) -> bool:
        return self.definition_path.is_file()

    def definition(self, partial: bool = False) -> dict:
        """sweep.json, checked field by field; `partial`: fields may be missing, points bare names."""
        path = self.definition_path
        if not path.exists() and not path.is_symlink():
            raise UserError(f"{self.path} holds no sweep (no {DEFINITION}); run `lrn sweep PRESET --out {self.path}`")
        return parsed(path, "sweep definition" + " (partial)" * partial,
                      lambda p: check_definition(read_json_object(p, "sweep definition"), p, partial))

    def known(self) -> dict:
        """sweep.json as far as it reads ({}: no sweep, or a damaged definition)."""
        try:
            return self.definition(partial=True)
        except UserError:
            return {}

    def name(self) -> str:
        return self.known().get("name") or self.path.resolve().name  # (known() checked it is a string)

    def create_or_check(self, definition: dict) -> None:
        """Create sweep.json (exactly one of shards started together does), or check it is this sweep."""
        out = check_output(self.path, "dir")
        if not self.definition_path.exists():
            if entries(out):
                raise UserError(f"{out} holds no sweep (no {DEFINITION}) but {describe_dir(out)}; a sweep goes into "
                                f"a new or empty directory: choose another {option('out')}")
            with user_path(out, option('out')):
                out.mkdir(parents=True, exist_ok=True)
            if create_exclusive(self.definition_path, json.dumps(definition, indent=2) + "\n"):
                record_existing(self.definition_path, "sweep definition")
        old = self.definition()
        if same_sweep(old, definition):
            return
        was, now = old.get("budget") or {}, definition.get("budget") or {}  # never "delete it": its finished runs
        if was and now and was.get("minutes") == now.get("minutes") and old.get("source") == definition.get("source"):
            raise UserError(f"{self.path} holds the plan another `lrn sweep {old.get('source')} --minutes "
                            f"{now['minutes']:g}` made a moment earlier (each start times this machine, so two starts "
                            "at once plan slightly differently); run the same command again: it resumes that plan, "
                            "leaving the points another process is training to it")
        raise UserError(f"{self.path} holds a different sweep ({old.get('name')}, scale {old.get('scale')}); to "
                        f"continue it, run the command it was started with (its settings are in "
                        f"{self.path / DEFINITION}); for this one, choose another --out")

    def point_state(self, name: str, steps: int) -> str:
        """finished, partial (a checkpoint to resume) or new; reads and checks the point's files."""
        run = self.run(name)
        if run.holds_run() and (run / CONFIG).exists():  # (a config.json alone is no run: starting it is refused)
            run.config()
        run.metrics()
        s = run.summary()
        if s and s.get("finished") and s.get("step") == steps:
            return "finished"
        # (a point stopped before its first periodic checkpoint resumes from its step-0 one, trackers and all)
        return "partial" if any(run.checkpoint_path(w).is_file() for w in ("last", "init")) else "new"

    def append_timing(self, row: dict) -> None:
        """One line of timing.jsonl (appended: shards that share the directory each add theirs)."""
        append_row(self.timing_path, row, "timing record", TIMING_FILE)

    def timing(self) -> list[dict]:
        """timing.jsonl's rows ([] without one): the one reader of the record (time_ledger.read_rows)."""
        return read_rows(self.timing_path, "timing record", "is not a JSON object; it is damaged",
                         "the file only records times")

    def lines_text(self, most: int = MAX_LINES_BYTES) -> str:
        """lines.txt as text, its first `most` bytes (a file grown huge must not make a page so)."""
        path = self.path / LINES
        if not path.is_file():  # (a FIFO or a device there is no lines.txt: never opened, never waited on)
            return ""
        with user_path(path, "run lines"), open(path, "rb") as f:
            data = f.read(most + 1)
            size = os.fstat(f.fileno()).st_size
        if len(data) <= most:
            return data.decode("utf-8", errors="replace")
        cut = data[:most].rsplit(b"\n", 1)[0] + b"\n"
        return (cut.decode("utf-8", errors="replace")
                + f"... ({size - len(cut):,} more bytes of {path} not shown)\n")

    def summary_rows(self, flag: str = "") -> list:
        """The rows of summary.json (or the file itself when a list); `flag` names the option in a refusal."""
        where = f"{flag} {self.path}" if flag else str(self.path)
        if self.path.exists() and not self.path.is_dir():
            raise UserError(f"{where} is a file; give the sweep directory (what `lrn sweep --out` wrote)")
        path = self.summary_path("json")
        if not path.exists():
            raise UserError(f"{where}: no {SUMMARIES['json']} there; run `lrn sweep ... --out {self.path}` first")
        doc = read_json(path, "sweep summary")
        rows = doc.get("rows", []) if isinstance(doc, dict) else doc
        return rows if isinstance(rows, list) else []

    def kept_summary_files(self, paths: list[Path] | None = None, strict: bool = False) -> dict[Path, str]:
        """The summary files (all, figures included, by default) not lrn's to replace (path -> the refusal);
        `strict`: refuse the first."""
        kept = {}
        every = [self.path / LINES, *(self.summary_path(k) for k in SUMMARIES),
                 *(self.figures_dir / f"{n}.png" for n in FIGURE_NAMES)]
        for path in every if paths is None else paths:
            found, _ = state(path)
            if found not in (NEW, OURS):
                kept[path] = not_lrns(path, found, fix=SUMMARY_FIX)
                if strict:
                    raise UserError(kept[path])
        return kept

    def write_summary(self, doc: dict, lines: list[str], markdown: str, csv: str,
                      figures: dict[str, bytes] | None = None, strict: bool = True) -> list[Path]:
        """The summary files and figures, each only where new or lrn's unchanged; `strict`: refuse if any is
        not, else write the others and return those kept."""
        files = {LINES: "".join(line + "\n" for line in lines).encode("utf-8"),  # strict JSON: a NaN bpb is null
                 SUMMARIES["md"]: markdown.encode("utf-8"), SUMMARIES["csv"]: csv.encode("utf-8"),
                 SUMMARIES["json"]: (json.dumps(json_safe(doc), indent=2, ensure_ascii=False) + "\n").encode("utf-8")}
        figures = figures or {}
        rendered = {**{self.path / n: b for n, b in files.items()}, **{self.figures_dir / n: b for n, b in figures.items()}}
        kept = self.kept_summary_files(list(rendered), strict)
        for d, group, what in ((self.figures_dir, figures, FIGURE_FILE), (self.path, files, SUMMARY_FILE)):
            mine = {n: b for n, b in group.items() if d / n not in kept}
            if mine:
                write_owned_files(d, mine, what, fix=SUMMARY_FIX)
                logging.debug(f"{what}: {', '.join(f'{d / n} ({len(b):,} bytes)' for n, b in mine.items())} written")
        return list(kept)


SUMMARY_FIX = ("keep it under another name (or move it away), then run the same `lrn sweep` command again: the summary "
               "is written afresh from the runs")


# How a run is executed, not what it computes: shards on different devices share one sweep.
# The precision is one of them: auto resolves per device (a resume refuses a change that breaks exactness).
RUNTIME_KEYS = ("device", "dtype", "tf32", "compile", "log_every", "save_every", "tensorboard", "logger")


def same_sweep(a: dict, b: dict) -> bool:
    """Two definitions of the same sweep: runtime settings aside, a key added since read as its default."""
    if a == b:
        return True
    a, b = (json.loads(json.dumps({k: d.get(k) for k in ("scale", "base", "axes")})) for d in (a, b))
    for d in (a, b):
        try:  # a key added to the config since the sweep began reads as its default, its old behaviour
            d["base"] = from_dict(d["base"]).to_dict()
        except (UserError, TypeError, AttributeError):
            pass  # a key that no longer exists: compared as written, so it differs
        for key in RUNTIME_KEYS:
            (d.get("base") or {}).get("train", {}).pop(key, None)
    return a == b


POINT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # a directory name under runs/, never a path


def check_definition(doc: dict, path: Path, partial: bool = False) -> dict:
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise UserError(f"sweep definition {path}: version must be a positive whole number, got "
                        f"{json.dumps(version)[:40]}; it is damaged: restore it, or run the sweep into a new {option('out')}")
    if version > VERSION:
        raise UserError(f"sweep definition {path} is format {version}, newer than this lrn reads ({VERSION}); "
                        "upgrade lrn (pip install -U lrngpt) to read it")

    def bad(field: str, want: str, value=None) -> UserError:
        value = doc.get(field) if value is None else value
        return UserError(f"sweep definition {path}: {field} must be {want}, got {json.dumps(value)[:60]}; "
                         f"it is damaged: restore it, or run the sweep into a new {option('out')}")

    fields = {  # scale: str first, as a dict or a list is not hashable and `in` would raise TypeError
        "scale": (lambda v: isinstance(v, str) and v in SCALES, f"one of {', '.join(SCALES)}"),
        "name": (lambda v: isinstance(v, str), "a string"),
        "base": (lambda v: isinstance(v, dict) and isinstance(v.get("data"), dict), "a config object with a data section"),
        "axes": (lambda v: isinstance(v, dict) and all(
            isinstance(k, str) and isinstance(vs, list) and all(
                _scalar(x) or ("+" in k and isinstance(x, list) and all(map(_scalar, x))) for x in vs)
            for k, vs in v.items()),
            "an object of key: [values] (numbers, strings or booleans; lists of them for linked keys a+b)"),
        **{k: (lambda v: isinstance(v, str | None), "a string or null") for k in ("source", "preset", "about")},
        "points": (lambda v: isinstance(v, list), "a list of {index, name, values, steps}")}
    for field, (valid, want) in fields.items():
        if (field in doc or not partial) and not valid(doc.get(field)):
            raise bad(field, want)
    for i, point in enumerate(doc.get("points") or []):
        # partial (a report): a name will do, a bare one too, and values when there are any
        p = {"name": point, "values": {}} if partial and isinstance(point, str) else point
        ok = isinstance(p, dict) and isinstance(p.get("name"), str) and POINT_NAME.fullmatch(p["name"]) and \
            _scalar_map(p.get("values", {} if partial else None)) and (partial or all(
                isinstance(p.get(k), int) and not isinstance(p.get(k), bool) for k in ("index", "steps")))
        if not ok:
            raise bad(f"points[{i}]", "an object with index, a name (letters, digits, . _ -), values and steps",
                      point)
    return doc


def _scalar(v) -> bool:
    return v is None or isinstance(v, str | int | float)  # (bool is an int)


def _scalar_map(v) -> bool:
    """A point's values: key -> number, string or boolean (what an axis holds)."""
    return isinstance(v, dict) and all(isinstance(k, str) and _scalar(x) for k, x in v.items())


