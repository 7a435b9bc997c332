"""What lrn may replace: one ownership rule, called by every command that writes.

lrn replaces or removes only what it wrote, and it knows what it wrote by its record
(lrngpt.core.record): `.lrn-output` in each directory it writes into names every file it wrote
there with its sha256. Never by a mark inside the content, which a file of yours can carry too.

- a file is lrn's while the record names it and its content still has the recorded hash; a file
  changed since is yours, with or without --force, and a refusal says which of the two it found;
- a run directory also carries `.lrn-run` (lrngpt.store.rundir), a sweep its sweep.json; a
  directory lrn fills whole (an export, prepared data) has a `kind` in its record (a Hugging Face
  export keeps it as `.cache/huggingface/lrn-output`, which huggingface_hub never uploads);
- the record needs no key and travels with the directory: a run, a sweep or an export copied to
  another machine or another user's home is lrn's there exactly as it was here.

`--force` replaces only lrn's own unchanged output and removes only the files the record names.
A refusal names what it found; it suggests `--force` only where `--force` would replace nothing
but lrn's own output. A directory is built beside its target and swapped in whole
(lrngpt.core.fsio.atomic_dir), a file is replaced in one rename, after its record entry.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from lrngpt.core.fsio import (
    Replace,
    atomic_dir,
    atomic_open,
    check_output,
    replace_file,
    special_kind,
    temp_name,
    user_path,
    writing,
)
from lrngpt.core.record import (
    CHANGED,
    HUB_RECORD,
    NEW,
    OTHER,
    OURS,
    OWN_NAMES,
    RECORD,
    UNRECORDED,
    check_record_slot,
    enter,
    forget,
    hub_cache_is_ours,
    locked,
    manifest,
    read_record,
    record_problem,
    sha256_file,
    state,
    write_record,
)
from lrngpt.errors import UserError, option

RUN_MARKER = ".lrn-run"  # what makes a directory a run (lrngpt.store.rundir owns its layout)
SWEEP_FILE, SWEEP_RUNS = "sweep.json", "runs"  # a sweep directory: its definition, its runs (SweepDir owns its layout)
KIND_NAMES = {"run": "run", "sweep": "sweep", "chapter": "chapter study", "hf-export": "Hugging Face export", "embed-export": "embedding export",
              "prepared data": "prepared data"}
_MASS = ("prepared data",)  # said without an article


def _a(what: str) -> str:
    return what if what in _MASS else f"{'an' if what[:1] in 'aeiou' else 'a'} {what}"


def held(kind: str) -> str:
    """'an lrn run', 'an lrn Hugging Face export', "lrn's prepared data": what a directory holds."""
    name = kind_name(kind)
    return f"lrn's {name}" if name in _MASS else f"an lrn {name}"


def _names(n: list[str], most: int = 3) -> str:
    return ", ".join(n[:most]) + (", ..." if len(n) > most else "")


def is_run(d: str | Path) -> bool:
    """Whether lrn wrote `d` as a run, the one answer every command uses: it carries the run marker
    (a config.json alone is not a run: a Hugging Face model directory has one too)."""
    return (Path(d) / RUN_MARKER).is_file()


def lrn_kind(d: Path) -> str | None:
    """What lrn output a directory is: 'run' (`is_run`), 'sweep', the kind its record gives it, or None."""
    d = Path(d)
    if is_run(d):
        return "run"
    if (d / SWEEP_FILE).is_file() and ((d / SWEEP_RUNS).is_dir() or set(entries(d)) <= {SWEEP_FILE, SWEEP_RUNS}):
        return "sweep"
    return read_record(d)["kind"]


def kind_name(kind: str) -> str:
    return KIND_NAMES.get(kind, kind)


def entries(d: Path) -> list[str]:
    """The names in `d` that count (not the record, not a writer's temporary file)."""
    with user_path(d, option('out')), contextlib.suppress(FileNotFoundError, NotADirectoryError):
        names = [q.name for q in Path(d).iterdir() if ".tmp-" not in q.name and q.name not in OWN_NAMES]
        return sorted(n for n in names if not (n == HUB_RECORD[0] and hub_cache_is_ours(d)))
    return []


# ---- why a file is not lrn's ----------------------------------------------------------------

def not_lrns(path: Path, found: str, flag: str = "", fix: str = "", force: bool = False) -> str:
    """The refusal for a file that is not lrn's to replace: what was found, and (where the command has
    a --force: `force`) that --force does not help."""
    where = f"{flag} {path}" if flag else str(path)
    problem = record_problem(path.parent) if found == UNRECORDED else None
    why = {CHANGED: "was changed since lrn wrote it, so it is yours now",
           UNRECORDED: f"exists and lrn did not write it (its record, {RECORD}, does not name it: your file)"
                       if not problem else
                       f"exists and lrn does not know it as its own: the record {problem}, so it names no file",
           OTHER: f"exists and is {special_kind(path) or 'a link or a directory'}, not a file lrn wrote"}[found]
    fix = fix or (f"choose another {flag}, or move the file away yourself" if flag else "move the file away yourself")
    return f"{where} {why}; lrn never replaces it{', with or without --force' if force else ''}: {fix}"


def _enclosing_output(path: Path) -> tuple[Path, str] | None:
    """The lrn directory output (run, sweep, export) that `path` lies in, if any."""
    for d in path.parents:
        kind = lrn_kind(d) if d.is_dir() else None
        if kind:
            return d, kind
    return None


def check_file_target(path: str | Path, force: bool, what: str, replace_own: bool = False, flag: str = option('out'),
                      example: str = "out.txt", inside: Callable[[Path, str], bool] | None = None) -> Path:
    """Refuse, before any work, to write `path` unless it is new or lrn's unchanged earlier output.

    `what` names the output ("report", "stories corpus"); `replace_own`: an earlier output of lrn is
    replaced as the command runs again, which then has no --force (a page is rewritten as a run goes
    on). A file inside a run, a sweep or an export is refused unless `inside(dir, kind)` allows it (a
    report beside a run)."""
    path = check_output(path, "file", flag=flag, example=example)
    if path.parent.is_dir():
        check_record_slot(path.parent)
    enclosing = _enclosing_output(path)
    if enclosing and not (inside and inside(*enclosing)):
        d, kind = enclosing
        raise UserError(f"{flag} {path} lies inside the lrn {kind_name(kind)} in {d}, whose files are its own; "
                        f"choose a path outside it")
    with user_path(path, flag):
        found, _ = state(path)
    if found == NEW:
        return path
    wrote = read_record(path.parent)["what"].get(path.name)
    if enclosing and not (wrote == what and found in (OURS, CHANGED)):
        raise UserError(f"{flag} {path} is one of the files of the lrn {kind_name(enclosing[1])} in {enclosing[0]} "
                        f"(or one lrn has no record of writing there); lrn never replaces it with {_a(what)}"
                        f"{'' if replace_own else ', with or without --force'}: choose another {flag}")
    if found == OURS and wrote not in (None, what):
        raise UserError(f"{flag} {path} holds {_a(wrote)} that lrn wrote; lrn never replaces it with {_a(what)}: "
                        f"choose another {flag}")
    if found != OURS:
        raise UserError(not_lrns(path, found, flag, force=not replace_own))
    if not (force or replace_own):
        raise UserError(f"{flag} {path} holds an earlier {what} that lrn wrote; add {option('force', True)} to replace it, "
                        f"or choose another {flag}")
    return path


def beside_runs(d: Path, kind: str) -> bool:
    """For check_file_target's `inside`: a page may sit in a run, a sweep or a chapter directory (not an export)."""
    return kind in ("run", "sweep", "chapter")


# ---- writing files --------------------------------------------------------------------------

def recorded(what: str, strict: bool = True, append: bool = False) -> Replace:
    """A `replace` for lrngpt.core.fsio.atomic_open: under the directory's lock, refuse a file that is
    not lrn's (when `strict`), record the new content as lrn's, then rename it into place.

    A run's own files (`strict=False`) are the run writer's: recorded, never refused mid-run."""
    def replace(tmp: Path, path: Path, digest: str | None = None) -> None:  # digest: hashed as it was written
        digest, st = digest or sha256_file(tmp), os.lstat(tmp)
        with locked(path.parent):
            rec = read_record(path.parent)
            found, before = state(path, rec)
            if strict and found not in (NEW, OURS):
                raise UserError(not_lrns(path, found, fix="move it away, then run the command again"))
            enter(rec, path.name, digest, st, what, before if found == OURS else None, append)
            write_record(path.parent, rec)
            replace_file(tmp, path)
    return replace


@contextlib.contextmanager
def owned_file(path: str | Path, what: str, mode: str = "wb", encoding: str | None = None) -> Iterator[IO[Any]]:
    """Write `path` (checked with check_file_target first) and record it as lrn's in the same step."""
    with atomic_open(Path(path), mode, encoding=encoding, replace=recorded(what)) as f:
        yield f


def write_owned_file(path: str | Path, data: str | bytes, what: str) -> Path:
    with owned_file(path, what) as f:
        # a path that is not UTF-8 (a run named with byte 0xff) reaches a page as a lone surrogate: written
        # as \udcff, so the page stays UTF-8 and names it
        f.write(data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data)
    return Path(path)


def write_owned_files(d: str | Path, files: dict[str, bytes], what: str, fix: str = "") -> list[Path]:
    """Write several files into `d` at once (a sweep's summary): every target checked first, then all
    recorded and renamed under one lock; a refusal leaves every file as it was."""
    d = Path(d)
    with user_path(d, "output directory"):
        d.mkdir(parents=True, exist_ok=True)
    temps: dict[str, Path] = {}
    try:
        with writing(d), locked(d):
            rec = read_record(d)
            before = {}
            for name in files:
                found, before[name] = state(d / name, rec)
                if found not in (NEW, OURS):
                    raise UserError(not_lrns(d / name, found, fix=fix))
            for name, data in files.items():
                temps[name] = tmp = temp_name(d / name)
                with open(tmp, "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
                enter(rec, name, hashlib.sha256(data).hexdigest(), os.lstat(tmp), what, before[name])
            write_record(d, rec)
            for name, tmp in temps.items():
                replace_file(tmp, d / name)
    finally:
        for tmp in temps.values():
            with contextlib.suppress(OSError):
                tmp.unlink()
    return [d / name for name in files]


def record_existing(path: Path, what: str, append: bool = False) -> None:
    """Record `path` as it is now as lrn's (a file lrn appended to: metrics.jsonl)."""
    if not path.is_file():
        return
    with locked(path.parent):
        rec = read_record(path.parent)
        enter(rec, path.name, sha256_file(path), os.lstat(path), what, None, append)
        write_record(path.parent, rec)


def expect_append(path: Path, what: str) -> None:
    """Record that lrn appends to `path` from its first byte (a run's metrics.jsonl, before its first row)."""
    with locked(path.parent):
        rec = read_record(path.parent)
        rec["files"][path.name] = hashlib.sha256(b"").hexdigest()
        rec["append"][path.name], rec["what"][path.name] = 0, what
        rec["stat"].pop(path.name, None)
        rec["earlier"].pop(path.name, None)
        write_record(path.parent, rec)


def remove_owned(d: Path, names) -> None:
    """Remove the named files (checked as lrn's by the caller) and their entries."""
    with locked(d):
        rec = read_record(d)
        for name in names:
            with contextlib.suppress(FileNotFoundError):
                (d / name).unlink()
        forget(rec, names)
        if rec["exists"]:
            write_record(d, rec)


# ---- directories lrn fills whole ------------------------------------------------------------

def read_manifest(d: Path) -> dict | None:
    """The record of a directory lrn filled whole (it has a kind), else None."""
    rec = read_record(d)
    return rec if rec["kind"] else None


def classify(d: Path, names: list[str]) -> dict[str, list[str]]:
    """The names in `d` by what they are: OURS, CHANGED, UNRECORDED (a directory or link: UNRECORDED)."""
    rec = read_record(d)
    out: dict[str, list[str]] = {OURS: [], CHANGED: [], UNRECORDED: []}
    for n in names:
        try:
            found, _ = state(d / n, rec)
        except OSError:
            found = UNRECORDED
        out[found if found in out else UNRECORDED].append(n)
    return out


def describe_dir(d: Path, names: list[str] | None = None) -> str:
    """What a directory holds, for a refusal: 'an lrn run', 'files lrn did not write (a, b)', ..."""
    kind = lrn_kind(d)
    if kind:
        return held(kind)
    c = classify(d, entries(d) if names is None else names)
    parts = [f"files lrn did not write ({_names(c[UNRECORDED])})"] if c[UNRECORDED] else []
    parts += [f"files lrn wrote that were changed since ({_names(c[CHANGED])})"] if c[CHANGED] else []
    parts += [f"other output of lrn ({_names(c[OURS])})"] if c[OURS] else []
    return " and ".join(parts) or "nothing"


def foreign_in(d: Path, kind: str) -> list[str]:
    """The entries of `d` that are not lrn's `kind` output, unchanged: every name when the directory's
    record is not of that kind."""
    names = entries(d)
    if read_record(d)["kind"] != kind:
        return names
    c = classify(d, names)
    return c[CHANGED] + c[UNRECORDED]


def check_dir_target(out: str | Path, force: bool, what: str, kind: str, flag: str = option('out'),
                     replace_own: bool = False) -> Path:
    """Refuse, before any work, to fill `out` unless it is new, empty, or an earlier `kind` output
    of lrn that nobody changed (and then only with --force, or always with `replace_own`)."""
    out = check_output(out, "dir", flag=flag)
    if out.is_dir():
        check_record_slot(out)
    if not out.is_dir() or not entries(out):
        return out
    found = lrn_kind(out)
    if found and found != kind:
        raise UserError(f"{flag} {out} holds {held(found)}; lrn never writes {_a(what)} into it: "
                        f"choose a new or empty {flag}")
    foreign = foreign_in(out, kind)
    if foreign:
        if found == kind:
            changed = classify(out, foreign)
            why = (f"files that are not part of the earlier {what} ({_names(changed[UNRECORDED])})"
                   if changed[UNRECORDED] else f"files of the earlier {what} that were changed since lrn wrote it "
                                                f"({_names(changed[CHANGED])})")
        else:
            why = describe_dir(out)
            if record_problem(out):
                why += f" (the record {record_problem(out)}, so it names no file)"
        raise UserError(f"{flag} {out} holds {why}; lrn replaces only its own unchanged output"
                        f"{'' if replace_own else ', with or without --force'}: choose a new or empty {flag}")
    if not (force or replace_own):
        raise UserError(f"{flag} {out} holds an earlier {what} that lrn wrote; add {option('force', True)} to replace it, "
                        f"or choose another {flag}")
    return out


@dataclass(frozen=True)
class Target:
    """One kind of output a command writes, with the words its refusals use: a directory whose
    record says `kind` (check_dir_target) or, with kind None, one file (check_file_target)."""

    what: str
    kind: str | None = None
    replace_own: bool = False
    example: str = "out.txt"  # a file's example name, said when a directory is given
    inside: Callable[[Path, str], bool] | None = None  # a file's: which lrn outputs it may sit in


def check_target(out: str | Path, force: bool, target: Target) -> Path:
    """check_dir_target or check_file_target with the target's words: a command calls it before any
    work and again just before writing (the path may have changed meanwhile), the same both times."""
    if target.kind is None:
        return check_file_target(out, force, target.what, replace_own=target.replace_own, example=target.example,
                                 inside=target.inside)
    return check_dir_target(out, force, target.what, target.kind, replace_own=target.replace_own)


@contextlib.contextmanager
def owned_dir(out: str | Path, kind: str) -> Iterator[Path]:
    """A temporary directory to fill; when the block ends it gets its record and replaces `out`
    in one step (check_dir_target first). A kill leaves `out` exactly as it was or exactly new."""
    with atomic_dir(out) as tmp:
        yield tmp
        manifest(tmp, kind, kind_name(kind))


def write_manifest(d: Path, kind: str) -> None:
    manifest(d, kind, kind_name(kind))
