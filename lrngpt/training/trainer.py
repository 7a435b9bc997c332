"""Training: AdamW, warmup + cosine, clipping, periodic evaluations, exact resume (everything random
is seeded from `train.seed` and saved in every checkpoint, so a resumed CPU run ends bit-for-bit
where a straight run would).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

import torch

from lrngpt.core import log as logging
from lrngpt.data.prepared import PreparedData
from lrngpt.data.sampler import BatchSampler
from lrngpt.data.sizing import MEMORISING_PASSES, sizing
from lrngpt.device.distributed import Distributed
from lrngpt.device.precision import apply_tf32, grad_scaler
from lrngpt.errors import UserError
from lrngpt.inference.evaluate import evaluate_bpb, train_bpb_by_reads
from lrngpt.models.build import build_model
from lrngpt.runconfig.schema import RunConfig, validated
from lrngpt.store.checkpoint import make_payload
from lrngpt.store.rundir import RunDir
from lrngpt.training import trackers as tracking
from lrngpt.training.interrupt import StopFlag
from lrngpt.training.optimizer import make_optimizer
from lrngpt.training.resume import State, check_restorable, restore_state
from lrngpt.training.run_summary import final_line, precision_summary, summary_document
from lrngpt.training.schedule import lr_at
from lrngpt.training.start import Job, start_job


class Trainer:
    """One training job on a started Job (its run directory taken, its data prepared): construction
    builds the model, optimizer and batches and restores a resume; `run()` is the loop."""

    def __init__(self, job: Job, progress: bool | None = None, warn_passes: bool = True,
                 how_to_continue: str = "", on_metric: Callable[[dict], None] | None = None,
                 hparams: dict | None = None):
        self.job, self.cfg, self.run_dir, self.dist = job, job.cfg, job.run, job.dist
        self.device, self.data, self.token_bytes, self.log = job.device, job.data, job.token_bytes, job.log
        self.stop_at, self.resume = job.stop_at, job.resume
        self.warn_passes, self.on_metric = warn_passes, on_metric
        self.how_to_continue = how_to_continue  # what an interrupted run says to do next
        self.hparams = hparams  # a sweep point's swept keys, for the trackers
        self.progress = logging.interactive() if progress is None else progress
        self.schedules = self.resume.schedules if self.resume is not None else []  # --extend's changes
        tc, seq_len = self.cfg.train, self.cfg.train.seq_len
        assert seq_len is not None  # resolved when the RunConfig was built
        self.seq_len = seq_len
        torch.manual_seed(tc.seed)
        self.model = build_model(self.cfg.model_type, self.cfg.model).to(self.device)
        self.params = cast(Callable[[], dict], self.model.param_breakdown)()
        self.optimizer = make_optimizer(self.model, tc)
        apply_tf32(job.precision, self.device)
        self.autocast_dtype = job.precision.autocast_dtype
        self.scaler = grad_scaler(job.precision, self.device)  # float16 only
        self.sampler = BatchSampler(self.data.tokens("train"), tc.batch_size, seq_len, tc.seed,
                                    self.dist.rank, self.dist.world_size)
        self.state = State()
        if self.resume is not None:
            check_restorable(self.resume, self.cfg, self.data)
            self.state = restore_state(self.resume, self.model, self.optimizer, self.scaler, self.sampler,
                                       job.how_to_restart)
            self.log(f"resumed from {self.resume.path} at step {self.state.step}")
            # only once every check of the resume has passed: the rows past the checkpoint are redone
            if self.dist.master and (dropped := self.run_dir.truncate_metrics(self.state.step)):
                self.log(f"metrics: dropped {dropped} rows after step {self.state.step} "
                         "(they are computed again)")
        # what metrics.jsonl holds up to the checkpoint: what the trackers may lack, what was evaluated there
        self.resumed_rows = self.run_dir.metrics() if self.resume is not None and self.dist.master else []
        self.ddp_model = self.dist.wrap(self.model, self.device)
        self.fwd_model = torch.compile(self.ddp_model) if tc.compile else self.ddp_model
        logging.debug(f"training: seed {tc.seed}, {tc.batch_size} x {seq_len} tokens per step on rank "
                      f"{self.dist.rank} of {self.dist.world_size}, steps {self.state.step} -> {self.stop_at}, "
                      f"data {self.data.dir}, compile {tc.compile}")
        self.trackers = tracking.Trackers()  # none until run() has a checkpoint to resume from (_start_trackers)

    # ---- writing -------------------------------------------------------------------------

    def _payload(self) -> dict:
        st = self.state
        rng = {"torch": torch.get_rng_state(), "sampler": self.sampler.state(),
               "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []}
        return make_payload(self.model.state_dict(), self.cfg.to_dict(), self.data.tokenizer, st.step,
                            source="lrn train", data_key=self.data.key, optimizer=self.optimizer.state_dict(),
                            rng=rng, best_val=st.best_val, best_step=st.best_step, seconds=st.seconds,
                            schedules=self.schedules,
                            precision=self.job.precision.to_dict(),
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

    def evaluate(self, split: str = "val", max_tokens: int | None = None) -> dict:
        tokens = self.data.tokens(split)
        return evaluate_bpb(self.model, tokens, self.token_bytes, self.seq_len,
                            batch_size=self.cfg.train.batch_size, max_tokens=max_tokens,
                            device=self.device, autocast_dtype=self.autocast_dtype,
                            windows=self.cfg.train.eval_windows)

    def train_step(self) -> tuple[float, float]:
        """One optimizer step; returns the global batch's loss (nats/token) and bits per byte."""
        tc = self.cfg.train
        lr = lr_at(self.state.step, tc)
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
            raise UserError(f"the loss became {global_loss.item()} at step {self.state.step + 1}; stopped, and the "
                            f"last good checkpoint stays. Lower train.lr (now {tc.lr}) or set train.grad_clip")
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
        self.state.step += 1
        value = global_loss.item()
        # the batch's own bytes: the same unit as val bpb (the few <|endoftext|> targets' loss included)
        bpb = value * y.numel() / (math.log(2) * n_bytes) if n_bytes else float("nan")
        return value, bpb

    def run(self) -> dict:
        self._begin()
        st, tc = self.state, self.cfg.train
        bar = logging.progress(total=self.stop_at, initial=st.step, unit="step",
                               enabled=self.progress and self.dist.master)
        s_last, n_last, wall0, step0 = st.seconds, st.step, time.perf_counter(), st.step
        with StopFlag() as stop, bar:
            while st.step < self.stop_at:
                t0 = time.perf_counter()
                loss, bpb = self.train_step()
                st.seconds += time.perf_counter() - t0
                bar.update(1)
                if st.step % tc.log_every == 0 or st.step == self.stop_at:
                    # training time only: evals and saves between logs do not count
                    tps = (st.step - n_last) * tc.tokens_per_step / max(st.seconds - s_last, 1e-9)
                    s_last, n_last = st.seconds, st.step
                    lr = lr_at(st.step - 1, tc)
                    self.metric({"step": st.step, "loss": loss, "train_bpb": bpb, "lr": lr,
                                 "tokens_per_s": round(tps, 1)})
                    elapsed = time.perf_counter() - wall0
                    eta = elapsed / max(1, st.step - step0) * (self.stop_at - st.step)
                    # drawn with the next redraw (refresh=False): a forced one per log line would outpace a
                    # notebook's bounded redraws
                    bar.set_postfix_str(f"loss {loss:.4f} | {bpb:.4f} bpb | lr {lr:.2e} | {tps:,.0f} tok/s",
                                        refresh=False)
                    if bar.disable:  # a log file or a scheduler: nanoGPT-style lines instead of a bar
                        self.log(f"step {st.step}/{self.stop_at} | loss {loss:.4f} ({bpb:.4f} bpb) | lr {lr:.2e} "
                                 f"| {tps:,.0f} tok/s | {stopwatch(elapsed)} elapsed, ETA {stopwatch(eta)}")
                if st.step % tc.eval_every == 0 and st.step < self.stop_at:
                    self._periodic_eval()
                elif tc.save_every and st.step % tc.save_every == 0:
                    self.save()
                if stop.signal is not None:
                    self.save()
                    self.log(f"interrupted at step {st.step}; saved {self.run_dir.checkpoint_path('last')}; "
                             f"{self.how_to_continue}")
                    raise KeyboardInterrupt
        if not self._evaluated_already():  # (a resume at the last step: its evaluation was done and saved)
            self._periodic_eval()
        summary = self.finish()
        self.trackers.close(finished=st.step)
        return summary

    def _begin(self) -> None:
        """Before the first step: config, tokenizer, plan, step-0 checkpoint, trackers, untrained val bpb."""
        if self.dist.master and self.resume is None:
            self.run_dir.write_config(self.cfg)
            self.run_dir.write_tokenizer(self.data.tokenizer)
        elif self.dist.master and self.resume is not None and self.resume.extended:
            self.run_dir.write_config(self.cfg)  # --extend: config.json says the schedule the run now follows
        self._log_plan()
        if self.state.step == 0 and self.resume is None:
            self.save("init")
        self._start_trackers()
        if self.state.step == 0 and not self._evaluated_already():
            ev = self.evaluate("val", self.cfg.train.eval_tokens)
            self.metric({"step": 0, "val_bpb": ev["bpb"], "val_loss": ev["loss"]})
            self.log(f"step 0: val bpb {ev['bpb']:.4f} (untrained; periodic estimate on {ev['tokens']:,} tokens)")

    def _start_trackers(self) -> None:
        """The trackers of train.logger, once the run has a checkpoint: a start killed before leaves no
        tracker run behind, one killed after resumes them (each sent what it lacks of metrics.jsonl)."""
        if not self.dist.master or not self.cfg.train.loggers:
            return
        try:
            self.trackers = tracking.Trackers(
                self.cfg.train.loggers, self.run_dir.path, self.cfg.to_dict(),
                resume_step=self.state.step if self.resume is not None else None, hparams=self.hparams,
                name=self.cfg.name or self.run_dir.path.name, rows=self.resumed_rows)
        except BaseException:
            self.run_dir.abandon()  # a new run whose trackers did not start: no run is left to replace
            raise

    def _log_plan(self) -> None:
        """What the run will read, and a warning when it reads its text many times over."""
        tc = self.cfg.train
        n_train = len(self.data.tokens("train"))
        size = sizing(tc.steps, tc.tokens_per_step, n_train)
        total, passes = size["tokens_read"], size["passes"]
        self.log(f"model {self.cfg.model_type}: {self.params['total']:,} parameters "
                 + ", ".join(f"{k} {v:,}" for k, v in self.params.items() if k != "total"))
        self.log(f"data: {n_train:,} training tokens; {tc.steps:,} steps x {tc.batch_size} x {tc.seq_len} "
                 f"read {total:,} tokens = {passes:.2f} passes over the training text")
        if passes > MEMORISING_PASSES and self.warn_passes:
            fit = size["one_pass_steps"]
            self.log(f"warning: {passes:.1f} passes over {n_train:,} training tokens; past about "
                     f"{MEMORISING_PASSES:.0f} the model memorises its text and val bpb can get worse "
                     f"(one pass is --set train.steps={fit:,}; the best periodic val bpb is kept in ckpt_best.pt)")

    def _evaluated_already(self) -> bool:
        """A resume at the step of its checkpoint finds that step's evaluation in metrics.jsonl: not again."""
        return any(r["step"] == self.state.step and "val_bpb" in r and not r.get("final") for r in self.resumed_rows)

    def _periodic_eval(self) -> None:
        st = self.state
        ev = self.evaluate("val", self.cfg.train.eval_tokens)
        self.metric({"step": st.step, "val_bpb": ev["bpb"], "val_loss": ev["loss"]})
        where = "from the start of" if self.cfg.train.eval_windows == "prefix" else "spread over"
        self.log(f"step {st.step}: val bpb {ev['bpb']:.4f} (periodic estimate on {ev['tokens']:,} tokens {where} "
                 "the split)")
        if ev["bpb"] < st.best_val:
            st.best_val, st.best_step = ev["bpb"], st.step
            self.save("best")
        self.save()

    def finish(self) -> dict:
        """Full evaluation at the final step, written to summary.json."""
        tc, job = self.cfg.train, self.job
        val = self.evaluate("val")
        trn, reads = (train_bpb_by_reads(self.model, self.data.tokens("train"), self.token_bytes, tc, self.state.step,
                                         tc.train_eval_tokens, device=self.device, autocast_dtype=self.autocast_dtype,
                                         desc="eval") if tc.train_eval_tokens else (None, {}))
        summary = summary_document(self.cfg, self.data, self.state, val, trn, reads, self.params, self.device,
                                   precision_summary(job.caps, job.precision, tc.compile), self.schedules)
        if self.dist.master:
            # the final row first: a kill before summary.json is written leaves a run that resumes (and
            # cuts the row), never a finished one that lacks it
            self.metric({"step": self.state.step, "final": True, "val_bpb": val["bpb"],
                         "train_bpb": summary["train_bpb"]})
            self.run_dir.write_summary(summary)
        self.log(final_line(summary, val, trn, self.state.seconds))
        return summary

    def close(self, abandon: bool = False) -> None:
        self.trackers.close(failed=True)  # a no-op after run() closed them; else the run stopped early
        self.job.close(abandon)


def stopwatch(seconds: float) -> str:
    """0:07, 12:34, 1:02:03: a training line's elapsed time and ETA (an estimate reads as timing.clock)."""
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60}:{seconds % 60:02d}"


@logging.honours_progress
def train_run(cfg: RunConfig, run_dir: str | Path, resume: bool = False, force: bool = False,
          stop_at: int | None = None, log=None, progress: bool | None = None, warn_passes: bool = True,
          extend: bool = False, how_to_continue: str | None = None, how_to_restart: str | None = None,
          on_metric: Callable[[dict], None] | None = None, data: PreparedData | None = None,
          hparams: dict | None = None) -> dict:
    """Train `cfg` into `run_dir` (or continue it with resume); returns the summary. A resume with
    another schedule is refused unless `extend` (the new one then runs from the checkpoint's step).
    `warn_passes=False`: no warning about many passes (a sweep warns once); `on_metric(row)`: each
    metrics.jsonl row; `hparams`: a sweep point's swept keys, for the trackers."""
    stop = cfg.train.steps if stop_at is None else stop_at
    if resume:  # a finished run: say so, do no work
        done = RunDir(run_dir).summary() if RunDir(run_dir).holds_run() else None
        if done and done.get("finished") and done.get("step") == stop:
            if Distributed.from_env().master:  # a kill as its trackers closed: they get what they lack
                tracking.complete(validated(cfg), RunDir(run_dir), stop, log or logging.info)
            (log or logging.info)(f"{run_dir} already finished at step {stop}; nothing to do "
                                  "(raise --steps to go on at the final lr, or train.steps with --extend for a new schedule)")
            return {**done, "already_finished": True}
    # what an interrupted run or a damaged checkpoint says to do next: a sweep's points, its own way
    job = start_job(cfg, Path(run_dir), resume=resume, force=force, stop_at=stop_at, log=log, extend=extend,
                    how_to_restart=how_to_restart or "start again with --force", data=data)
    try:
        trainer = Trainer(job, progress=progress, warn_passes=warn_passes, on_metric=on_metric, hparams=hparams,
                          how_to_continue=how_to_continue or f"continue with `lrn train --out {Path(run_dir)} --resume`")
    except BaseException:
        job.close(abandon=True)  # a start that failed leaves no run behind to replace with --force
        raise
    try:
        return trainer.run()
    finally:
        trainer.close()
