"""The start of a training job, everything before its model, in the order a refusal must come in:
nothing written or downloaded for a run past train.max_days, and a failed start leaves no run behind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lrngpt.core import log as logging
from lrngpt.core.validate import INT_LIMIT
from lrngpt.corpora.registry import fetch
from lrngpt.data.prepared import PreparedData, prepare
from lrngpt.device.distributed import Distributed, resolve_device
from lrngpt.device.precision import DeviceCaps, Precision, device_caps, emulation_warning, resolve_precision
from lrngpt.device.precision import describe as describe_precision
from lrngpt.errors import UserError, option
from lrngpt.runconfig.schema import RunConfig, validated, with_pad_id
from lrngpt.store.rundir import RunDir
from lrngpt.training import trackers as tracking
from lrngpt.training.duration import plan_duration
from lrngpt.training.resume import Resume, open_resume
from lrngpt.training.timing import check_fits


@dataclass
class Job:
    """What a Trainer trains on: a started job, its run directory held (rank 0 writes it)."""

    cfg: RunConfig  # validated, its pad_id from the data
    run: RunDir
    dist: Distributed
    device: str
    caps: DeviceCaps
    precision: Precision
    data: PreparedData
    token_bytes: np.ndarray  # the UTF-8 bytes of each of the model's token ids: bpb's unit
    stop_at: int  # the global step the job stops at
    log: Callable[[str], None]  # the job's lines: rank 0's only
    how_to_restart: str  # what a checkpoint too damaged to resume says to do
    resume: Resume | None = None  # the checkpoint the job continues from

    def close(self, abandon: bool = False) -> None:
        close_run(self.run, self.dist, abandon)


def close_run(run: RunDir, dist: Distributed, abandon: bool = False) -> None:
    if abandon:
        run.abandon()  # only a start this process made, before its first checkpoint
    run.unlock()
    dist.close()


def start_job(cfg: RunConfig, run_dir: Path, resume: bool = False, force: bool = False,
              stop_at: int | None = None, log=None, extend: bool = False,
              how_to_restart: str = "start again with --force", data: PreparedData | None = None) -> Job:
    """Start `cfg` in `run_dir` (or check its checkpoint can continue, with `resume`) and prepare its
    data; `stop_at`: --steps (None: train.steps); `data`: prepared already (a sweep's)."""
    cfg = validated(cfg)  # a field changed after the config was built is checked like --set
    tc = cfg.train
    dist = Distributed.from_env()
    log = (log or logging.info) if dist.master else (lambda msg: None)  # rank 0 says it for the job
    stop = tc.steps if stop_at is None else stop_at
    stop_flag = "--steps" if stop_at is not None else "train.steps"  # what a refusal names: what was given
    if stop < 1:
        raise UserError(f"{option('steps')} must be at least 1 (got {stop})")
    if stop >= INT_LIMIT:
        raise UserError(f"{option('steps', stop)} is out of range; a step count must fit in 64 bits")
    device = dist.device(resolve_device(tc.device))
    if not resume:  # a run estimated past train.max_days stops here: nothing written or downloaded
        plan_duration(cfg, stop, device, log=log, timed=not dist.enabled)
    if dist.master:
        fetch(cfg.data.corpus)  # no network: stop here, before the run directory is taken
        tracking.check(tc.loggers)  # a missing package, a tracker's setting it refuses: the same
    caps = device_caps(device)
    precision = resolve_precision(tc.dtype, caps, tc.tf32)
    dist.init(device)
    run = RunDir(run_dir)
    try:
        checkpoint = None
        if not resume:
            if dist.master:
                run.start(force)  # rank 0 takes the directory (one writer)
        else:
            checkpoint = open_resume(run, cfg, dist.master, device, precision, stop, stop_flag, extend,
                                     how_to_restart, data, log)
            plan_duration(cfg, stop - checkpoint.step, device, log=log, timed=not dist.enabled)
        # the run's first line, once the directory is taken and a resume's checks have passed
        log(describe_precision(precision, caps, tc.compile))
        if dist.master and (emulated := emulation_warning(precision, caps)) is not None:
            logging.warning_once(emulated)  # said once per process
        data = _prepare_data(cfg, data, dist, log)
        cfg = with_pad_id(cfg, data.tokenizer.eot_id)
        token_bytes = _token_bytes(cfg, data, log)
        check_fits(cfg, tc.batch_size, device, "this run")
    except BaseException:
        close_run(run, dist, abandon=True)  # a start that failed leaves no run behind to replace with --force
        raise
    return Job(cfg, run, dist, device, caps, precision, data, token_bytes, stop, log, how_to_restart, checkpoint)


def _prepare_data(cfg: RunConfig, given: PreparedData | None, dist: Distributed, log) -> PreparedData:
    # Rank 0 prepares the data first; then the first process on each other machine, which finds
    # it in a shared cache or fills its machine-local one; then the rest find it cached. So no
    # two processes ever write the same cache entry at once, with one machine or many.
    if given is not None and not dist.enabled:
        return given
    data = None
    for my_turn in (dist.master, dist.local_rank == 0, True):
        if my_turn and data is None:
            data = prepare(cfg.data, log=log)
        dist.barrier()
    assert data is not None  # every rank's last turn prepares it
    return data


def _token_bytes(cfg: RunConfig, data: PreparedData, log) -> np.ndarray:
    tok, vocab = data.tokenizer, cfg.data.vocab_size
    if tok.vocab_size < vocab:
        log(f"note: the tokenizer reached {tok.vocab_size} tokens (the corpus has no more merges); "
            f"the model keeps {vocab} rows, the extra ones are never used")
    # rows the tokenizer never reached carry no bytes, like special tokens
    return tok.token_bytes_for(vocab)
