"""A run directory: what `lrn train` (or an importer) writes and every later command reads.

    RUN_DIR/
      .lrn-run         the marker: this directory was made by lrn (what, when, which version)
      .lrn-lock        held (flock) by the one process that writes the run; the OS frees it
      config.json      the resolved RunConfig (data, model, train)
      tokenizer.json   the run's tokenizer (Hugging Face format)
      metrics.jsonl    one JSON object per line: training logs and evaluations
      ckpt_init.pt     step-0 weights (analyses compare trained with untrained)
      ckpt_last.pt     the latest state (the checkpoint schema: lrngpt/store/checkpoint.py)
      ckpt_best.pt     the weights with the best periodic validation bpb
      summary.json     final evaluation (val/train bpb, gap, passes, params, seconds), once finished
      tensorboard/     with train.logger tensorboard (or train.tensorboard)
      metrics.csv      with train.logger csv: step,tag,value rows
      wandb/           with train.logger wandb: W&B's own files
      trackers.json    the W&B and MLflow run ids, so a resume continues those runs

`RunDir` owns these names and the rules around them:
- one writer: `lock()` takes an exclusive lock for the life of the process; a second writer
  gets "DIR is in use by process PID on HOST" (exit 2); a dead process's lock never blocks;
- ownership: lrn writes only into a directory that is new, empty or holds an lrn run; every file
  it writes is recorded with its sha256 in `.lrn-output` (lrngpt.core.record); `--force` removes
  exactly the earlier run's files (all of them), and only while the record says they are as lrn
  wrote them: a changed file, or a run from before the record, is never removed; a run that never
  reached its first checkpoint (a start that failed or was killed: `is_stub`) holds nothing to
  resume or read, so a new start replaces it without `--force`;
- readers need no lock: every file is replaced atomically, so they never see half of one.

What summary.json and metrics.jsonl must hold is checked as they are read (lrngpt.store.run_files).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import shutil
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lrngpt.core.fsio import (
    atomic_write,
    check_output,
    clean_stale_temps,
    json_safe,
    read_json_object,
    special_kind,
    user_path,
    write_json,
)
from lrngpt.core.ownership import (
    describe_dir,
    expect_append,
    held,
    is_legacy_run,
    is_run,
    lrn_kind,
    record_existing,
    recorded,
    remove_owned,
)
from lrngpt.core.record import OURS, RECORD, UNRECORDED, read_record, record_problem, state
from lrngpt.core.version import __version__
from lrngpt.errors import UserError
from lrngpt.store.layout import (
    BY_READS,
    CHECKPOINT_FILES,
    CHECKPOINTS,
    CONFIG,
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
    TOKENIZER,
)
from lrngpt.store.run_files import check_summary, read_metrics_file

if TYPE_CHECKING:
    from lrngpt.models.gpt import GPT
    from lrngpt.models.mlp import MLPLM
    from lrngpt.runconfig.schema import RunConfig
    from lrngpt.tokenizer.bpe import Tokenizer

_OWN = recorded(RUN_FILE, strict=False)  # the run's writer records its files and is never refused mid-run


class RunInUse(UserError):
    """Another process writes the run (its lock is held); `who` names it."""

    def __init__(self, message: str, who: str):
        super().__init__(message)
        self.who = who


class RunDir:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock_file = None
        self._started: bool | None = None  # None; or this object started the run (True: and made the directory)
        self._config_cache: tuple | None = None  # (stat of config.json, its RunConfig)

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    def __truediv__(self, name: str) -> Path:
        return self.path / name

    def checkpoint_path(self, which: str = "last") -> Path:
        if which not in CHECKPOINTS:
            raise UserError(f"checkpoint must be one of {', '.join(CHECKPOINTS)} (got {which!r})")
        return self.path / CHECKPOINT_FILES[which]

    def has_checkpoint(self, which: str = "last") -> bool:
        """Whether `load(which)` finds a file (best falls back to the last, as load does). A file that
        is there but damaged counts: reading it is an error, not a missing checkpoint."""
        path = self.checkpoint_path(which)
        return path.exists() or path.is_symlink() or (which == "best" and self.has_checkpoint("last"))

    # ---- what is there -----------------------------------------------------------------

    def holds_run(self) -> bool:
        """True when lrn wrote this directory as a run (lrngpt.core.ownership.is_run: its marker, or a
        config.json beside a checkpoint from before the marker). A config.json alone is not."""
        return is_run(self.path)

    def marked(self) -> bool:
        return (self.path / MARKER).is_file()

    def is_stub(self) -> bool:
        """A marked run with no checkpoint and no summary: a start that failed or was killed before it
        saved anything."""
        return self.marked() and not self._holds(INIT, LAST, SUMMARY)

    def _holds(self, *names: str) -> bool:
        return any((self.path / n).exists() or (self.path / n).is_symlink() for n in names)

    def is_legacy_run(self) -> bool:
        """A run written before runs carried the marker: readable and resumable, never replaced."""
        return is_legacy_run(self.path)

    def foreign_files(self) -> list[str]:
        """Names in the directory that lrn did not write as this run: every name when the directory
        is no marked run; beside a marked run, the names that are not the run's own."""
        if not self.path.is_dir():
            return []
        ours = (set(RUN_FILES) | {LOCK, RECORD, *PAGES}) if self.marked() else {LOCK, RECORD}
        with user_path(self.path, "run directory"):
            names = [q.name for q in self.path.iterdir()]
        return sorted(n for n in names if n not in ours and ".tmp-" not in n)

    def kept_files(self) -> dict[str, str]:
        """The run's own files that --force may not remove: changed since lrn wrote them, or written
        before lrn kept a record (name -> CHANGED or UNRECORDED)."""
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

    def lock(self) -> RunDir:
        """Take the directory for this process (creating it), or raise: someone else writes it."""
        # here: `lrn --help` loads this module, not that one
        import fcntl

        p = self.path
        check_output(p, "dir")
        if self._lock_file is not None:
            return self
        with user_path(p, "run directory"):
            p.mkdir(parents=True, exist_ok=True)
            f = open(p / LOCK, "a+")  # noqa: SIM115 - held open for the life of the process
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().split()
            f.close()
            who = f"process {holder[0]} on {holder[1]}" if len(holder) >= 2 else "another process"
            raise RunInUse(f"{p} is in use by {who}; wait for it to finish, or use another --out", who) from None
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()} {socket.gethostname()}\n")
        f.flush()
        self._lock_file = f
        clean_stale_temps(p)  # what a killed writer left behind
        return self

    def unlock(self) -> None:
        if self._lock_file is not None:
            self._lock_file.close()  # closing releases the flock
            self._lock_file = None

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
            (self.path / RECORD).unlink(missing_ok=True)
        if self._started:
            (self.path / LOCK).unlink(missing_ok=True)
            with contextlib.suppress(OSError):  # not empty: something else appeared meanwhile, keep it
                self.path.rmdir()
        self._started = None

    def check_new(self, force: bool, resume_hint: bool) -> None:
        p = self.path
        check_output(p, "dir")
        if self.marked():
            hint = "--resume to continue it, " if resume_hint and self._holds(LAST, INIT) else ""
            kept = self.kept_files()
            if kept and not read_record(p)["exists"]:
                raise UserError(f"{p} holds a run from an lrn before runs kept a record of their files ({RECORD}); "
                                f"lrn reads and resumes it{' (--resume)' if hint else ''} but never replaces it, with "
                                "or without --force: choose another --out, or remove it yourself")
            if kept and record_problem(p):
                raise UserError(f"{p} holds a run that lrn cannot tell as its own: the record {record_problem(p)}, "
                                f"so it names no file; lrn reads and resumes it{' (--resume)' if hint else ''} but "
                                "never replaces it, with or without --force: choose another --out, or remove it "
                                "yourself")
            if kept:
                names = ", ".join(kept)
                how = ("lrn has no record of writing it" if set(kept.values()) == {UNRECORDED}
                       else "it was changed since lrn wrote it, so it is yours now")
                raise UserError(f"{p} holds a run whose {names} lrn may not remove ({how}); lrn never removes "
                                "such a file, with or without --force: move it out of the run to keep it (then "
                                "--force replaces the rest), or choose another --out")
            if not force and not self.is_stub():
                raise UserError(f"{p} already holds a run; use {hint}--force to replace it (only the run's "
                                "own files go), or another --out")
            return
        if self.is_legacy_run():
            raise UserError(f"{p} holds a run from an lrn before run directories were marked ({MARKER}); "
                            "lrn reads and resumes it but never replaces it: choose another --out, or remove it "
                            "yourself")
        kind = lrn_kind(p) if p.is_dir() else None
        if kind:
            raise UserError(f"{p} holds {held(kind)}; a run never goes into it: choose a new or empty --out")
        foreign = self.foreign_files()
        if foreign:
            raise UserError(f"{p} holds {describe_dir(p, foreign)}; lrn never mixes a run with them, and "
                            "--force never removes them: choose a new or empty --out")

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

    # ---- reading ---------------------------------------------------------------------------

    def config_dict(self) -> dict:
        path = self.path / CONFIG
        if not path.exists() and self.holds_run():
            raise UserError(f"{self.path} has no {CONFIG}: the run was stopped before it started; "  # (any command)
                            f"start it again: `lrn train --config CONFIG --out {self.path}`")
        return read_json_object(path, "run config")

    def config(self) -> RunConfig:
        """config.json as a checked RunConfig; parsed once per RunDir while the file stays the same."""
        # torch, numpy: loaded only when this runs
        from lrngpt.runconfig.schema import from_dict

        try:
            st = (self.path / CONFIG).stat()
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            stamp = None
        if stamp is not None and self._config_cache is not None and self._config_cache[0] == stamp:
            return copy.deepcopy(self._config_cache[1])
        d = self.config_dict()  # a missing or unreadable file names itself
        try:
            cfg = from_dict(d)
        except UserError as e:
            raise UserError(f"{self.path / CONFIG}: {e}") from None
        self._config_cache = (stamp, cfg) if stamp is not None else None
        return copy.deepcopy(cfg)

    def summary(self) -> dict | None:
        """summary.json, checked field by field, or None while the run has not finished an evaluation."""
        path = self.path / SUMMARY
        if not path.exists():
            return None
        return check_summary(read_json_object(path, "run summary"), path)

    def by_reads(self) -> dict | None:
        """What `lrn eval --by-reads` last measured on the last weights (by_reads.json), or None. A file
        that does not hold numbers where they belong is named, as summary.json is."""
        path = self.path / BY_READS
        if not path.exists():
            return None
        doc = read_json_object(path, "by-reads result")
        for key in ("step", "train_bpb_read", "train_bpb_unread", "read_share"):
            v = doc.get(key)
            if isinstance(v, bool) or not isinstance(v, int | float | type(None)) or (key == "step" and v is None):
                raise UserError(f"by-reads result {path}: {key} is {json.dumps(v)[:40]}, not what lrn eval writes; "
                                "delete it and run `lrn eval RUN --by-reads` again")
        return doc

    def metrics(self) -> list[dict]:
        """The rows of metrics.jsonl, checked; only a last line that is not JSON (cut by a kill mid-write)
        is skipped, with a warning."""
        return read_metrics_file(self.path / METRICS)

    def checkpoint(self, which: str = "last", map_location: Any = "cpu") -> dict:
        # torch, numpy: loaded only when this runs
        from lrngpt.store.checkpoint import load_checkpoint

        path = self._checkpoint_file(which)
        return load_checkpoint(path, map_location)

    def _checkpoint_file(self, which: str) -> Path:
        path = self.checkpoint_path(which)
        if which == "best" and not path.exists():
            path = self.path / LAST  # no periodic evaluation yet: the last weights are the best known
        if not path.exists() and not path.is_symlink():
            self.check_is_run()
            raise UserError(f"{self.path} has no {path.name}; "
                            + ("it was stopped before its first checkpoint: start it again with "
                               f"`lrn train --config CONFIG --out {self.path}` (it replaces what is there)"
                               if which != "init" else "it was written before ckpt_init.pt existed"))
        return path

    def load(self, which: str = "last", device: str = "cpu") -> LoadedRun:
        # torch, numpy, tokenizers: loaded only when this runs; here: `lrn --help` loads this module, not that one
        from lrngpt.models.build import build_model
        from lrngpt.store.checkpoint import load_checkpoint
        from lrngpt.tokenizer.bpe import Tokenizer

        path = self._checkpoint_file(which)
        ckpt = load_checkpoint(path, map_location=device)
        cfg = ckpt["run_config"]  # parsed and checked by load_checkpoint
        self._check_belongs(cfg, path)
        try:
            tok = Tokenizer.from_str(ckpt["tokenizer"])
        except UserError as e:
            raise UserError(f"checkpoint {path}: {e}") from None
        model = build_model(cfg.model_type, cfg.model)
        try:
            model.load_state_dict(ckpt["model"])
        except RuntimeError as e:
            raise UserError(f"checkpoint {path} does not match its config ({str(e).splitlines()[0]}); "
                            "it is damaged: use another checkpoint, or train again") from None
        model.to(device).eval()
        return LoadedRun(self.path, cfg, model, tok, int(ckpt["step"]), ckpt)

    def _check_belongs(self, cfg: RunConfig, path: Path) -> None:
        """A checkpoint whose model or data differ from config.json belongs to another run: say so."""
        if not (self.path / CONFIG).exists():
            return
        def identity(c: RunConfig) -> dict:  # what makes a checkpoint this run's
            return {**{f"model.{k}": v for k, v in c.model_dict().items()},
                    "data.corpus": c.data.corpus, "data.vocab_size": c.data.vocab_size}

        mine, theirs = identity(self.config()), identity(cfg)
        changed = [k for k in theirs if mine.get(k) != theirs[k]]
        if changed:
            key = changed[0]
            raise UserError(f"{path} does not belong to the run in {self.path}: its "
                            f"{key.replace('model.model_type', 'model_type')} is "
                            f"{json.dumps(theirs[key])}, {CONFIG} says {json.dumps(mine.get(key))}; "
                            f"put the run's own checkpoint back, or train again with --force")

    # ---- writing (the process that holds the lock) -----------------------------------------

    def write_config(self, cfg: RunConfig) -> None:
        write_json(self.path / CONFIG, cfg.to_dict(), _OWN)

    def write_tokenizer(self, tokenizer: Tokenizer) -> None:
        atomic_write(self.path / TOKENIZER, tokenizer.to_str(), _OWN)

    def write_summary(self, summary: dict) -> None:
        write_json(self.path / SUMMARY, summary, _OWN)

    def write_by_reads(self, result: dict) -> None:
        """by_reads.json, written by `lrn eval` (no lock: only this file), refused where it is not lrn's."""
        write_json(self.path / BY_READS, result, recorded(RUN_FILE))

    def save_checkpoint(self, payload: dict, which: str = "last") -> None:
        # torch, numpy: loaded only when this runs
        from lrngpt.store.checkpoint import save_checkpoint

        save_checkpoint(payload, self.checkpoint_path(which), _OWN)
        record_existing(self.path / METRICS, RUN_FILE, append=True)  # the rows so far, as the checkpoint has them

    def append_metric(self, row: dict) -> None:
        with user_path(self.path / METRICS, "metrics file"), open(self.path / METRICS, "a", encoding="utf-8") as f:
            f.write(json.dumps(json_safe(row)) + "\n")

    def truncate_metrics(self, step: int) -> int:
        """Keep the rows up to `step` (a resumed run then writes exactly what a straight run would)."""
        path = self.path / METRICS
        if not path.exists():
            return 0
        rows = self.metrics()
        keep = [r for r in rows if r["step"] <= step and not r.get("final")]
        atomic_write(path, "".join(json.dumps(json_safe(r)) + "\n" for r in keep),
                     recorded(RUN_FILE, strict=False, append=True))
        return len(rows) - len(keep)


@dataclass
class LoadedRun:
    dir: Path
    config: RunConfig
    model: MLPLM | GPT
    tokenizer: Tokenizer
    step: int
    checkpoint: dict


def load_run(run_dir: str | Path, which: str = "last", device: str = "cpu") -> LoadedRun:
    return RunDir(run_dir).load(which, device)


def read_summary(run_dir: str | Path) -> dict | None:
    """summary.json, or None while it is missing (a damaged one is a UserError naming the field)."""
    return RunDir(run_dir).summary()


def read_metrics(run_dir: str | Path) -> list[dict]:
    return RunDir(run_dir).metrics()


