"""Training: AdamW, warmup + cosine, clipping, periodic evaluations, exact resume.

`train(cfg, run_dir)` runs one job from step 0, or from ckpt_last.pt with `resume=True`.
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
from pathlib import Path

import numpy as np
import torch
from torch import nn

from lrngpt import log as logging
from lrngpt.checkpoint import make_payload
from lrngpt.config import RunConfig, from_dict, with_pad_id
from lrngpt.corpora import fetch, load_corpus
from lrngpt.data import BatchSampler, PreparedData, prepare
from lrngpt.distributed import Distributed, resolve_device
from lrngpt.errors import UserError
from lrngpt.evaluate import evaluate_bpb
from lrngpt.models import build_model
from lrngpt.run import RunDir
from lrngpt.trackers import Trackers
from lrngpt.validate import INT_LIMIT

PASSES_WARNING = 2.0  # above this many reads of the training text, a run warns (see _log_plan)


def lr_at(step: int, cfg) -> float:
    """Linear warmup to lr, then cosine decay to min_lr at train.steps (flat after)."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    span = max(1, cfg.steps - cfg.warmup_steps)
    progress = min(1.0, (step - cfg.warmup_steps) / span)
    return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1 + math.cos(math.pi * progress))


def make_optimizer(model: nn.Module, cfg) -> torch.optim.AdamW:
    """AdamW; weight decay on matrices and tables only (nanoGPT's convention)."""
    params = list(dict.fromkeys(model.parameters()))  # a tied table is one parameter
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": cfg.weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))


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
                 hparams: dict | None = None):
        tc = cfg.train
        self.cfg, self.resume, self.warn_passes = cfg, resume, warn_passes
        self.hparams = hparams  # a sweep point's swept keys, for the trackers
        self.dist = Distributed.from_env()
        self.log = (log or logging.info) if self.dist.master else (lambda msg: None)
        self.progress = logging.interactive() if progress is None else progress
        self.stop_at = tc.steps if stop_at is None else stop_at
        if self.stop_at < 1:
            raise UserError(f"--steps must be at least 1 (got {self.stop_at})")
        if self.stop_at >= INT_LIMIT:
            raise UserError(f"--steps {self.stop_at} is out of range; a step count must fit in 64 bits")
        if self.dist.master:
            fetch(cfg.data.corpus)  # no network: stop here, before the run directory is taken
        self.device = self.dist.device(resolve_device(tc.device))
        self.dist.init(self.device)
        self.run_dir = RunDir(run_dir)
        try:
            self._build(self._open_run_dir(resume, force))
        except BaseException:
            self.close()
            raise

    def _build(self, ckpt: dict | None) -> None:
        tc = self.cfg.train
        self.data = self._prepare_data()
        self.cfg = with_pad_id(self.cfg, self.data.tokenizer.eot_id)
        self.token_bytes = self._token_bytes()
        self._check_memory()
        torch.manual_seed(tc.seed)
        self.model = build_model(self.cfg.model_type, self.cfg.model).to(self.device)
        self.optimizer = make_optimizer(self.model, tc)
        self.sampler = BatchSampler(self.data.tokens("train"), tc.batch_size, tc.seq_len, tc.seed,
                                    self.dist.rank, self.dist.world_size)
        self.step, self.best_val, self.best_step, self.seconds = 0, float("inf"), 0, 0.0
        if ckpt is not None:
            self._restore(ckpt)
            self._truncate_metrics(self.step)  # only once every check of the resume has passed
        self.ddp_model = self.dist.wrap(self.model, self.device)
        self.fwd_model = torch.compile(self.ddp_model) if tc.compile else self.ddp_model
        self.trackers = Trackers(tc.loggers if self.dist.master else (), self.run_dir.path, self.cfg.to_dict(),
                                 resume_step=self.step if ckpt is not None else None, hparams=self.hparams,
                                 name=self.cfg.name or self.run_dir.path.name)
        use_bf16 = tc.dtype == "bfloat16" and self.device.startswith("cuda")
        self.autocast_dtype = torch.bfloat16 if use_bf16 else None

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
        ckpt = run.checkpoint("last")
        self._check_resumable(ckpt)
        if self.stop_at < ckpt["step"]:
            raise UserError(f"--steps {self.stop_at} is below the checkpoint's step {ckpt['step']}; "
                            f"--steps is the final global step, use {ckpt['step']} or more")
        self._check_same_data(ckpt)
        return ckpt

    def _check_same_data(self, ckpt: dict) -> None:
        """A changed corpus is refused before anything is prepared, trained or cut from metrics.jsonl."""
        from lrngpt.data import data_key

        saved = from_dict(ckpt["config"])
        if ckpt.get("data_key") == data_key(load_corpus(self.cfg.data.corpus), self.cfg.data):
            return
        what = (f"data.corpus was {saved.data.corpus}, now {self.cfg.data.corpus}" if saved.data.corpus !=
                self.cfg.data.corpus else f"the text of {self.cfg.data.corpus} is not what it was")
        raise UserError(f"the training data changed since this run started ({what}); resume with the same "
                        "data, or start a new run in another --out")

    def _truncate_metrics(self, step: int) -> None:
        if self.dist.master:
            dropped = self.run_dir.truncate_metrics(step)  # rows past the checkpoint are redone
            if dropped:
                self.log(f"metrics: dropped {dropped} rows after step {step} (they are computed again)")

    def _check_resumable(self, ckpt: dict) -> None:
        """What a resume needs from the checkpoint, checked before any work (data, model)."""
        path = self.run_dir.checkpoint_path("last")
        _check_same_model(from_dict(ckpt["config"]), self.cfg, ignore=("pad_id",))  # pad_id: from the data, later
        if not ckpt.get("optimizer") or not ckpt.get("rng"):
            raise UserError(f"{self.run_dir.path} was not trained here (an import has no optimizer state); "
                            "start a new run from its weights instead of --resume")
        opt, rng = ckpt["optimizer"], ckpt["rng"]
        if not (isinstance(opt.get("state"), dict) and isinstance(opt.get("param_groups"), list)
                and isinstance(rng.get("torch"), torch.Tensor) and isinstance(rng.get("sampler"), torch.Tensor)):
            raise UserError(f"{path} cannot be resumed: its optimizer or random state is damaged; "
                            "start again with --force")

    def _prepare_data(self) -> PreparedData:
        # Rank 0 prepares the data first; then the first process on each other machine, which finds
        # it in a shared cache or fills its machine-local one; then the rest find it cached. So no
        # two processes ever write the same cache entry at once, with one machine or many.
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
        from lrngpt.models import param_breakdown
        from lrngpt.validate import check_memory, training_memory

        tc, params = self.cfg.train, param_breakdown(self.cfg.model_type, self.cfg.model)["total"]
        check_memory(training_memory(params, tc.batch_size, tc.seq_len, self.cfg.data.vocab_size), f"this run ({params:,} parameters, {tc.batch_size} x {tc.seq_len} x "
                     f"{self.cfg.data.vocab_size} logits per step)", "lower train.batch_size, train.seq_len or the "
                     "model's size", self.device)

    def _restore(self, ckpt: dict) -> None:
        saved = from_dict(ckpt["config"])
        if ckpt.get("data_key") != self.data.key or saved.data.corpus != self.cfg.data.corpus:
            raise UserError(f"the corpus or its tokenization changed since this run started "
                            f"({saved.data.corpus} -> {self.cfg.data.corpus}); resume with the same data, "
                            "or start a new run in another --out")
        if ckpt.get("tokenizer_hash") != self.data.tokenizer.hash:
            raise UserError("the tokenizer changed since this run started; resume with the same data settings")
        _check_same_model(saved, self.cfg)
        try:
            self.model.load_state_dict(ckpt["model"])
            self.optimizer.load_state_dict(ckpt["optimizer"])
            self.sampler.set_state(ckpt["rng"]["sampler"])
            torch.set_rng_state(ckpt["rng"]["torch"])
            if torch.cuda.is_available() and ckpt["rng"].get("cuda"):
                torch.cuda.set_rng_state_all(ckpt["rng"]["cuda"])
            self.step = int(ckpt["step"])
            self.best_val = float(ckpt.get("best_val", float("inf")))
            self.best_step = int(ckpt.get("best_step", 0))
            self.seconds = float(ckpt.get("seconds", 0.0))
        except (RuntimeError, TypeError, ValueError, KeyError, IndexError, AttributeError) as e:
            raise UserError(f"{self.run_dir.checkpoint_path('last')} cannot be resumed: its training state is "
                            f"damaged ({type(e).__name__}: {str(e).splitlines()[0][:80]}); "
                            "start again with --force") from None
        self.log(f"resumed from {self.run_dir.checkpoint_path('last')} at step {self.step}")

    # ---- writing -------------------------------------------------------------------------

    def _payload(self) -> dict:
        rng = {"torch": torch.get_rng_state(), "sampler": self.sampler.state(),
               "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []}
        return make_payload(self.model.state_dict(), self.cfg.to_dict(), self.data.tokenizer, self.step,
                            source="lrn train", data_key=self.data.key, optimizer=self.optimizer.state_dict(),
                            rng=rng, best_val=self.best_val, best_step=self.best_step, seconds=self.seconds)

    def save(self, which: str = "last") -> None:
        if self.dist.master:
            self.trackers.flush()  # what the trackers hold reaches the disk before the step a resume restarts from
            self.run_dir.save_checkpoint(self._payload(), which)

    def metric(self, row: dict) -> None:
        if not self.dist.master:
            return
        self.run_dir.append_metric(row)
        self.trackers.log(row)

    # ---- the loop ------------------------------------------------------------------------

    @property
    def tokens_per_step(self) -> int:
        return self.cfg.train.tokens_per_step

    def evaluate(self, split: str = "val", max_tokens: int | None = None) -> dict:
        tokens = self.data.tokens(split)
        return evaluate_bpb(self.model, tokens, self.token_bytes, self.cfg.train.seq_len,
                            batch_size=self.cfg.train.batch_size, max_tokens=max_tokens,
                            device=self.device, autocast_dtype=self.autocast_dtype)

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
        loss.backward()
        if tc.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), tc.grad_clip)
        self.optimizer.step()
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
        self._log_plan()
        if self.step == 0 and not self.resume:
            self.save("init")
            ev = self.evaluate("val", tc.eval_tokens)
            self.metric({"step": 0, "val_bpb": ev["bpb"], "val_loss": ev["loss"]})
            self.log(f"step 0: val bpb {ev['bpb']:.4f} (untrained, {ev['tokens']:,} tokens)")
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
                    bar.set_postfix_str(f"loss {loss:.4f} | {bpb:.4f} bpb | lr {lr:.2e} | {tps:,.0f} tok/s")
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
                             "continue with --resume")
                    raise KeyboardInterrupt
        self._periodic_eval()
        summary = self.finish()
        self.trackers.close()
        return summary

    def _log_plan(self) -> None:
        """What the run will read, and a warning when it reads its text many times over."""
        tc = self.cfg.train
        n_train = len(self.data.tokens("train"))
        total = tc.steps * self.tokens_per_step
        passes = total / max(1, n_train)
        params = self.model.param_breakdown()
        self.log(f"model {self.cfg.model_type}: {params['total']:,} parameters "
                 + ", ".join(f"{k} {v:,}" for k, v in params.items() if k != "total"))
        self.log(f"data: {n_train:,} training tokens; {tc.steps:,} steps x {tc.batch_size} x {tc.seq_len} "
                 f"read {total:,} tokens = {passes:.2f} passes over the training text")
        if passes > PASSES_WARNING and self.warn_passes:
            fit = max(1, n_train // self.tokens_per_step)
            self.log(f"warning: {passes:.1f} passes over {n_train:,} training tokens; past about "
                     f"{PASSES_WARNING:.0f} the model memorises its text and val bpb can get worse "
                     f"(one pass is --set train.steps={fit:,}; the best periodic val bpb is kept in ckpt_best.pt)")

    def _periodic_eval(self) -> None:
        ev = self.evaluate("val", self.cfg.train.eval_tokens)
        self.metric({"step": self.step, "val_bpb": ev["bpb"], "val_loss": ev["loss"]})
        self.log(f"step {self.step}: val bpb {ev['bpb']:.4f} ({ev['tokens']:,} tokens spread over the split)")
        if ev["bpb"] < self.best_val:
            self.best_val, self.best_step = ev["bpb"], self.step
            self.save("best")
        self.save()

    def finish(self) -> dict:
        """Full evaluation at the final step, written to summary.json."""
        tc = self.cfg.train
        val = self.evaluate("val")
        trn = self.evaluate("train", tc.train_eval_tokens) if tc.train_eval_tokens else None
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
            "epochs": read / max(1, n_train),
            "best_val_bpb": self.best_val if math.isfinite(self.best_val) else None,
            "best_step": self.best_step,
            "device": self.device,
            "corpus": self.cfg.data.corpus,
            "data_key": self.data.key,
        }
        if self.dist.master:
            self.run_dir.write_summary(summary)
            self.metric({"step": self.step, "final": True, "val_bpb": val["bpb"], "train_bpb": summary["train_bpb"]})
        self.log(f"step {self.step}: val bpb {val['bpb']:.4f}"
                 + (f", train bpb {trn['bpb']:.4f} (gap {summary['gap']:+.4f})" if trn else "")
                 + f", {summary['epochs']:.2f} passes, {self.seconds:.1f}s")
        return summary

    def close(self) -> None:
        if getattr(self, "trackers", None) is not None:
            self.trackers.close(failed=True)  # a no-op after run() closed them; else the run stopped early
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


def train(cfg: RunConfig, run_dir: str | Path, resume: bool = False, force: bool = False,
          stop_at: int | None = None, log=None, progress: bool | None = None, warn_passes: bool = True,
          hparams: dict | None = None) -> dict:
    """Train `cfg` into `run_dir` (or continue it with resume); returns the summary.

    `warn_passes=False` leaves out the run's own warning about reading its text many times (a sweep
    that warns once for all its points). `hparams` (a sweep point's swept keys and values) go to the
    trackers of train.logger as hyperparameters."""
    stop = cfg.train.steps if stop_at is None else stop_at
    if resume:  # a finished run: say so, do no work
        done = RunDir(run_dir).summary() if RunDir(run_dir).holds_run() else None
        if done and done.get("finished") and done.get("step") == stop:
            (log or logging.info)(f"{run_dir} already finished at step {stop}; nothing to do "
                                  "(raise --steps or train.steps to go on)")
            return {**done, "already_finished": True}
    trainer = Trainer(cfg, Path(run_dir), resume=resume, force=force, stop_at=stop_at, log=log, progress=progress,
                      warn_passes=warn_passes, hparams=hparams)
    try:
        return trainer.run()
    finally:
        trainer.close()
