"""Who writes a run directory (one process: a filelock held for its life) and how a run starts, is
replaced and goes; a run that never reached its first checkpoint (`is_stub`) is replaced without --force.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
from pathlib import Path
from typing import Self

import filelock

from lrngpt.core.fsio import check_output, clean_stale_temps, special_kind, user_path
from lrngpt.core.ownership import (
    NEW,
    OURS,
    OWN_NAMES,
    UNRECORDED,
    check_dir_target,
    is_run,
    mark,
    read_record,
    remove_owned,
    state,
)
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
    """A run directory as one process takes it, starts, replaces or abandons a run in it."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock: filelock.FileLock | None = None
        self._started: bool | None = None  # None; or this object started the run (True: and made the directory)

    # ---- what is there -----------------------------------------------------------------

    def holds_run(self) -> bool:
        """True when lrn wrote this directory as a run (its record says so)."""
        return is_run(self.path)

    def is_stub(self) -> bool:
        """A run with no checkpoint and no summary: a start that failed or was killed before it saved anything."""
        return self.holds_run() and not self._holds(INIT, LAST, SUMMARY)

    def _holds(self, *names: str) -> bool:
        return any(os.path.lexists(self.path / n) for n in names)

    def kept_files(self) -> dict[str, str]:
        """The run's own files that --force may not remove: name -> CHANGED or UNRECORDED."""
        rec = read_record(self.path)
        found = {n: state(self.path / n, rec)[0] for n in RECORDED}
        return {n: f for n, f in found.items() if f not in (OURS, NEW)}

    def check_is_run(self) -> None:
        p = self.path
        if not p.exists():
            raise UserError(f"run directory {p} does not exist; train one with `lrn train --out {p}`")
        if not p.is_dir():
            what = special_kind(p) or "a file"  # /dev/zero is a device, a FIFO a named pipe: said as such
            raise UserError(f"{p} is {what}, not a run directory; give the directory `lrn train --out` wrote")
        if not self.holds_run():
            raise UserError(f"{p} holds no lrn run (no {MARKER} naming it a run); give the directory "
                            "`lrn train --out` wrote")

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
                raise RunInUse(f"{p} is in use by {who}; wait for it to finish, or use another {option('out')}",
                               who) from None
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

    def start(self, force: bool = False, resume_hint: bool = True) -> None:
        """Lock the directory and make it ready for a new run; with force, drop the earlier run's
        files (and only them). Anything that is not a run is refused before the directory is touched."""
        if not self.holds_run():  # before a lock file is made in someone's directory
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
            elif not had_lock and not self.holds_run():
                (self.path / LOCK).unlink(missing_ok=True)
            raise
        if self.holds_run():
            self.remove_run_files()
        mark(self.path, "run", METRICS, RUN_FILE)  # metrics.jsonl, appended row by row: lrn's from its first byte
        self._started = created

    def abandon(self) -> None:
        """Undo this object's start when it failed before it trained (no checkpoint past step 0, no
        summary): the run's files go, and the directory too when the start made it. Nothing else."""
        if self._started is None or not self.holds_run() or self._holds(LAST, SUMMARY):
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
        if self.holds_run():
            hint = f"{option('resume', True)} to continue it, " if resume_hint and self._holds(LAST, INIT) else ""
            kept, force_ = self.kept_files(), option('force', True)
            if kept:
                how = ("lrn has no record of writing it" if set(kept.values()) == {UNRECORDED}
                       else "it was changed since lrn wrote it, so it is yours now")
                raise UserError(f"{p} holds a run whose {', '.join(kept)} lrn may not remove ({how}); lrn never "
                                f"removes such a file, with or without {force_}: move it out of the run to keep it "
                                f"(then {force_} replaces the rest), or choose another {option('out')}")
            if not force and not self.is_stub():
                raise UserError(f"{p} already holds a run; use {hint}{force_} to replace it (only the run's "
                                f"own files go), or another {option('out')}")
            return
        check_dir_target(p, force, "run")  # no run: new or empty, as every directory lrn writes

    def remove_run_files(self) -> None:
        """Every file of the earlier run (kept_files() found none that --force may not remove), the pages
        lrn wrote beside it while unchanged, and nothing else; the directory is then no run."""
        pages = [n for n in PAGES if state(self.path / n)[0] == OURS]
        # a recorded file that is gone (an append never begun) leaves the record too
        remove_owned(self.path, [n for n in RECORDED if (self.path / n).is_file() or not (self.path / n).exists()]
                     + pages)
        for name in RUN_FILES:
            q = self.path / name
            if q.is_dir() and not q.is_symlink():
                shutil.rmtree(q)
            elif os.path.lexists(q):
                q.unlink()
        mark(self.path, None)
