"""Resuming a run: `open_resume` checks what the checkpoint alone can say before the data is prepared;
`check_restorable` and `restore_state` follow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import torch

from lrngpt.corpora.registry import load_corpus
from lrngpt.data.prepared import PreparedData, data_key
from lrngpt.data.sampler import BatchSampler
from lrngpt.device.precision import Precision, saved_dtype
from lrngpt.errors import UserError, option
from lrngpt.runconfig.schema import RunConfig
from lrngpt.store.rundir import RunDir
from lrngpt.training.optimizer import load_optimizer_state
from lrngpt.training.schedule import SCHEDULE_KEYS, schedule_change

# what a restore may raise on a damaged training state: the resume names it and says how to restart
DAMAGED = (RuntimeError, TypeError, ValueError, KeyError, IndexError, AttributeError)


@dataclass
class Resume:
    """The checkpoint a resume continues from, read once, and the schedule changes it carries on."""

    ckpt: dict
    path: Path  # ckpt_last.pt, or ckpt_init.pt for a run stopped before its first periodic checkpoint
    schedules: list[dict] = field(default_factory=list)  # the --extend changes: {"step", "change", "train"}
    extended: bool = False  # this resume changes the schedule (--extend)

    @property
    def saved(self) -> RunConfig:
        """The checkpoint's config, parsed once (load_checkpoint) for every check."""
        return self.ckpt["run_config"]

    @property
    def step(self) -> int:
        return int(self.ckpt["step"])


@dataclass
class State:
    """Where a run stands between steps: what a checkpoint holds besides the weights and the RNGs."""

    step: int = 0
    best_val: float = float("inf")
    best_step: int = 0
    seconds: float = 0.0


def open_resume(run: RunDir, cfg: RunConfig, master: bool, device: str, precision: Precision, stop_at: int,
                stop_flag: str, extend: bool, how_to_restart: str, given_data: PreparedData | None,
                log) -> Resume:
    """Rank 0 locks the run; every rank reads the checkpoint to continue and checks it fits."""
    if master:
        run.check_is_run()
        run.lock()
        run.metrics()  # read (and checked) now: a damaged metrics.jsonl stops the resume before any work
    # a run stopped before its first periodic checkpoint continues from its step-0 one
    which = "last" if run.has_checkpoint("last") or not run.has_checkpoint("init") else "init"
    resume = Resume(run.checkpoint(which), run.checkpoint_path(which))
    check_resumable(resume, run, cfg, device, precision, how_to_restart)
    change = schedule_change(resume.saved.train, cfg.train, resume.step)
    if change and not extend:  # a new train.steps (or warmup, lr, min_lr) silently restarts the cosine
        raise UserError(f"resuming {run.path}: {change}; pass {option('extend', True)} to continue with the new "
                        "schedule (recorded in the run), or resume with the run's own settings")
    resume.schedules = [dict(s) for s in resume.ckpt.get("schedules") or [] if isinstance(s, dict)]
    resume.extended = bool(change)
    if change:
        resume.schedules.append({"step": resume.step, "change": change,
                                 "train": {k: getattr(cfg.train, k) for k in SCHEDULE_KEYS}})
        log(f"--extend: {change}")
    check_stop_at(stop_at, stop_flag, resume.step)
    check_same_data(resume, cfg, given_data)
    return resume


def check_resumable(resume: Resume, run: RunDir, cfg: RunConfig, device: str, precision: Precision,
                    how_to_restart: str) -> None:
    """What a resume needs from the checkpoint, checked before any work (data, model)."""
    ckpt, saved = resume.ckpt, resume.saved
    check_same_model(saved, cfg, ignore=("pad_id",))  # pad_id: from the data, later
    if not ckpt.get("optimizer") or not ckpt.get("rng"):
        raise UserError(f"{run.path} was not trained here (an import has no optimizer state), so it "
                        "cannot be resumed; evaluate, sample or export it as it is")
    was = saved_dtype(ckpt)
    if was is None:
        raise UserError(f"{resume.path} cannot be resumed: it does not record the precision its steps computed in, "
                        f"which an exact resume must match; {how_to_restart}")
    if was != precision.dtype:
        raise UserError(f"this run trained in {was} and would resume in {precision.dtype} "
                        f"(train.dtype={cfg.train.dtype} on {device}), which breaks the exact resume; "
                        f"resume with --set train.dtype={was}, or start a new run in another {option('out')}")
    opt, rng = ckpt["optimizer"], ckpt["rng"]
    if not (isinstance(opt.get("state"), dict) and isinstance(opt.get("param_groups"), list)
            and isinstance(rng.get("torch"), torch.Tensor) and isinstance(rng.get("sampler"), torch.Tensor)):
        raise UserError(f"{resume.path} cannot be resumed: its optimizer or random state is damaged; "
                        f"{how_to_restart}")


def check_stop_at(stop_at: int, stop_flag: str, step: int) -> None:
    """The step to stop at is the final global step: never one before the checkpoint's."""
    if stop_at >= step:
        return
    if stop_flag == "--steps":
        raise UserError(f"{option('steps', stop_at)} is below the checkpoint's step {step}; "
                        f"{option('steps')} is the final global step, use {step} or more")
    raise UserError(f"train.steps={stop_at} ends before the checkpoint's step {step}, where the "
                    f"resumed run goes on; give --set train.steps={step} or more (with {option('extend', True)}: the "
                    "new schedule's total steps)")


def check_same_data(resume: Resume, cfg: RunConfig, given_data: PreparedData | None) -> None:
    """A changed corpus is refused before anything is prepared, trained or cut from metrics.jsonl."""
    saved = resume.saved
    # data given by the caller (a sweep's, or a planted split with a key of its own) is what it started on
    want = given_data.key if given_data is not None else data_key(load_corpus(cfg.data.corpus), cfg.data)
    if resume.ckpt.get("data_key") == want:
        return
    what = (f"data.corpus was {saved.data.corpus}, now {cfg.data.corpus}" if saved.data.corpus !=
            cfg.data.corpus else f"the content of {cfg.data.corpus} changed: its files are not the ones "
                                 "it was trained on")
    raise UserError(f"the training data changed since this run started ({what}); resume with the same "
                    f"data, or start a new run in another {option('out')}")


def check_same_model(saved: RunConfig, cfg: RunConfig, ignore: tuple[str, ...] = ()) -> None:
    was = saved.model_dict()
    changed = sorted(k for k, v in cfg.model_dict().items() if k not in ignore and was.get(k) != v)
    if changed:
        raise UserError(f"the model config changed since this run started ({', '.join(changed)}); "
                        f"resume with the same model, or start a new run in another {option('out')}")


def check_restorable(resume: Resume, cfg: RunConfig, data: PreparedData) -> None:
    """The prepared tokenizer and the full model config (pad_id from the data) match the checkpoint's
    (the data itself was checked before it was prepared: check_same_data)."""
    if resume.ckpt.get("tokenizer_hash") != data.tokenizer.hash:
        raise UserError("the tokenizer changed since this run started; resume with the same data settings")
    check_same_model(resume.saved, cfg)


def restore_state(resume: Resume, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                  scaler: torch.amp.GradScaler | None, sampler: BatchSampler, how_to_restart: str) -> State:
    """The weights, the optimizer, the loss scale and every RNG as the checkpoint left them: on CPU the
    resumed run goes on bit for bit as the straight one would."""
    ckpt = resume.ckpt
    try:
        model.load_state_dict(ckpt["model"])
        load_optimizer_state(optimizer, ckpt["optimizer"])
        if scaler is not None and isinstance(ckpt.get("scaler"), dict):
            scaler.load_state_dict(ckpt["scaler"])  # the loss scale where the run stopped
        sampler.set_state(ckpt["rng"]["sampler"])
        torch.set_rng_state(ckpt["rng"]["torch"])
        if torch.cuda.is_available() and ckpt["rng"].get("cuda"):
            torch.cuda.set_rng_state_all(ckpt["rng"]["cuda"])
        return State(step=resume.step, best_val=float(ckpt.get("best_val", float("inf"))),
                     best_step=int(ckpt.get("best_step", 0)), seconds=float(ckpt.get("seconds", 0.0)))
    except DAMAGED as e:
        raise UserError(f"{resume.path} cannot be resumed: its training state is "
                        f"damaged ({type(e).__name__}: {str(e).splitlines()[0][:80]}); "
                        f"{how_to_restart}") from None
