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
- ownership: lrn writes only into a directory that is new, empty or holds an lrn run;
  `--force` removes exactly the earlier run's files (all of them), never anything else;
- readers need no lock: every file is replaced atomically, so they never see half of one.

What summary.json and metrics.jsonl must hold is checked as they are read (lrngpt.store.run_files).
"""

from __future__ import annotations

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
    has_marker,
    json_safe,
    read_json_object,
    user_path,
    write_json,
)
from lrngpt.errors import UserError
from lrngpt.store.run_files import check_metric, check_summary

if TYPE_CHECKING:
    from torch import nn

    from lrngpt.runconfig.schema import RunConfig
    from lrngpt.tokenizer.bpe import Tokenizer

MARKER, LOCK = ".lrn-run", ".lrn-lock"
CONFIG, TOKENIZER, METRICS, SUMMARY = "config.json", "tokenizer.json", "metrics.jsonl", "summary.json"
INIT, LAST, BEST = "ckpt_init.pt", "ckpt_last.pt", "ckpt_best.pt"
CHECKPOINT_FILES = {"last": LAST, "best": BEST, "init": INIT}  # each checkpoint's file
CHECKPOINTS = tuple(CHECKPOINT_FILES)  # the names of a run's weights: last, best, init
CHECKPOINT_LABELS = {"last": "trained", "best": "best", "init": "untrained"}  # what each one's table is called
TENSORBOARD, REPORT = "tensorboard", "report.html"
TRACKERS, METRICS_CSV, WANDB = "trackers.json", "metrics.csv", "wandb"  # lrngpt.training.trackers
BY_READS = "by_reads.json"  # what `lrn eval --by-reads` measured on the last weights (for lrn report)
# Everything a run writes; `--force` removes these and nothing else. (report.html only when
# lrn wrote it: its generator tag is LRN_PAGE.)
RUN_FILES = (CONFIG, TOKENIZER, METRICS, SUMMARY, INIT, LAST, BEST, TENSORBOARD, TRACKERS, METRICS_CSV, WANDB,
             BY_READS, MARKER)
LRN_PAGE = b'name="generator" content="lrn'  # the tag of a page lrn report (or explore) wrote


class RunDir:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock_file = None
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
        """True when lrn wrote this directory as a run: its marker, or a run from before the marker
        (a config.json that lrn reads as a run config beside a checkpoint). A config.json alone is not."""
        return self.marked() or self.is_legacy_run()

    def marked(self) -> bool:
        return (self.path / MARKER).is_file()

    def is_legacy_run(self) -> bool:
        """A run written before runs carried the marker: readable and resumable, never replaced."""
        p = self.path
        if self.marked() or not (p / CONFIG).is_file() or not any((p / n).is_file() for n in (LAST, INIT)):
            return False
        try:
            from lrngpt.runconfig.schema import from_dict

            from_dict(read_json_object(p / CONFIG, "run config"))
            return True
        except UserError:
            return False

    def foreign_files(self) -> list[str]:
        """Names in the directory that lrn did not write as this run: every name when the directory
        is no marked run; beside a marked run, the names that are not the run's own."""
        if not self.path.is_dir():
            return []
        ours = (set(RUN_FILES) | {LOCK, REPORT}) if self.marked() else {LOCK}
        with user_path(self.path, "run directory"):
            names = [q.name for q in self.path.iterdir()]
        return sorted(n for n in names if n not in ours and ".tmp-" not in n)

    def check_is_run(self) -> None:
        p = self.path
        if not p.exists():
            raise UserError(f"run directory {p} does not exist; train one with `lrn train --out {p}`")
        if not p.is_dir():
            raise UserError(f"{p} is a file, not a run directory; give the directory `lrn train --out` wrote")
        if not self.holds_run():
            raise UserError(f"{p} holds no lrn run (no {MARKER}); give the directory `lrn train --out` wrote")

    # ---- one writer ------------------------------------------------------------------------

    def lock(self) -> RunDir:
        """Take the directory for this process (creating it), or raise: someone else writes it."""
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
            raise UserError(f"{p} is in use by {who}; wait for it to finish, or use another --out") from None
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
                                        "lrn_version": _version()})

    def check_new(self, force: bool, resume_hint: bool) -> None:
        p = self.path
        check_output(p, "dir")
        if self.marked():
            if not force:
                hint = "--resume to continue it, " if resume_hint and (p / LAST).exists() else ""
                raise UserError(f"{p} already holds a run; use {hint}--force to replace it (only the run's "
                                "own files go), or another --out")
            return
        if self.is_legacy_run():
            raise UserError(f"{p} holds a run from an lrn before run directories were marked ({MARKER}); "
                            "lrn does not replace it: choose another --out, or remove it yourself")
        foreign = self.foreign_files()
        if foreign:
            raise UserError(f"{p} holds files lrn did not write ({', '.join(foreign[:3])}"
                            f"{', ...' if len(foreign) > 3 else ''}); lrn never mixes a run with them, and "
                            "--force never removes them: choose a new or empty --out")

    def remove_run_files(self) -> None:
        """Every file of the earlier run, and nothing that lrn did not write."""
        for name in RUN_FILES:
            q = self.path / name
            if q.is_dir() and not q.is_symlink():
                shutil.rmtree(q)
            elif q.exists() or q.is_symlink():
                q.unlink()
        report = self.path / REPORT
        if report.is_file() and has_marker(report, LRN_PAGE):
            report.unlink()

    # ---- reading ---------------------------------------------------------------------------

    def config_dict(self) -> dict:
        path = self.path / CONFIG
        if not path.exists() and self.holds_run():
            raise UserError(f"{self.path} has no {CONFIG}: the run was stopped before it started; "  # (any command)
                            f"start it again: `lrn train --config CONFIG --out {self.path} --force`")
        return read_json_object(path, "run config")

    def config(self) -> RunConfig:
        """config.json as a checked RunConfig; parsed once per RunDir while the file stays the same."""
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
        path = self.path / METRICS
        if not path.exists():
            return []
        with user_path(path, "metrics file"):
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        rows = []
        last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                if i == last:  # a line cut by a kill mid-write (or garbage): skipped, and said once
                    _warn_once(f"metrics file {path}, line {i + 1} (the last), is not JSON (cut short by a kill "
                               "mid-write?); it is skipped")
                    continue
                raise UserError(f"metrics file {path}, line {i + 1}, is not JSON; delete the line") from None
            rows.append(check_metric(row, f"metrics file {path}, line {i + 1},"))
        return rows

    def checkpoint(self, which: str = "last", map_location: Any = "cpu") -> dict:
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
                               f"`lrn train --config CONFIG --out {self.path} --force`"
                               if which != "init" else "it was written before ckpt_init.pt existed"))
        return path

    def load(self, which: str = "last", device: str = "cpu") -> LoadedRun:
        from lrngpt.models import build_model
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
        write_json(self.path / CONFIG, cfg.to_dict())

    def write_tokenizer(self, tokenizer: Tokenizer) -> None:
        atomic_write(self.path / TOKENIZER, tokenizer.to_str())

    def write_summary(self, summary: dict) -> None:
        write_json(self.path / SUMMARY, summary)

    def write_by_reads(self, result: dict) -> None:
        write_json(self.path / BY_READS, result)

    def save_checkpoint(self, payload: dict, which: str = "last") -> None:
        from lrngpt.store.checkpoint import save_checkpoint

        save_checkpoint(payload, self.checkpoint_path(which))

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
        atomic_write(path, "".join(json.dumps(json_safe(r)) + "\n" for r in keep))
        return len(rows) - len(keep)


@dataclass
class LoadedRun:
    dir: Path
    config: RunConfig
    model: nn.Module
    tokenizer: Tokenizer
    step: int
    checkpoint: dict


_warned: set[str] = set()


def _warn_once(msg: str) -> None:
    """One warning per message per process: a command may read the same file several times."""
    from lrngpt.core import log

    if msg not in _warned:
        _warned.add(msg)
        log.warning(msg)


def load_run(run_dir: str | Path, which: str = "last", device: str = "cpu") -> LoadedRun:
    return RunDir(run_dir).load(which, device)


def read_summary(run_dir: str | Path) -> dict | None:
    """summary.json, or None while it is missing (a damaged one is a UserError naming the field)."""
    return RunDir(run_dir).summary()


def read_metrics(run_dir: str | Path) -> list[dict]:
    return RunDir(run_dir).metrics()


def _version() -> str:
    from lrngpt import __version__

    return __version__

