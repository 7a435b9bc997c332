"""A run directory: what `lrn train` (or an importer) writes and every later command reads.

    RUN_DIR/
      .lrn-output      the record (lrngpt.core.ownership): a run (kind "run"), lrn's files and their hashes
      .lrn-lock        held (filelock) by the one process that writes the run; the OS frees it
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

`RunDir` owns these names: it reads the run's files (readers need no lock: every file is replaced
atomically, so they never see half of one) and writes them from the process that holds the lock.
Who writes, and how a run starts, is replaced by `--force` or goes, is its base's
(lrngpt.store.lifecycle.RunLifecycle).

What summary.json and metrics.jsonl must hold is checked as they are read (lrngpt.store.run_files).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lrngpt.core.fsio import atomic_write, json_safe, read_json_object, user_path, write_json
from lrngpt.core.once import parsed
from lrngpt.core.ownership import record_existing, recorded
from lrngpt.errors import UserError, option
from lrngpt.models.build import build_model
from lrngpt.models.gpt import GPT
from lrngpt.models.mlp import MLPLM
from lrngpt.runconfig.schema import RunConfig, from_dict
from lrngpt.store.checkpoint import load_checkpoint, save_checkpoint
from lrngpt.store.layout import (
    BY_READS,
    CHECKPOINT_FILES,
    CHECKPOINTS,
    CONFIG,
    LAST,
    METRICS,
    RUN_FILE,
    SUMMARY,
    TOKENIZER,
)
from lrngpt.store.lifecycle import RunLifecycle
from lrngpt.store.run_files import BY_READS_FIELDS, check_fields, check_summary, read_metrics_file
from lrngpt.tokenizer.bpe import Tokenizer

_OWN = recorded(RUN_FILE, strict=False)  # the run's writer records its files and is never refused mid-run


class RunDir(RunLifecycle):
    """A run directory's files, read (checked) and written; its lock and lifecycle: RunLifecycle."""

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

    # ---- reading ---------------------------------------------------------------------------

    def config_dict(self) -> dict:
        path = self.path / CONFIG
        if not path.exists() and self.holds_run():
            raise UserError(f"{self.path} has no {CONFIG}: the run was stopped before it started; "  # (any command)
                            f"start it again: `lrn train --config CONFIG --out {self.path}`")
        return read_json_object(path, "run config")

    def config(self) -> RunConfig:
        """config.json as a checked RunConfig (parsed once while the file stays the same: lrngpt.core.once)."""
        return parsed(self.path / CONFIG, "run config", self._parse_config)

    def _parse_config(self, path: Path) -> RunConfig:
        d = self.config_dict()  # a missing or unreadable file names itself
        try:
            return from_dict(d)
        except UserError as e:
            raise UserError(f"{path}: {e.text}") from None

    def summary(self) -> dict | None:
        """summary.json, checked field by field, or None while the run has not finished an evaluation."""
        path = self.path / SUMMARY
        if not path.exists():
            return None
        return parsed(path, "run summary", lambda p: check_summary(read_json_object(p, "run summary"), p))

    def by_reads(self) -> dict | None:
        """What `lrn eval --by-reads` last measured on the last weights (by_reads.json), or None. A file
        that does not hold numbers where they belong is named, as summary.json is."""
        path = self.path / BY_READS
        if not path.exists():
            return None
        return check_fields(read_json_object(path, "by-reads result"), BY_READS_FIELDS, f"by-reads result {path}",
                            "delete it and run `lrn eval RUN --by-reads` again")

    def metrics(self) -> list[dict]:
        """The rows of metrics.jsonl, checked; only a last line that is not JSON (cut by a kill mid-write)
        is skipped, with a warning."""
        return parsed(self.path / METRICS, "run metrics", read_metrics_file)

    def checkpoint(self, which: str = "last", map_location: Any = "cpu") -> dict:
        return load_checkpoint(self._checkpoint_file(which), map_location)

    def _checkpoint_file(self, which: str) -> Path:
        path = self.checkpoint_path(which)
        if which == "best" and not path.exists():
            path = self.path / LAST  # no periodic evaluation yet: the last weights are the best known
        if not path.exists() and not path.is_symlink():
            self.check_is_run()
            raise UserError(f"{self.path} has no {path.name}; "
                            + ("it was stopped before its first checkpoint: start it again with "
                               f"`lrn train --config CONFIG --out {self.path}` (it replaces what is there)"
                               if which != "init" else "it has no step-0 weights (an imported model has none)"))
        return path

    def load(self, which: str = "last", device: str = "cpu") -> LoadedRun:
        path = self._checkpoint_file(which)
        ckpt = load_checkpoint(path, map_location=device)
        cfg = ckpt["run_config"]  # parsed and checked by load_checkpoint
        self._check_belongs(cfg, path)
        try:
            tok = Tokenizer.from_str(ckpt["tokenizer"])
        except UserError as e:
            raise UserError(f"checkpoint {path}: {e.text}") from None
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
        key = next((k for k in theirs if mine.get(k) != theirs[k]), None)
        if key is not None:
            raise UserError(f"{path} does not belong to the run in {self.path}: its "
                            f"{key.replace('model.model_type', 'model_type')} is "
                            f"{json.dumps(theirs[key])}, {CONFIG} says {json.dumps(mine.get(key))}; "
                            f"put the run's own checkpoint back, or train again with {option('force', True)}")

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


def read_metrics(run_dir: str | Path) -> list[dict]:
    return RunDir(run_dir).metrics()

