"""The ownership record: what lrn wrote in a directory, kept by lrn beside it (`DIR/.lrn-output`).

Every directory lrn writes a file into holds one record, a JSON object:

    kind       what the directory is when lrn filled it whole ("hf-export", "embed-export",
               "prepared data"), else null (a run, a sweep, a folder of yours holding a page)
    files      name -> the sha256 of what lrn wrote there last
    stat       name -> [size, mtime_ns, inode] of that file as written: while they still match,
               the file is unchanged and nothing is hashed (a checkpoint is not read again)
    earlier    name -> the hashes the file held before lrn last replaced it, so a kill between
               the record and the rename leaves a file still known as lrn's
    append     name -> a size: a file lrn appends to (metrics.jsonl) is lrn's while its first
               SIZE bytes have the recorded hash
    what       name -> what the file is ("report", "run file", ...)

A directory meant for the Hugging Face Hub (an HF export) keeps its record where huggingface_hub's
upload_folder and `hf upload` never upload from, `.cache/huggingface/lrn-output` (their
DEFAULT_IGNORE_PATTERNS skip .cache/huggingface/), beside a .gitignore of "*" as huggingface_hub
writes there, so `git add .` in a clone of the Hub repository skips it too.

A file is lrn's when the record names it and its content has a recorded hash; a file changed
since is not, whatever it contains (a page that carries lrn's generator tag proves nothing).
Writers update the record and rename the new file into place under a lock on the directory
(filelock, portable: `.lrn-output.lock`), so two lrn processes writing into one directory never lose each other's entries.
The record of a directory lrn fills whole is written last into the new directory before it is
swapped in (lrngpt.core.ownership.owned_dir).

The record is the user's word as much as lrn's: it needs no key and travels with the directory (a run
copied to another machine is lrn's there as it was here). A record written by hand is like --force, the
user saying so. A damaged record names no file; read_record says so in `problem`, for a refusal.
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

from lrngpt.core.fsio import atomic_write, is_regular, special_kind
from lrngpt.core.version import __version__
from lrngpt.errors import UserError

RECORD = ".lrn-output"
HUB_RECORD = (".cache", "huggingface", "lrn-output")  # the record of a directory meant for the Hub
HUB_KINDS = ("hf-export",)
FORMAT = 4  # 4: unsigned (3 carried a signature, no longer read)
NEW, OURS, CHANGED, UNRECORDED, OTHER = "new", "ours", "changed", "unrecorded", "not a file"
_FIELDS = ("files", "stat", "earlier", "append", "what")
# why a record names nothing (read_record's "problem"), as a refusal says it
DAMAGED, NOT_A_FILE = "damaged", "not a file"
PROBLEMS = {DAMAGED: "is damaged (not the JSON lrn writes)", NOT_A_FILE: "is not a file"}
LOCK = ".lrn-output.lock"  # the directory's lock while its record changes
OWN_NAMES = (RECORD, LOCK)  # the record's own files: never a file of the directory's content


def sha256_file(path: Path, limit: int | None = None) -> str:
    """The file's sha256 (of its first `limit` bytes when given)."""
    h = hashlib.sha256()
    left = limit
    with open(path, "rb") as f:
        while left is None or left > 0:
            block = f.read(1 << 20 if left is None else min(1 << 20, left))
            if not block:
                break
            h.update(block)
            if left is not None:
                left -= len(block)
    return h.hexdigest()



def read_record(d: Path) -> dict:
    """The record of `d`, each field a dict; an empty one where there is none, it is damaged or it
    (then nothing in `d` is known as lrn's, the safe side: `problem` says which)."""
    doc, problem = None, None
    for path in (Path(d) / RECORD, Path(d).joinpath(*HUB_RECORD)):
        if os.path.lexists(path) and not is_regular(path):
            problem = NOT_A_FILE  # a FIFO or a device named like the record is no record: never opened
            continue
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError):
            doc, problem = None, DAMAGED
        if doc is not None:
            problem = None  # (the Hub record read where `.lrn-output` is damaged: that one counts)
            break
    if doc is not None and not isinstance(doc, dict):
        doc, problem = None, DAMAGED
    exists = bool(doc) or problem is not None
    doc = doc or {}
    out: dict[str, Any] = {"kind": doc.get("kind") if isinstance(doc.get("kind"), str) else None}
    for field in _FIELDS:
        value = doc.get(field)
        out[field] = value if isinstance(value, dict) else {}
    out["files"] = {k: v for k, v in out["files"].items() if isinstance(k, str) and isinstance(v, str)}
    out["exists"], out["problem"] = exists, problem
    return out


def record_problem(d: Path) -> str | None:
    """Why `d`'s record names nothing, in words ('DIR/.lrn-output is damaged ...'), or None."""
    problem = read_record(d)["problem"]
    return f"{Path(d) / RECORD} {PROBLEMS[problem]}" if problem else None


def check_record_slot(d: Path) -> None:
    """Refuse, before any work, a directory whose record name is taken by something lrn cannot
    replace with its record (a directory, a FIFO): its writes would fail after the work."""
    for path in (Path(d) / RECORD, Path(d).joinpath(*HUB_RECORD)):
        if os.path.lexists(path) and not is_regular(path):
            what = "a directory" if path.is_dir() and not path.is_symlink() else special_kind(path) or "a link"
            raise UserError(f"{path} is {what}, not lrn's record; lrn keeps "
                            f"the record of what it writes in {Path(d)} under that name: move it away, then run the "
                            "command again")


def record_path(d: Path, kind: str | None = None) -> Path:
    return Path(d).joinpath(*HUB_RECORD) if kind in HUB_KINDS else Path(d) / RECORD


def write_record(d: Path, rec: dict) -> None:
    doc = {"format": FORMAT, "kind": rec.get("kind"), "lrn_version": __version__,
           "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **{f: rec.get(f) or {} for f in _FIELDS}}
    check_record_slot(d)
    path = record_path(d, rec.get("kind"))
    if path != Path(d) / RECORD:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path.parent / ".gitignore", "*\n")
    atomic_write(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")


def hub_cache_is_ours(d: Path) -> bool:
    """DIR/.cache holds nothing but the Hub record and its .gitignore: lrn's, replaced with the rest."""
    cache = Path(d) / HUB_RECORD[0]
    if cache.is_symlink() or not cache.is_dir():
        return False
    with contextlib.suppress(OSError):
        found = {p.relative_to(cache).as_posix() for p in cache.rglob("*")}
        return found <= {"huggingface", "huggingface/lrn-output", "huggingface/.gitignore"}
    return False


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def state(path: Path, rec: dict | None = None) -> tuple[str, str | None]:
    """(NEW | OURS | CHANGED | UNRECORDED | OTHER, the content's hash when it was computed or known).

    OURS: the record names the file and its content is one lrn wrote; CHANGED: named, but its content
    is no longer lrn's; UNRECORDED: a file lrn has no record of; OTHER: a directory, a link, a FIFO."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return NEW, None
    if not stat_mod.S_ISREG(st.st_mode):
        return OTHER, None
    rec = read_record(path.parent) if rec is None else rec
    name = path.name
    hashes = ([rec["files"][name]] if name in rec["files"] else []) + \
        [h for h in rec["earlier"].get(name) or [] if isinstance(h, str)]
    if not hashes:
        return UNRECORDED, None
    if name in rec["files"] and rec["stat"].get(name) == _stamp(st):
        return OURS, rec["files"][name]  # size, mtime and inode as written: unchanged, nothing hashed
    size = rec["append"].get(name)
    if isinstance(size, int) and name in rec["files"]:
        if st.st_size < size:
            return CHANGED, None
        h = sha256_file(path, size)
        return (OURS if h == rec["files"][name] else CHANGED), h
    h = sha256_file(path)
    return (OURS if h in hashes else CHANGED), h


@contextlib.contextmanager
def locked(d: Path) -> Iterator[None]:
    """An exclusive lock on the directory while its record is read, changed and files are renamed."""
    try:
        lock = filelock.FileLock(Path(d) / LOCK)
        lock.acquire()
    except OSError:  # a directory that cannot hold the lock cannot hold the record: the write names the path
        yield
        return
    try:
        yield
    finally:
        lock.release()


def enter(rec: dict, name: str, digest: str, st: os.stat_result, what: str, before: str | None = None,
          append: bool = False) -> None:
    """Set the entry of `name`: lrn wrote content `digest` (stat `st`), replacing content `before`."""
    earlier = [before] if before and before != digest else []
    rec["files"][name] = digest
    rec["stat"][name] = _stamp(st)
    rec["what"][name] = what
    rec["earlier"][name] = earlier
    if append:
        rec["append"][name] = st.st_size
    else:
        rec["append"].pop(name, None)


def forget(rec: dict, names) -> None:
    for name in names:
        for field in _FIELDS:
            rec[field].pop(name, None)


def manifest(d: Path, kind: str, what: str) -> None:
    """The record of a directory lrn filled whole: every file in it, hashed. Written last."""
    rec = {"kind": kind, **{f: {} for f in _FIELDS}}
    for q in sorted(Path(d).iterdir()):
        if q.is_file() and not q.is_symlink() and q.name not in OWN_NAMES:
            enter(rec, q.name, sha256_file(q), os.lstat(q), what)
    write_record(d, rec)
