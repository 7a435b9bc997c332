"""Who writes a run directory and how a run starts, is replaced and goes: the lock and the lifecycle
that `RunDir` (lrngpt.store.rundir, the reading and writing of the run's files) builds on.

- one writer: `lock()` takes an exclusive lock (filelock, portable) for the life of the process; a
  second writer gets "DIR is in use by process PID on HOST" (exit 2); a dead process's lock never blocks;
- ownership: lrn writes only into a directory that is new, empty or holds an lrn run; every file
  it writes is recorded with its sha256 in `.lrn-output` (lrngpt.core.record); `--force` removes
  exactly the earlier run's files (all of them), and only while the record says they are as lrn
  wrote them: a changed file is never removed; a run that never
  reached its first checkpoint (a start that failed or was killed: `is_stub`) holds nothing to
  resume or read, so a new start replaces it without `--force`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import time
from pathlib import Path
from typing import Self

import filelock

from lrngpt.core.fsio import check_output, clean_stale_temps, special_kind, user_path, write_json
from lrngpt.core.ownership import (
    describe_dir,
    expect_append,
    held,
    is_run,
    lrn_kind,
    remove_owned,
)
from lrngpt.core.record import OURS, OWN_NAMES, UNRECORDED, read_record, record_problem, state
from lrngpt.core.version import __version__
from lrngpt.errors import UserError, option
from lrngpt.store.layout import (
    INIT,
    LAST,
    LOCK,
    MARKER,
    METRICS,
    PAGES,
    RECORDED,
    RUN_FILE,
    RUN_FILES,
    SUMMARY,
)


class RunInUse(UserError):
    """Another process writes the run (its lock is held); `who` names it."""

    def __init__(self, message: str, who: str):
        super().__init__(message)
        self.who = who


class RunLifecycle:
    """A run directory as one process takes it, starts, replaces or abandons a run in it, and what
    is there for that (a run, a stub, files that are not lrn's)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock: filelock.FileLock | None = None
        self._started: bool | None = None  # None; or this object started the run (True: and made the directory)

    # ---- what is there -----------------------------------------------------------------

    def holds_run(self) -> bool:
        """True when lrn wrote this directory as a run (lrngpt.core.ownership.is_run: its marker)."""
        return is_run(self.path)

    def marked(self) -> bool:
        return (self.path / MARKER).is_file()

    def is_stub(self) -> bool:
        """A marked run with no checkpoint and no summary: a start that failed or was killed before it
        saved anything."""
        return self.marked() and not self._holds(INIT, LAST, SUMMARY)

    def _holds(self, *names: str) -> bool:
        return any((self.path / n).exists() or (self.path / n).is_symlink() for n in names)

    def foreign_files(self) -> list[str]:
        """Names in the directory that lrn did not write as this run: every name when the directory
        is no marked run; beside a marked run, the names that are not the run's own."""
        if not self.path.is_dir():
            return []
        ours = (set(RUN_FILES) | {LOCK, *OWN_NAMES, *PAGES}) if self.marked() else {LOCK, *OWN_NAMES}
        with user_path(self.path, "run directory"):
            names = [q.name for q in self.path.iterdir()]
        return sorted(n for n in names if n not in ours and ".tmp-" not in n)

    def kept_files(self) -> dict[str, str]:
        """The run's own files that --force may not remove: changed since lrn wrote them, or written
        that the record does not name (name -> CHANGED or UNRECORDED)."""
        rec = read_record(self.path)
        found = {n: state(self.path / n, rec)[0] for n in RECORDED}
        return {n: f for n, f in found.items() if f not in (OURS, "new")}

    def check_is_run(self) -> None:
        p = self.path
        if not p.exists():
            raise UserError(f"run directory {p} does not exist; train one with `lrn train --out {p}`")
        if not p.is_dir():
            what = special_kind(p) or "a file"  # /dev/zero is a device, a FIFO a named pipe: said as such
            raise UserError(f"{p} is {what}, not a run directory; give the directory `lrn train --out` wrote")
        if not self.holds_run():
            raise UserError(f"{p} holds no lrn run (no {MARKER}); give the directory `lrn train --out` wrote")

    # ---- one writer ------------------------------------------------------------------------

    def lock(self) -> Self:
        """Take the directory for this process (creating it), or raise: someone else writes it."""
        p = self.path
        check_output(p, "dir")
        if self._lock is not None:
            return self
        with user_path(p, "run directory"):
            p.mkdir(parents=True, exist_ok=True)
            lock = filelock.FileLock(p / LOCK, timeout=0)
            try:
                lock.acquire()
            except filelock.Timeout:
                holder: list[str] = []
                with contextlib.suppress(OSError):  # who holds it, as the holder wrote it (where it can be read)
                    holder = (p / LOCK).read_text().split()
                who = f"process {holder[0]} on {holder[1]}" if len(holder) >= 2 else "another process"
                raise RunInUse(f"{p} is in use by {who}; wait for it to finish, or use another {option('out')}", who) from None
            with contextlib.suppress(OSError):  # said to a second writer (Windows locks the bytes: then unsaid)
                (p / LOCK).write_text(f"{os.getpid()} {socket.gethostname()}\n")
        self._lock = lock
        clean_stale_temps(p)  # what a killed writer left behind
        return self

    def unlock(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    # ---- starting a run ------------------------------------------------------------------

    def start(self, force: bool = False, kind: str = "run", resume_hint: bool = True) -> None:
        """Lock the directory and make it ready for a new run; with force, drop the earlier run's
        files (and only them). Refused before the directory is touched: anything that is not a run."""
        if not self.marked():  # before a lock file is made in someone's directory
            self.check_new(force, resume_hint)
        created = not self.path.exists()
        had_lock = (self.path / LOCK).exists()
        self.lock()
        try:
            self.check_new(force, resume_hint)  # again: another process may have started meanwhile
        except UserError:
            self.unlock()
            if created:
                shutil.rmtree(self.path, ignore_errors=True)
            elif not had_lock and not self.marked():
                (self.path / LOCK).unlink(missing_ok=True)
            raise
        if self.marked():
            self.remove_run_files()
        write_json(self.path / MARKER, {"kind": kind, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                                        "lrn_version": __version__})
        expect_append(self.path / METRICS, RUN_FILE)  # appended row by row: lrn's from its first byte
        self._started = created

    def abandon(self) -> None:
        """Undo this object's start when it failed before it trained (no checkpoint past step 0, no
        summary): the run's files go, and the directory too when the start made it. Nothing else."""
        if self._started is None or not self.marked() or self._holds(LAST, SUMMARY):
            return
        self.remove_run_files()
        if not read_record(self.path)["files"]:  # a record of no file: the failed start leaves no trace
            for name in OWN_NAMES:
                (self.path / name).unlink(missing_ok=True)
        if self._started:
            (self.path / LOCK).unlink(missing_ok=True)
            with contextlib.suppress(OSError):  # not empty: something else appeared meanwhile, keep it
                self.path.rmdir()
        self._started = None

    def check_new(self, force: bool, resume_hint: bool) -> None:
        p = self.path
        check_output(p, "dir")
        if self.marked():
            hint = f"{option('resume', True)} to continue it, " if resume_hint and self._holds(LAST, INIT) else ""
            kept = self.kept_files()
            if kept and record_problem(p):
                raise UserError(f"{p} holds a run that lrn cannot tell as its own: the record {record_problem(p)}, "
                                f"so it names no file; lrn reads and resumes it{' (--resume)' if hint else ''} but "
                                f"never replaces it, with or without {option('force', True)}: choose another {option('out')}, or remove it "
                                "yourself")
            if kept:
                names = ", ".join(kept)
                how = ("lrn has no record of writing it" if set(kept.values()) == {UNRECORDED}
                       else "it was changed since lrn wrote it, so it is yours now")
                raise UserError(f"{p} holds a run whose {names} lrn may not remove ({how}); lrn never removes "
                                f"such a file, with or without {option('force', True)}: move it out of the run to keep it (then "
                                f"{option('force', True)} replaces the rest), or choose another {option('out')}")
            if not force and not self.is_stub():
                raise UserError(f"{p} already holds a run; use {hint}{option('force', True)} to replace it (only the run's "
                                f"own files go), or another {option('out')}")
            return
        kind = lrn_kind(p) if p.is_dir() else None
        if kind:
            raise UserError(f"{p} holds {held(kind)}; a run never goes into it: choose a new or empty {option('out')}")
        foreign = self.foreign_files()
        if foreign:
            raise UserError(f"{p} holds {describe_dir(p, foreign)}; lrn never mixes a run with them, and "
                            f"{option('force', True)} never removes them: choose a new or empty {option('out')}")

    def remove_run_files(self) -> None:
        """Every file of the earlier run (kept_files() found none that --force may not remove), the pages
        lrn wrote beside it while unchanged, and nothing else."""
        pages = [n for n in PAGES if state(self.path / n)[0] == OURS]
        # a recorded file that is gone (an append never begun) leaves the record too
        remove_owned(self.path, [n for n in RECORDED if (self.path / n).is_file() or not (self.path / n).exists()]
                     + pages)
        for name in RUN_FILES:
            q = self.path / name
            if q.is_dir() and not q.is_symlink():
                shutil.rmtree(q)
            elif q.exists() or q.is_symlink():
                q.unlink()

