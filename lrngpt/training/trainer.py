"""Training: AdamW, warmup + cosine, clipping, periodic evaluations, exact resume.

`train_run(cfg, run_dir)` runs one job from step 0, or from ckpt_last.pt with `resume=True`.
Everything random is seeded from `train.seed`: the model init, the batch sampler's own
generator, dropout (the global torch RNG); all of them are saved in every checkpoint, so a
run that is stopped and resumed on CPU ends bit-for-bit where a straight run would.
`train.steps` fixes the learning-rate schedule; `stop_at` (the CLI's --steps) is the global
step to stop at, so a run can be cut into pieces without changing what it computes.
"""

from __future__ import annotations

import math
import signal
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from lrngpt.core import log as logging
from lrngpt.core.validate import INT_LIMIT, check_memory, training_memory
from lrngpt.corpora.registry import fetch, load_corpus
from lrngpt.data.prepared import PreparedData, data_key, prepare
from lrngpt.data.sampler import BatchSampler
from lrngpt.data.sizing import MEMORISING_PASSES, sizing
from lrngpt.data.splits import validation_kind
from lrngpt.device.distributed import Distributed, resolve_device
from lrngpt.device.precision import (
    apply_tf32,
    bf16_hardware,
    device_caps,
    grad_scaler,
    resolve_precision,
    saved_dtype,
    warn_if_emulated,
)
from lrngpt.device.precision import describe as describe_precision
from lrngpt.errors import UserError
from lrngpt.inference.evaluate import capped_windows, evaluate_bpb
from lrngpt.models.build import build_model, param_breakdown
from lrngpt.runconfig.schema import RunConfig, validated, with_pad_id
from lrngpt.store.checkpoint import make_payload
from lrngpt.store.rundir import RunDir
from lrngpt.training import trackers as tracking
from lrngpt.training.duration import plan_duration
from lrngpt.training.optimizer import load_optimizer_state, make_optimizer
from lrngpt.training.schedule import SCHEDULE_KEYS, lr_at, schedule_change


class _StopFlag:
    """Ctrl-C (SIGINT) or SIGTERM sets a flag; the loop saves between steps and stops."""

    def __init__(self):
        self.signal = None

    def __enter__(self):
        self._old = {s: signal.signal(s, self._handle) for s in (signal.SIGINT, signal.SIGTERM)}
        return self

    def _handle(self, signum, frame):
        if self.signal is not None:  # a second Ctrl-C: stop now
            raise KeyboardInterrupt
        self.signal = signum

    def __exit__(self, *exc):
        for s, old in self._old.items():
            signal.signal(s, old)


class Trainer:
    """One training job. Construction reads top to bottom as the job starts: processes, run
    directory, data, model, optimizer, batches, resume; `run()` is the loop."""

    def __init__(self, cfg: RunConfig, run_dir: Path, resume: bool = False, force: bool = False,
                 stop_at: int | None = None, log=None, progress: bool | None = None, warn_passes: bool = True,
                 extend: bool = False, how_to_continue: str | None = None, how_to_restart: str | None = None,
                 on_metric: Callable[[dict], None] | None = None, data: PreparedData | None = None,
                 hparams: dict | None = None):
        cfg = validated(cfg)  # a field changed after the config was built is checked like --set
        self.given_data = data  # prepared already (a sweep prepares each data configuration once)
        tc = cfg.train
        self.cfg, self.resume, self.warn_passes, self.extend = cfg, resume, warn_passes, extend
        self.on_metric = on_metric
        self.schedules: list[dict] = []  # the schedule changes --extend made: {"step", "change", "train"}
        self.extended = False  # this resume changes the schedule (--extend)
        # what an interrupted run says to do next: a sweep's points are continued by the sweep command
        self.how_to_continue = how_to_continue or f"continue with `lrn train --out {run_dir} --resume`"
        self.how_to_restart = how_to_restart or "start again with --force"  # a damaged checkpoint (a sweep: its own way)
        self.hparams = hparams  # a sweep point's swept keys, for the trackers
        self.dist = Distributed.from_env()
        self.log = (log or logging.info) if self.dist.master else (lambda msg: None)
        self.progress = logging.interactive() if progress is None else progress
        self.stop_at = tc.steps if stop_at is None else stop_at
        self.stop_flag = "--steps" if stop_at is not None else "train.steps"  # what a refusal names: what was given
        if self.stop_at < 1:
            raise UserError(f"--steps must be at least 1 (got {self.stop_at})")
        if self.stop_at >= INT_LIMIT:
            raise UserError(f"--steps {self.stop_at} is out of range; a step count must fit in 64 bits")
        self.device = self.dist.device(resolve_device(tc.device))
        if not resume:  # a run estimated past train.max_days stops here: nothing written or downloaded
            self._plan(0)
        if self.dist.master:
            fetch(cfg.data.corpus)  # no network: stop here, before the run directory is taken
            tracking.check(tc.loggers)  # a missing package, a tracker's setting it refuses: the same
        self.caps = device_caps(self.device)
        self.precision = resolve_precision(tc.dtype, self.caps, tc.tf32)
        self.dist.init(self.device)
        self.run_dir = RunDir(run_dir)
        try:
            ckpt = self._open_run_dir(resume, force)
            if resume:
                self._plan(int(ckpt["step"]))
            self._build(ckpt)
        except BaseException:
            self.close(abandon=True)  # a start that failed leaves no run behind to replace with --force
            raise

    def _plan(self, step: int) -> None:
        """Time a run that could be long and say how long; refuse one past train.max_days."""
        plan_duration(self.cfg, self.stop_at - step, self.device, log=self.log, timed=not self.dist.enabled)

    def _build(self, ckpt: dict | None) -> None:
        tc = self.cfg.train
        # the run's first line, once the directory is taken and a resume's checks have passed
        self.log(describe_precision(self.precision, self.caps, tc.compile))
        if self.dist.master:
            warn_if_emulated(self.precision, self.caps)
        self.data = self._prepare_data()
        self.cfg = with_pad_id(self.cfg, self.data.tokenizer.eot_id)
        self.token_bytes = self._token_bytes()
        self._check_memory()
        torch.manual_seed(tc.seed)
        self.model = build_model(self.cfg.model_type, self.cfg.model).to(self.device)
        self.optimizer = make_optimizer(self.model, tc)
        apply_tf32(self.precision, self.device)
        self.autocast_dtype = self.precision.autocast_dtype
        self.scaler = grad_scaler(self.precision, self.device)  # float16 only
        self.sampler = BatchSampler(self.data.tokens("train"), tc.batch_size, tc.seq_len, tc.seed,
                                    self.dist.rank, self.dist.world_size)
        self.step, self.best_val, self.best_step, self.seconds = 0, float("inf"), 0, 0.0
        if ckpt is not None:
            self._restore(ckpt)
            self._truncate_metrics(self.step)  # only once every check of the resume has passed
        # what metrics.jsonl holds up to the checkpoint: what the trackers may lack, what was evaluated there
        self.resumed_rows = self.run_dir.metrics() if ckpt is not None and self.dist.master else []
        self.ddp_model = self.dist.wrap(self.model, self.device)
        self.fwd_model = torch.compile(self.ddp_model) if tc.compile else self.ddp_model
        logging.debug(f"training: seed {tc.seed}, {tc.batch_size} x {tc.seq_len} tokens per step on rank "
                      f"{self.dist.rank} of {self.dist.world_size}, steps {self.step} -> {self.stop_at}, "
                      f"data {self.data.dir}, compile {tc.compile}")
        self.trackers = tracking.Trackers()  # none until run() has a checkpoint to resume from (_start_trackers)

    # ---- construction steps --------------------------------------------------------------

    def _open_run_dir(self, resume: bool, force: bool) -> dict | None:
        """Rank 0 takes the directory (one writer); a resume reads the checkpoint to continue."""
        run = self.run_dir
        if not resume:
            if self.dist.master:
                run.start(force)
            return None
        if self.dist.master:
            run.check_is_run()
            run.lock()
            run.metrics()  # read (and checked) now: a damaged metrics.jsonl stops the resume before any work
        # a run stopped before its first periodic checkpoint continues from its step-0 one
        self.resumed_from = "last" if run.has_checkpoint("last") or not run.has_checkpoint("init") else "init"
        ckpt = run.checkpoint(self.resumed_from)
        self.saved_cfg = ckpt["run_config"]  # the checkpoint's config, parsed once (load_checkpoint) for every check
        self._check_resumable(ckpt)
        if self.stop_at < ckpt["step"]:
            if self.stop_flag == "--steps":
                raise UserError(f"--steps {self.stop_at} is below the checkpoint's step {ckpt['step']}; "
                                f"--steps is the final global step, use {ckpt['step']} or more")
            raise UserError(f"train.steps={self.stop_at} ends before the checkpoint's step {ckpt['step']}, where the "
                            f"resumed run goes on; give --set train.steps={ckpt['step']} or more (with --extend: the "
                            "new schedule's total steps)")
        self._check_same_data(ckpt)
        return ckpt

    def _check_same_data(self, ckpt: dict) -> None:
        """A changed corpus is refused before anything is prepared, trained or cut from metrics.jsonl."""
        saved = self.saved_cfg
        # data given by the caller (a sweep's, or a planted split with a key of its own) is what it started on
        want = self.given_data.key if self.given_data is not None else data_key(load_corpus(self.cfg.data.corpus),
                                                                                  self.cfg.data)
        if ckpt.get("data_key") == want:
            return
        what = (f"data.corpus was {saved.data.corpus}, now {self.cfg.data.corpus}" if saved.data.corpus !=
                self.cfg.data.corpus else f"the content of {self.cfg.data.corpus} changed: its files are not the ones "
                                          "it was trained on")
        raise UserError(f"the training data changed since this run started ({what}); resume with the same "
                        "data, or start a new run in another --out")

    def _truncate_metrics(self, step: int) -> None:
        if self.dist.master:
            dropped = self.run_dir.truncate_metrics(step)  # rows past the checkpoint are redone
            if dropped:
                self.log(f"metrics: dropped {dropped} rows after step {step} (they are computed again)")

    def _check_resumable(self, ckpt: dict) -> None:
        """What a resume needs from the checkpoint, checked before any work (data, model)."""
        path = self.run_dir.checkpoint_path(self.resumed_from)
        saved = self.saved_cfg
        _check_same_model(saved, self.cfg, ignore=("pad_id",))  # pad_id: from the data, later
        if not ckpt.get("optimizer") or not ckpt.get("rng"):
            raise UserError(f"{self.run_dir.path} was not trained here (an import has no optimizer state), so it "
                            "cannot be resumed; evaluate, sample or export it as it is")
        was = saved_dtype(ckpt, self.device)
        if was is not None and was != self.precision.dtype:
            raise UserError(f"this run trained in {was} and would resume in {self.precision.dtype} "
                            f"(train.dtype={self.cfg.train.dtype} on {self.device}), which breaks the exact resume; "
                            f"resume with --set train.dtype={was}, or start a new run in another --out")
        opt, rng = ckpt["optimizer"], ckpt["rng"]
        if not (isinstance(opt.get("state"), dict) and isinstance(opt.get("param_groups"), list)
                and isinstance(rng.get("torch"), torch.Tensor) and isinstance(rng.get("sampler"), torch.Tensor)):
            raise UserError(f"{path} cannot be resumed: its optimizer or random state is damaged; "
                            f"{self.how_to_restart}")
        # a new train.steps (or warmup, lr, min_lr) silently restarts the cosine: refuse unless asked
        change = schedule_change(saved.train, self.cfg.train, int(ckpt["step"]))
        if change and not self.extend:
            raise UserError(f"resuming {self.run_dir.path}: {change}; pass --extend to continue with the new "
                            "schedule (recorded in the run), or resume with the run's own settings")
        self.schedules = [dict(s) for s in ckpt.get("schedules") or [] if isinstance(s, dict)]
        self.extended = bool(change)
        if change:
            self.schedules.append({"step": int(ckpt["step"]), "change": change,
                                   "train": {k: getattr(self.cfg.train, k) for k in SCHEDULE_KEYS}})
            self.log(f"--extend: {change}")

    def _prepare_data(self) -> PreparedData:
        # Rank 0 prepares the data first; then the first process on each other machine, which finds
        # it in a shared cache or fills its machine-local one; then the rest find it cached. So no
        # two processes ever write the same cache entry at once, with one machine or many.
        if self.given_data is not None and not self.dist.enabled:
            return self.given_data
        data = None
        for my_turn in (self.dist.master, self.dist.local_rank == 0, True):
            if my_turn and data is None:
                data = prepare(self.cfg.data, log=self.log)
            self.dist.barrier()
        return data

    def _token_bytes(self) -> np.ndarray:
        tok, vocab = self.data.tokenizer, self.cfg.data.vocab_size
        if tok.vocab_size < vocab:
            self.log(f"note: the tokenizer reached {tok.vocab_size} tokens (the corpus has no more merges); "
                     f"the model keeps {vocab} rows, the extra ones are never used")
        # rows the tokenizer never reached carry no bytes, like special tokens
        return tok.token_bytes_for(vocab)

    def _check_memory(self) -> None:
        """Refuse a run whose weights, gradients, AdamW moments and one batch of logits cannot fit."""

        tc, params = self.cfg.train, param_breakdown(self.cfg.model_type, self.cfg.model)["total"]
        check_memory(training_memory(params, tc.batch_size, tc.seq_len, self.cfg.data.vocab_size), f"this run ({params:,} parameters, {tc.batch_size} x {tc.seq_len} x "
                     f"{self.cfg.data.vocab_size} logits per step)", "lower train.batch_size, train.seq_len or the "
                     "model's size", self.device)

    def _restore(self, ckpt: dict) -> None:
        saved = self.saved_cfg
        if ckpt.get("data_key") != self.data.key or saved.data.corpus != self.cfg.data.corpus:
            what = (f"({saved.data.corpus} -> {self.cfg.data.corpus})" if saved.data.corpus != self.cfg.data.corpus
                    else f"(the content of {self.cfg.data.corpus} changed: its files are not the ones it was "
                         "trained on)")
            raise UserError(f"the corpus or its tokenization changed since this run started {what}; resume with "
                            "the same data, or start a new run in another --out")
        if ckpt.get("tokenizer_hash") != self.data.tokenizer.hash:
            raise UserError("the tokenizer changed since this run started; resume with the same data settings")
        _check_same_model(saved, self.cfg)
        try:
            self.model.load_state_dict(ckpt["model"])
            load_optimizer_state(self.optimizer, ckpt["optimizer"])
            if self.scaler is not None and isinstance(ckpt.get("scaler"), dict):
                self.scaler.load_state_dict(ckpt["scaler"])  # the loss scale where the run stopped
            self.sampler.set_state(ckpt["rng"]["sampler"])
            torch.set_rng_state(ckpt["rng"]["torch"])
            if torch.cuda.is_available() and ckpt["rng"].get("cuda"):
                torch.cuda.set_rng_state_all(ckpt["rng"]["cuda"])
            self.step = int(ckpt["step"])
            self.best_val = float(ckpt.get("best_val", float("inf")))
            self.best_step = int(ckpt.get("best_step", 0))
            self.seconds = float(ckpt.get("seconds", 0.0))
        except (RuntimeError, TypeError, ValueError, KeyError, IndexError, AttributeError) as e:
            raise UserError(f"{self.run_dir.checkpoint_path(self.resumed_from)} cannot be resumed: its training state is "
                            f"damaged ({type(e).__name__}: {str(e).splitlines()[0][:80]}); "
                            f"{self.how_to_restart}") from None
        self.log(f"resumed from {self.run_dir.checkpoint_path(self.resumed_from)} at step {self.step}")

    # ---- writing -------------------------------------------------------------------------

    def _payload(self) -> dict:
        rng = {"torch": torch.get_rng_state(), "sampler": self.sampler.state(),
               "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []}
        return make_payload(self.model.state_dict(), self.cfg.to_dict(), self.data.tokenizer, self.step,
                            source="lrn train", data_key=self.data.key, optimizer=self.optimizer.state_dict(),
                            rng=rng, best_val=self.best_val, best_step=self.best_step, seconds=self.seconds,
                            schedules=self.schedules,
                            precision=self.precision.to_dict(),
                            scaler=self.scaler.state_dict() if self.scaler is not None else None)

    def save(self, which: str = "last") -> None:
        if self.dist.master:
            self.trackers.flush()  # what the trackers hold reaches the disk before the step a resume restarts from
            self.run_dir.save_checkpoint(self._payload(), which)

    def metric(self, row: dict) -> None:
        if not self.dist.master:
            return
        self.run_dir.append_metric(row)
        if self.on_metric is not None:  # the Python API's callback: the row as metrics.jsonl has it
            self.on_metric(dict(row))
        self.trackers.log(row)

    # ---- the loop ------------------------------------------------------------------------

    @property
    def tokens_per_step(self) -> int:
        return self.cfg.train.tokens_per_step

    def evaluate(self, split: str = "val", max_tokens: int | None = None) -> dict:
        tokens = self.data.tokens(split)
        return evaluate_bpb(self.model, tokens, self.token_bytes, self.cfg.train.seq_len,
                            batch_size=self.cfg.train.batch_size, max_tokens=max_tokens,
                            device=self.device, autocast_dtype=self.autocast_dtype,
                            windows=self.cfg.train.eval_windows)

    def train_step(self) -> tuple[float, float]:
        """One optimizer step; returns the global batch's loss (nats/token) and bits per byte."""
        tc = self.cfg.train
        lr = lr_at(self.step, tc)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        x, y = self.sampler.next()
        n_bytes = float(self.token_bytes[y.numpy()].sum())
        if self.device.startswith("cuda"):  # pinned pages let the copy overlap the GPU's work
            x, y = x.pin_memory(), y.pin_memory()
        x, y = x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
        with torch.autocast(device_type=torch.device(self.device).type, dtype=self.autocast_dtype,
                            enabled=self.autocast_dtype is not None):
            _, loss = self.fwd_model(x, y)
        global_loss = self.dist.mean(loss.detach())
        if not torch.isfinite(global_loss):
            raise UserError(f"the loss became {global_loss.item()} at step {self.step + 1}; stopped, and the last good "
                            f"checkpoint stays. Lower train.lr (now {tc.lr}) or set train.grad_clip")
        self.optimizer.zero_grad(set_to_none=True)
        if self.scaler is None:
            loss.backward()
            if tc.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), tc.grad_clip)
            self.optimizer.step()
        else:  # float16: scaled loss; gradients unscaled before clipping; an overflowing step is skipped
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            if tc.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), tc.grad_clip)
            self.scaler.step(self.optimizer)
            self.scaler.update()
        self.step += 1
        value = global_loss.item()
        # the batch's own bytes: the same unit as val bpb (the few <|endoftext|> targets' loss included)
        bpb = value * y.numel() / (math.log(2) * n_bytes) if n_bytes else float("nan")
        return value, bpb

    def run(self) -> dict:
        tc = self.cfg.train
        if self.dist.master and not self.resume:
            self.run_dir.write_config(self.cfg)
            self.run_dir.write_tokenizer(self.data.tokenizer)
        elif self.dist.master and self.extended:
            self.run_dir.write_config(self.cfg)  # --extend: config.json says the schedule the run now follows
        self._log_plan()
        if self.step == 0 and not self.resume:
            self.save("init")
        self._start_trackers()
        if self.step == 0 and not self._evaluated_already():
            ev = self.evaluate("val", tc.eval_tokens)
            self.metric({"step": 0, "val_bpb": ev["bpb"], "val_loss": ev["loss"]})
            self.log(f"step 0: val bpb {ev['bpb']:.4f} (untrained; periodic estimate on {ev['tokens']:,} tokens)")
        bar = logging.progress(total=self.stop_at, initial=self.step, unit="step",
                               enabled=self.progress and self.dist.master)
        s_last, n_last, wall0, step0 = self.seconds, self.step, time.perf_counter(), self.step
        with _StopFlag() as stop, bar:
            while self.step < self.stop_at:
                t0 = time.perf_counter()
                loss, bpb = self.train_step()
                self.seconds += time.perf_counter() - t0
                bar.update(1)
                if self.step % tc.log_every == 0 or self.step == self.stop_at:
                    # training time only: evals and saves between logs do not count
                    tps = (self.step - n_last) * self.tokens_per_step / max(self.seconds - s_last, 1e-9)
                    s_last, n_last = self.seconds, self.step
                    lr = lr_at(self.step - 1, tc)
                    self.metric({"step": self.step, "loss": loss, "train_bpb": bpb, "lr": lr,
                                 "tokens_per_s": round(tps, 1)})
                    elapsed = time.perf_counter() - wall0
                    eta = elapsed / max(1, self.step - step0) * (self.stop_at - self.step)
                    # drawn with the next redraw (refresh=False): a forced one per log line would outpace a
                    # notebook's bounded redraws
                    bar.set_postfix_str(f"loss {loss:.4f} | {bpb:.4f} bpb | lr {lr:.2e} | {tps:,.0f} tok/s",
                                        refresh=False)
                    if bar.disable:  # a log file or a scheduler: nanoGPT-style lines instead of a bar
                        self.log(f"step {self.step}/{self.stop_at} | loss {loss:.4f} ({bpb:.4f} bpb) | lr {lr:.2e} "
                                 f"| {tps:,.0f} tok/s | {_clock(elapsed)} elapsed, ETA {_clock(eta)}")
                if self.step % tc.eval_every == 0 and self.step < self.stop_at:
                    self._periodic_eval()
                elif tc.save_every and self.step % tc.save_every == 0:
                    self.save()
                if stop.signal is not None:
                    self.save()
                    self.log(f"interrupted at step {self.step}; saved {self.run_dir.checkpoint_path('last')}; "
                             f"{self.how_to_continue}")
                    raise KeyboardInterrupt
        if not self._evaluated_already():  # (a resume at the last step: its evaluation was done and saved)
            self._periodic_eval()
        summary = self.finish()
        self.trackers.close(finished=self.step)
        return summary

    def _start_trackers(self) -> None:
        """The trackers of train.logger, once the run has a checkpoint: a start killed before it leaves
        no tracker run behind, and one killed after it resumes them (a resume sends each what it lacks
        of metrics.jsonl, cut back to the checkpoint already)."""
        if not self.dist.master or not self.cfg.train.loggers:
            return
        try:
            self.trackers = tracking.Trackers(
                self.cfg.train.loggers, self.run_dir.path, self.cfg.to_dict(),
                resume_step=self.step if self.resume else None, hparams=self.hparams,
                name=self.cfg.name or self.run_dir.path.name, rows=self.resumed_rows)
        except BaseException:
            self.run_dir.abandon()  # a new run whose trackers did not start: no run is left to replace
            raise

    def _log_plan(self) -> None:
        """What the run will read, and a warning when it reads its text many times over."""
        tc = self.cfg.train
        n_train = len(self.data.tokens("train"))
        size = sizing(tc.steps, self.tokens_per_step, n_train)
        total, passes = size["tokens_read"], size["passes"]
        params = self.model.param_breakdown()
        self.log(f"model {self.cfg.model_type}: {params['total']:,} parameters "
                 + ", ".join(f"{k} {v:,}" for k, v in params.items() if k != "total"))
        self.log(f"data: {n_train:,} training tokens; {tc.steps:,} steps x {tc.batch_size} x {tc.seq_len} "
                 f"read {total:,} tokens = {passes:.2f} passes over the training text")
        if passes > MEMORISING_PASSES and self.warn_passes:
            fit = size["one_pass_steps"]
            self.log(f"warning: {passes:.1f} passes over {n_train:,} training tokens; past about "
                     f"{MEMORISING_PASSES:.0f} the model memorises its text and val bpb can get worse "
                     f"(one pass is --set train.steps={fit:,}; the best periodic val bpb is kept in ckpt_best.pt)")

    def _evaluated_already(self) -> bool:
        """A resume at the step of its checkpoint finds that step's evaluation in metrics.jsonl: not again."""
        return any(r["step"] == self.step and "val_bpb" in r and not r.get("final") for r in self.resumed_rows)

    def _periodic_eval(self) -> None:
        ev = self.evaluate("val", self.cfg.train.eval_tokens)
        self.metric({"step": self.step, "val_bpb": ev["bpb"], "val_loss": ev["loss"]})
        where = "from the start of" if self.cfg.train.eval_windows == "prefix" else "spread over"
        self.log(f"step {self.step}: val bpb {ev['bpb']:.4f} (periodic estimate on {ev['tokens']:,} tokens {where} "
                 "the split)")
        if ev["bpb"] < self.best_val:
            self.best_val, self.best_step = ev["bpb"], self.step
            self.save("best")
        self.save()

    def finish(self) -> dict:
        """Full evaluation at the final step, written to summary.json."""
        tc = self.cfg.train
        val = self.evaluate("val")
        trn, reads = self._evaluate_train_by_reads() if tc.train_eval_tokens else (None, {})
        n_train = len(self.data.tokens("train"))
        read = self.step * self.tokens_per_step
        summary = {
            "step": self.step,
            "finished": self.step >= tc.steps,
            "val_bpb": val["bpb"], "val_loss": val["loss"], "val_tokens": val["tokens"], "val_bytes": val["bytes"],
            "train_bpb": trn["bpb"] if trn else None,
            "train_tokens": trn["tokens"] if trn else 0,
            "gap": (val["bpb"] - trn["bpb"]) if trn else None,  # val - train, the chapter's sign
            "params": self.model.param_breakdown(),
            "seconds": round(self.seconds, 2),
            "tokens_seen": read,
            # how many times the training tokens were read: the chapter's finding assumes < 1
            "train_split_tokens": n_train,
            "passes": sizing(self.step, self.tokens_per_step, n_train)["passes"],
            "best_val_bpb": self.best_val if math.isfinite(self.best_val) else None,
            "best_step": self.best_step,
            "device": self.device,
            **self._precision_summary(),
            "corpus": self.cfg.data.corpus,
            "data_key": self.data.key,
            "schedule_changes": self.schedules,  # what --extend changed, at which step
            # which part of the corpus is validation (documents, tail, chunks, own split), and the train
            # bpb split into the targets this run read and those it never read: what `lrn eval --by-reads`
            # measures, for the findings judge to tell memorising from a harder validation text
            "val_split": validation_kind(self.data.meta),
            **reads,
        }
        if self.dist.master:
            # the final row first: a kill before summary.json is written leaves a run that resumes (and
            # cuts the row), never a finished one that lacks it
            self.metric({"step": self.step, "final": True, "val_bpb": val["bpb"], "train_bpb": summary["train_bpb"]})
            self.run_dir.write_summary(summary)
        self.log(f"step {self.step}: val bpb {val['bpb']:.4f} on the full validation split ({val['tokens']:,} tokens)"
                 + (f", train bpb {trn['bpb']:.4f} (gap {summary['gap']:+.4f})" if trn else "")
                 + f", {summary['passes']:.2f} passes, {self.seconds:.1f}s")
        return summary

    def _evaluate_train_by_reads(self) -> tuple[dict, dict]:
        """Train bpb over train.train_eval_tokens, and the same targets split by whether this run's
        batches (replayed from its seed) read them: the same forward passes, marked."""
        tc = self.cfg.train
        tokens = self.data.tokens("train")
        counter = BatchSampler(tokens, tc.batch_size, tc.seq_len, tc.seed).read_counter(self.step)
        trn = evaluate_bpb(self.model, tokens, self.token_bytes, tc.seq_len, batch_size=tc.batch_size,
                           max_tokens=tc.train_eval_tokens, device=self.device, autocast_dtype=self.autocast_dtype,
                           windows=tc.eval_windows, mark=lambda pos: counter(pos) > 0)
        scored = capped_windows(len(tokens), tc.seq_len, tc.train_eval_tokens, tc.eval_windows)
        counts = counter(np.concatenate([np.arange(s + 1, s + n + 1) for s, n in scored]))
        return trn, {"train_bpb_read": trn["marked"]["bpb"], "train_bpb_unread": trn["unmarked"]["bpb"],
                     "train_tokens_read": trn["marked"]["tokens"], "train_tokens_unread": trn["unmarked"]["tokens"],
                     "read_share": float((counts > 0).mean()), "read_twice_share": float((counts > 1).mean())}

    def _precision_summary(self) -> dict:
        """What the run computed in, as summary.json records it."""
        caps = self.caps
        return {"device_name": caps.name, "capability": list(caps.capability) if caps.capability else None,
                "dtype": self.precision.dtype, "dtype_requested": self.precision.requested,
                "grad_scaler": self.precision.grad_scaler, "tf32": self.precision.tf32,
                "bf16_hardware": bf16_hardware(self.precision, caps), "compile": bool(self.cfg.train.compile)}

    def close(self, abandon: bool = False) -> None:
        if getattr(self, "trackers", None) is not None:
            self.trackers.close(failed=True)  # a no-op after run() closed them; else the run stopped early
        if abandon:
            self.run_dir.abandon()  # only a start this process made, before its first checkpoint
        self.run_dir.unlock()
        self.dist.close()


def _check_same_model(saved: RunConfig, cfg: RunConfig, ignore: tuple[str, ...] = ()) -> None:
    a = {k: v for k, v in saved.model_dict().items() if k not in ignore}
    b = {k: v for k, v in cfg.model_dict().items() if k not in ignore}
    if a != b:
        changed = sorted(k for k in b if a.get(k) != b[k])
        raise UserError(f"the model config changed since this run started ({', '.join(changed)}); "
                        "resume with the same model, or start a new run in another --out")


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60}:{seconds % 60:02d}"


@logging.honours_progress
def train_run(cfg: RunConfig, run_dir: str | Path, resume: bool = False, force: bool = False,
          stop_at: int | None = None, log=None, progress: bool | None = None, warn_passes: bool = True,
          extend: bool = False, how_to_continue: str | None = None, how_to_restart: str | None = None,
          on_metric: Callable[[dict], None] | None = None, data: PreparedData | None = None,
          hparams: dict | None = None) -> dict:
    """Train `cfg` into `run_dir` (or continue it with resume); returns the summary.

    `cfg` is checked again first (`config.validated`, in the Trainer). A resume whose train.steps, warmup_steps, lr
    or min_lr differ from the checkpoint's is refused (the schedule would jump) unless `extend`: then
    it follows the new schedule from the checkpoint's step, and config.json, the checkpoints and
    summary.json's schedule_changes record it. `warn_passes=False` leaves out the run's own warning
    about reading its text many times (a sweep that warns once for all its points); `how_to_continue`
    replaces the advice of an interrupted run (`lrn train --out DIR --resume`), `how_to_restart` that of a
    checkpoint too damaged to resume (start again with --force); `on_metric` is called
    with each row as it is written to metrics.jsonl (`lrn train` and `lrngpt.train` share this function);
    `data`: the prepared data of cfg.data when the caller has it already (a sweep's runner); `hparams`
    (a sweep point's swept keys and values) go to the trackers of train.logger as hyperparameters."""
    stop = cfg.train.steps if stop_at is None else stop_at
    if resume:  # a finished run: say so, do no work
        done = RunDir(run_dir).summary() if RunDir(run_dir).holds_run() else None
        if done and done.get("finished") and done.get("step") == stop:
            if Distributed.from_env().master:  # a kill as its trackers closed: they get what they lack
                tracking.complete(validated(cfg), RunDir(run_dir), stop, log or logging.info)
            (log or logging.info)(f"{run_dir} already finished at step {stop}; nothing to do "
                                  "(raise --steps to go on at the final lr, or train.steps with --extend for a new schedule)")
            return {**done, "already_finished": True}
    trainer = Trainer(cfg, Path(run_dir), resume=resume, force=force, stop_at=stop_at, log=log, progress=progress,
                      warn_passes=warn_passes, extend=extend, how_to_continue=how_to_continue,
                      how_to_restart=how_to_restart,
                      on_metric=on_metric, data=data, hparams=hparams)
    try:
        return trainer.run()
    finally:
        trainer.close()
