"""What lrn may replace (the rule: docs/explanation/ownership.md), and the record it is read from.

The record, `DIR/.lrn-output` (JSON, no key: it travels with the directory), is its one marker:

    kind      what lrn made the directory ("run", "chapter", "hf-export", "prepared data", ...), or null
    files     name -> the sha256 of what lrn wrote there last
    stat      name -> [size, mtime_ns, inode] as written: while they match, nothing is hashed again
    earlier   name -> the hashes before lrn's last replace (a kill between record and rename)
    append    name -> a size: lrn appends to the file (metrics.jsonl), its first SIZE bytes are hashed
    what      name -> what the file is ("report", "run file", ...)

A Hugging Face export keeps it as `.cache/huggingface/lrn-output`, which huggingface_hub never uploads.
Writers change the record and rename under a lock on the directory (filelock: `.lrn-output.lock`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat as stat_mod
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import filelock

from lrngpt.core.fsio import (
    Replace,
    atomic_dir,
    atomic_write,
    check_output,
    is_regular,
    replace_file,
    special_kind,
    user_path,
    writing,
)
from lrngpt.core.once import parsed
from lrngpt.core.version import __version__
from lrngpt.errors import UserError, option

RECORD, LOCK = ".lrn-output", ".lrn-output.lock"
OWN_NAMES = (RECORD, LOCK)  # the record's own files: never part of the directory's content
RUN_LOCK = ".lrn-lock"  # a run's one writer (lrngpt.store.layout.LOCK): no content either
HUB_RECORD = (".cache", "huggingface", "lrn-output")  # the record of a directory meant for the Hub
NEW, OURS, CHANGED, UNRECORDED, OTHER = "new", "ours", "changed", "unrecorded", "not a file"
_FIELDS = ("files", "stat", "earlier", "append", "what")
_DAMAGED = "is damaged (not the JSON lrn writes)"
SWEEP_FILE, SWEEP_RUNS = "sweep.json", "runs"  # a sweep directory: its definition, its runs (SweepDir's layout)
# a kind in words where its name is not (run, sweep, prepared data say themselves)
KIND_NAMES = {"chapter": "chapter study", "hf-export": "Hugging Face export", "embed-export": "embedding export"}


# ---- the record ---------------------------------------------------------------------------

def sha256_file(path: Path, limit: int | None = None) -> str:
    """The file's sha256 (of its first `limit` bytes when given: a file lrn appends to, rows of text)."""
    with open(path, "rb") as f:
        return (hashlib.file_digest(f, "sha256") if limit is None else hashlib.sha256(f.read(limit))).hexdigest()


def _record_paths(d: Path) -> tuple[Path, Path]:
    return Path(d) / RECORD, Path(d).joinpath(*HUB_RECORD)


def read_record(d: Path) -> dict:
    """The record of `d`, each field a dict; an empty one where there is none or it is damaged (then
    nothing in `d` is lrn's, the safe side: `problem` says why, 'DIR/.lrn-output is damaged ...')."""
    doc, problem = None, None
    for path in _record_paths(d):
        if os.path.lexists(path) and not is_regular(path):
            problem = f"{path} is not a file"  # a FIFO or a device named like the record: never opened
            continue
        try:  # (read once a command while it stays the same: a check asks of it several times)
            doc = parsed(path, "record", lambda p: json.loads(p.read_text(encoding="utf-8")))
        except FileNotFoundError:
            continue
        except (OSError, ValueError):
            doc, problem = None, f"{path} {_DAMAGED}"
        if doc is not None:
            doc, problem = (doc, None) if isinstance(doc, dict) else (None, f"{path} {_DAMAGED}")
            break
    doc = doc or {}
    out: dict[str, Any] = {f: doc[f] if isinstance(doc.get(f), dict) else {} for f in _FIELDS}
    out["kind"] = doc.get("kind") if isinstance(doc.get("kind"), str) else None
    out["files"] = {k: v for k, v in out["files"].items() if isinstance(v, str)}
    out["problem"] = problem
    return out


def check_record_slot(d: Path) -> None:
    """Refuse, before any work, a record name taken by what lrn cannot replace (a directory, a FIFO)."""
    for path in _record_paths(d):
        if os.path.lexists(path) and not is_regular(path):
            raise UserError(f"{path} is not a regular file, so not lrn's record; lrn keeps the record of what it "
                            f"writes in {Path(d)} under that name: move it away, then run the command again")


def write_record(d: Path, rec: dict) -> None:
    check_record_slot(d)
    path = _record_paths(d)[rec.get("kind") == "hf-export"]
    if path.name != RECORD:  # (as huggingface_hub does: `git add .` skips it too)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path.parent / ".gitignore", "*\n")
    doc = {"format": 4, "kind": rec.get("kind"), "lrn_version": __version__,
           "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **{f: rec.get(f) or {} for f in _FIELDS}}
    atomic_write(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")


def _hub_cache_is_ours(d: Path) -> bool:
    """DIR/.cache holds nothing but the Hub record and its .gitignore: lrn's, replaced with the rest."""
    cache = Path(d) / HUB_RECORD[0]
    with contextlib.suppress(OSError):
        ok = cache.is_dir() and not cache.is_symlink()
        found = {p.relative_to(cache).as_posix() for p in cache.rglob("*")} if ok else {"?"}
        return found <= {"huggingface", "huggingface/lrn-output", "huggingface/.gitignore"}
    return False


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def state(path: Path, rec: dict | None = None) -> tuple[str, str | None]:
    """(NEW | OURS | CHANGED | UNRECORDED | OTHER, the content's hash when known). OURS: named by the
    record with content lrn wrote; CHANGED: named, content changed; OTHER: a directory, link or FIFO."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return NEW, None
    if not stat_mod.S_ISREG(st.st_mode):
        return OTHER, None
    rec = read_record(path.parent) if rec is None else rec
    name, files = path.name, rec["files"]
    hashes = [files[name]] if name in files else []
    hashes += [h for h in rec["earlier"].get(name) or [] if isinstance(h, str)]
    if not hashes:
        return UNRECORDED, None
    if name in files and rec["stat"].get(name) == _stamp(st):
        return OURS, files[name]  # as written: unchanged, nothing hashed (a checkpoint is not read again)
    size = rec["append"].get(name)
    if isinstance(size, int) and name in files:
        h = sha256_file(path, size) if st.st_size >= size else None
        return (OURS if h == files[name] else CHANGED), h
    h = sha256_file(path)
    return (OURS if h in hashes else CHANGED), h


@contextlib.contextmanager
def locked(d: Path) -> Iterator[None]:
    """The directory's lock while its record is read, changed and files renamed."""
    with contextlib.ExitStack() as stack:
        with contextlib.suppress(OSError):  # a directory that cannot hold the lock cannot hold the record either:
            stack.enter_context(filelock.FileLock(Path(d) / LOCK))  # the write says the path
        yield


@contextlib.contextmanager
def _changing(d: Path) -> Iterator[dict]:
    """The record of `d`, locked, written back when the block ends."""
    with locked(d):
        rec = read_record(d)
        yield rec
        write_record(d, rec)


def _enter(rec: dict, name: str, digest: str, st: os.stat_result | None, what: str, before: str | None = None,
           append: bool = False) -> None:
    """lrn wrote content `digest` (stat `st`; None: none yet, a file lrn appends to from its first byte)
    as `name`, replacing content `before`."""
    rec["files"][name], rec["stat"][name], rec["what"][name] = digest, st and _stamp(st), what
    rec["earlier"][name] = [before] if before and before != digest else []
    rec["append"].pop(name, None)
    if append:
        rec["append"][name] = st.st_size if st else 0


# ---- what a directory is ------------------------------------------------------------------

def kind_name(kind: str) -> str:
    return KIND_NAMES.get(kind, kind)


def _names(n: list[str], most: int = 3) -> str:
    return ", ".join(n[:most]) + (", ..." if len(n) > most else "")


def is_run(d: str | Path) -> bool:
    """Whether lrn wrote `d` as a run: its record says so (a config.json alone is no run)."""
    return read_record(Path(d))["kind"] == "run"


def lrn_kind(d: Path) -> str | None:
    """What lrn output a directory is: 'sweep', the kind its record gives it ('run', ...), or None."""
    d = Path(d)
    if (d / SWEEP_FILE).is_file() and ((d / SWEEP_RUNS).is_dir() or set(entries(d)) <= {SWEEP_FILE, SWEEP_RUNS}):
        return "sweep"
    return read_record(d)["kind"]


def entries(d: Path) -> list[str]:
    """The names in `d` that count (not the record, not a writer's temporary file)."""
    with user_path(d, option('out')), contextlib.suppress(FileNotFoundError, NotADirectoryError):
        names = [q.name for q in Path(d).iterdir() if ".tmp-" not in q.name and q.name not in (*OWN_NAMES, RUN_LOCK)]
        return sorted(n for n in names if not (n == HUB_RECORD[0] and _hub_cache_is_ours(d)))
    return []


def describe_dir(d: Path, names: list[str] | None = None, kind: str | None = None) -> str:
    """What a directory holds, for a refusal: "lrn's run", "files lrn did not write (a, b)", ...; "" when
    it is lrn's `kind` output and every name in it is lrn's, unchanged."""
    found = lrn_kind(d)
    if found and found != kind:
        return f"lrn's {kind_name(found)}"
    rec = read_record(d)
    by: dict[str, list[str]] = {UNRECORDED: [], CHANGED: [], OURS: []}
    for n in entries(d) if names is None else names:
        try:
            was = state(d / n, rec)[0]
        except OSError:
            was = UNRECORDED
        by[was if was in by else UNRECORDED].append(n)  # (a directory or a link: not lrn's)
    words = {UNRECORDED: "files lrn did not write", CHANGED: "files that were changed since lrn wrote it",
             OURS: "other output of lrn"}
    why = " and ".join(f"{words[w]} ({_names(n)})" for w, n in by.items() if n and not (w == OURS and found))
    return why + (f" (the record {rec['problem']}, so it names no file)" if why and rec["problem"] else "")


# ---- the checks before any work -------------------------------------------------------------

def not_lrns(path: Path, found: str, flag: str = "", fix: str = "", force: bool = False) -> str:
    """The refusal for a file that is not lrn's to replace: what was found, and (`force`: the command
    has a --force) that --force does not help."""
    problem = read_record(path.parent)["problem"] if found == UNRECORDED else None
    why = {CHANGED: "was changed since lrn wrote it, so it is yours now",
           UNRECORDED: f"exists and lrn did not write it (its record, {RECORD}, does not name it: your file)"
                       if not problem else
                       f"exists and lrn does not know it as its own: the record {problem}, so it names no file",
           OTHER: f"exists and is {special_kind(path) or 'a link or a directory'}, not a file lrn wrote"}[found]
    fix = fix or (f"choose another {flag}, or move the file away yourself" if flag else "move the file away yourself")
    return (f"{flag + ' ' if flag else ''}{path} {why}; lrn never replaces it"
            f"{', with or without --force' if force else ''}: {fix}")


def _earlier(path: Path, what: str, force: bool, replace_own: bool) -> Path:
    """`path` holds lrn's earlier unchanged `what`: replaced with --force (always with `replace_own`)."""
    if not (force or replace_own):
        raise UserError(f"{option('out')} {path} holds an earlier {what} that lrn wrote; add {option('force', True)} "
                        f"to replace it, or choose another {option('out')}")
    return path


def check_file_target(path: str | Path, force: bool, what: str, replace_own: bool = False,
                      example: str = "out.txt") -> Path:
    """Refuse, before any work, to write `path` unless it is new or lrn's unchanged earlier `what`
    (with `force`; always with `replace_own`: a page, rewritten as a run goes on, which alone may sit
    in a run, sweep or chapter directory)."""
    flag = option('out')
    path = check_output(path, "file", example=example)
    check_record_slot(path.parent)  # (a parent not yet made holds no record: nothing to refuse)
    with user_path(path, flag):
        found = state(path)[0]
    wrote = read_record(path.parent)["what"].get(path.name)  # (used only where `found` is not NEW)
    d, kind = next(((d, k) for d in path.parents if d.is_dir() and (k := lrn_kind(d))), (None, None))
    if kind and not (replace_own and kind in ("run", "sweep", "chapter") and (found == NEW or wrote == what)):
        raise UserError(f"{flag} {path} lies inside the lrn {kind_name(kind)} in {d}, whose files are its own (only a "
                        "report or an explorer page goes beside them); choose a path outside it")
    if found == NEW:
        return path
    if found == OURS and wrote not in (None, what):
        raise UserError(f"{flag} {path} holds lrn's {wrote}; lrn never replaces it with its {what}: "
                        f"choose another {flag}")
    if found != OURS:
        raise UserError(not_lrns(path, found, flag, force=not replace_own))
    return _earlier(path, what, force, replace_own)


def check_dir_target(out: str | Path, force: bool, kind: str, replace_own: bool = False) -> Path:
    """Refuse, before any work, to fill `out` unless it is new, empty, or an earlier `kind` output
    of lrn that nobody changed (and then only with --force, or always with `replace_own`)."""
    out, what = check_output(out, "dir"), kind_name(kind)  # (no directory there: none yet)
    check_record_slot(out)
    names = entries(out)
    why = describe_dir(out, names, kind) if names else ""
    if why:
        raise UserError(f"{option('out')} {out} holds {why}; lrn replaces only its own unchanged {what}"
                        f"{'' if replace_own else ', with or without --force'}: choose a new or empty {option('out')}")
    return _earlier(out, what, force, replace_own) if names else out


# ---- writing ------------------------------------------------------------------------------

def _commit(d: Path, temps: dict[str, tuple[Path, str]], what: str, strict: bool = True, fix: str = "",
            append: bool = False) -> None:
    """Under `d`'s lock: refuse a target that is not lrn's (when `strict`), record each finished temporary
    file (name -> (path, sha256)) as lrn's, then rename each into place: a kill between the record and the
    rename leaves the old content still known as lrn's (`earlier`)."""
    with locked(d):
        rec = read_record(d)
        found = {name: state(d / name, rec) for name in temps}
        for name, (was, _) in found.items():
            if strict and was not in (NEW, OURS):
                raise UserError(not_lrns(d / name, was, fix=fix))
        for name, (tmp, digest) in temps.items():
            _enter(rec, name, digest, os.lstat(tmp), what, found[name][1] if found[name][0] == OURS else None, append)
        write_record(d, rec)
        for name, (tmp, _) in temps.items():
            replace_file(tmp, d / name)


def recorded(what: str, strict: bool = True, append: bool = False) -> Replace:
    """A `replace` for atomic_open that commits the file as lrn's (`strict`: refusing one that is not;
    a run's writer is never refused mid-run). `digest`: the content's hash, taken as it was written."""
    def replace(tmp: Path, path: Path, digest: str | None = None) -> None:
        _commit(path.parent, {path.name: (tmp, digest or sha256_file(tmp))}, what, strict,
                "move it away, then run the command again", append)
    return replace


def write_owned_file(path: str | Path, data: str | bytes, what: str) -> Path:
    """Write `path` (checked with check_file_target first) and record it as lrn's in the same step."""
    # (a name that is not UTF-8 reaches a page as \udcff: written escaped)
    return atomic_write(path, data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data,
                        recorded(what))


def write_owned_files(d: str | Path, files: dict[str, bytes], what: str, fix: str = "") -> list[Path]:
    """Write several files into `d` at once (a sweep's summary): every target checked first, then all
    recorded and renamed under one lock; a refusal leaves every file as it was."""
    d = Path(d)
    with user_path(d, "output directory"):
        d.mkdir(parents=True, exist_ok=True)
    temps: dict[str, tuple[Path, str]] = {}

    def finished(tmp: Path, path: Path) -> None:  # renamed only once every file is finished
        temps[path.name] = (tmp, hashlib.sha256(files[path.name]).hexdigest())
    try:
        for name, data in files.items():
            atomic_write(d / name, data, finished)
        with writing(d):
            _commit(d, temps, what, fix=fix)
    finally:
        for tmp, _ in temps.values():
            with contextlib.suppress(OSError):
                tmp.unlink()
    return [d / name for name in files]


def record_existing(path: Path, what: str, append: bool = False) -> None:
    """Record `path` as it is now as lrn's (a file lrn appended to: metrics.jsonl)."""
    if path.is_file():
        with _changing(path.parent) as rec:
            _enter(rec, path.name, sha256_file(path), os.lstat(path), what, None, append)


def mark(d: Path, kind: str | None, appended: str = "", what: str = "") -> None:
    """Make `d` lrn's `kind` output (None: no longer one); `appended`: a file lrn appends to from its
    first byte (a run's metrics.jsonl)."""
    with _changing(d) as rec:
        rec["kind"] = kind
        if appended:
            _enter(rec, appended, hashlib.sha256(b"").hexdigest(), None, what, append=True)


def remove_owned(d: Path, names) -> None:
    """Remove the named files (checked as lrn's by the caller) and their entries."""
    with _changing(d) as rec:
        for name in names:
            with contextlib.suppress(FileNotFoundError):
                (d / name).unlink()
            for field in _FIELDS:
                rec[field].pop(name, None)


def write_manifest(d: Path, kind: str) -> None:
    """The record of a directory lrn filled whole: every file in it, hashed. Written last."""
    rec: dict[str, Any] = {"kind": kind, **{f: {} for f in _FIELDS}}
    for q in sorted(Path(d).iterdir()):
        if q.is_file() and not q.is_symlink() and q.name not in OWN_NAMES:
            _enter(rec, q.name, sha256_file(q), os.lstat(q), kind_name(kind))
    write_record(d, rec)


@contextlib.contextmanager
def owned_dir(out: str | Path, kind: str) -> Iterator[Path]:
    """A temporary directory to fill; when the block ends it gets its record and replaces `out`
    (check_dir_target first). A kill leaves `out` exactly as it was or exactly new; in the one instant
    between moving the old aside and renaming the new in, the new one whole under its temporary name."""
    with atomic_dir(out) as tmp:
        yield tmp
        write_manifest(tmp, kind)
