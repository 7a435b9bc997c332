"""Training (SPEC section 5): AdamW, warmup + cosine, clipping, evals, exact resume.

`train(cfg, run_dir)` runs one job from step 0, or from ckpt_last.pt with `resume=True`.
Everything random is seeded from `train.seed`: the model init, the batch sampler's own
generator, dropout (the global torch RNG); all of them are saved in every checkpoint, so a
run that is stopped and resumed on CPU ends bit-for-bit where a straight run would.
`train.steps` fixes the learning-rate schedule; `stop_at` (the CLI's --steps) is the global
step to stop at, so a run can be cut into pieces without changing what it computes.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from lrngpt.checkpoint import BEST, INIT, LAST, load_checkpoint, save_checkpoint
from lrngpt.config import RunConfig, from_dict, save_config
from lrngpt.data import BatchSampler, PreparedData, prepare
from lrngpt.errors import UserError
from lrngpt.evaluate import evaluate_bpb
from lrngpt.models import build_model
from lrngpt.run import resolve_device


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


def _dist_info() -> tuple[int, int, int]:
    return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1)), int(os.environ.get("LOCAL_RANK", 0))


class Trainer:
    def __init__(self, cfg: RunConfig, run_dir: Path, resume: bool = False, force: bool = False,
                 stop_at: int | None = None, log=None, progress: bool | None = None):
        self.rank, self.world_size, local_rank = _dist_info()
        self.master = self.rank == 0
        self.log = log or (lambda msg: print(msg, file=sys.stderr))
        if not self.master:
            self.log = lambda msg: None
        self.run_dir = Path(run_dir)
        self.resume = resume
        self.cfg = cfg
        tc = cfg.train
        self.stop_at = tc.steps if stop_at is None else stop_at
        if self.stop_at < 1:
            raise UserError(f"--steps must be at least 1 (got {self.stop_at})")
        self.device = resolve_device(tc.device)
        if self.world_size > 1 and self.device.startswith("cuda"):
            self.device = f"cuda:{local_rank}"
        self.progress = sys.stderr.isatty() if progress is None else progress

        if self.world_size > 1:
            _init_distributed(self.device)
        ckpt = self._check_run_dir(force)  # every rank checks before rank 0 writes anything
        self._barrier()
        # Rank 0 prepares the data first; then the first process on each other machine, which finds
        # it in a shared cache or fills its machine-local one; then the rest find it cached. So no
        # two processes ever write the same cache entry at once, with one machine or many.
        self.data: PreparedData | None = None
        for my_turn in (self.rank == 0, local_rank == 0, True):
            if my_turn and self.data is None:
                self.data = prepare(cfg.data, log=self.log)
            self._barrier()
        tok = self.data.tokenizer
        if cfg.model_type == "mlp" and cfg.model.pad_id != tok.eot_id:
            cfg = from_dict(cfg.to_dict(), pad_id=tok.eot_id)
            self.cfg = cfg
        if tok.vocab_size < cfg.data.vocab_size:
            self.log(f"note: the tokenizer reached {tok.vocab_size} tokens (the corpus has no more merges); "
                     f"the model keeps {cfg.data.vocab_size} rows, the extra ones are never used")
        # rows the tokenizer never reached carry no bytes, like special tokens
        self.token_bytes = np.pad(tok.token_bytes, (0, max(0, cfg.data.vocab_size - len(tok.token_bytes))))

        torch.manual_seed(tc.seed)
        self.model = build_model(cfg.model_type, cfg.model).to(self.device)
        self.optimizer = make_optimizer(self.model, tc)
        self.sampler = BatchSampler(self.data.tokens("train"), tc.batch_size, tc.seq_len, tc.seed,
                                    self.rank, self.world_size)
        self.step = 0
        self.best_val = float("inf")
        self.best_step = 0
        self.seconds = 0.0
        if ckpt is not None:
            self._restore(ckpt)
        self.ddp_model = self.model
        if self.world_size > 1:
            from torch.nn.parallel import DistributedDataParallel

            ids = [torch.device(self.device).index] if self.device.startswith("cuda") else None
            self.ddp_model = DistributedDataParallel(self.model, device_ids=ids)
        self.fwd_model = torch.compile(self.ddp_model) if tc.compile else self.ddp_model
        self.tb = _tensorboard(self.run_dir) if (tc.tensorboard and self.master) else None
        self.autocast_dtype = torch.bfloat16 if (tc.dtype == "bfloat16" and self.device.startswith("cuda")) else None

    # ---- run directory and resume ------------------------------------------------------

    def _check_run_dir(self, force: bool) -> dict | None:
        d = self.run_dir
        has_run = (d / "config.json").exists() or (d / LAST).exists()
        if self.resume:
            ckpt = load_checkpoint(d / LAST)
            if self.stop_at < ckpt["step"]:
                raise UserError(f"--steps {self.stop_at} is below the checkpoint's step {ckpt['step']}; "
                                f"--steps is the final global step, use {ckpt['step']} or more")
            return ckpt
        if has_run and not force:
            raise UserError(f"{d} already holds a run; use --resume to continue it, --force to start over, "
                            "or another --out")
        if d.exists() and any(d.iterdir()) and not has_run and not force:
            raise UserError(f"{d} is not empty and holds no lrn run; choose another --out or pass --force")
        return None

    def _restore(self, ckpt: dict) -> None:
        saved = from_dict(ckpt["config"])
        if ckpt.get("data_key") != self.data.key or saved.data.corpus != self.cfg.data.corpus:
            raise UserError(f"the corpus or its tokenization changed since this run started "
                            f"({saved.data.corpus} -> {self.cfg.data.corpus}); resume with the same data, "
                            "or start a new run in another --out")
        if ckpt.get("tokenizer_hash") != self.data.tokenizer.hash:
            raise UserError("the tokenizer changed since this run started; resume with the same data settings")
        if saved.model_dict() != self.cfg.model_dict():
            changed = sorted(k for k, v in self.cfg.model_dict().items() if saved.model_dict().get(k) != v)
            raise UserError(f"the model config changed since this run started ({', '.join(changed)}); "
                            "resume with the same model, or start a new run in another --out")
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
        self.log(f"resumed from {self.run_dir / LAST} at step {self.step}")

    def _payload(self) -> dict:
        return {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "step": self.step,
            "config": self.cfg.to_dict(),
            "tokenizer": self.data.tokenizer.to_str(),
            "tokenizer_hash": self.data.tokenizer.hash,
            "data_key": self.data.key,
            "rng": {
                "torch": torch.get_rng_state(),
                "sampler": self.sampler.state(),
                "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
            },
            "best_val": self.best_val,
            "best_step": self.best_step,
            "seconds": self.seconds,
        }

    def _barrier(self) -> None:
        if self.world_size > 1:
            import torch.distributed as dist

            dist.barrier()

    def save(self, name: str = LAST) -> None:
        if self.master:
            save_checkpoint(self._payload(), self.run_dir / name)

    def metric(self, row: dict) -> None:
        if not self.master:
            return
        with open(self.run_dir / "metrics.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")
        if self.tb is not None:
            prefix = "final/" if row.get("final") else ""
            for key, value in row.items():
                if key not in ("step", "final") and isinstance(value, int | float):
                    self.tb.add_scalar(prefix + key, value, row["step"])

    # ---- the loop ------------------------------------------------------------------------

    def evaluate(self, split: str = "val", max_tokens: int | None = None) -> dict:
        tokens = self.data.tokens(split)
        return evaluate_bpb(self.model, tokens, self.token_bytes, self.cfg.train.seq_len,
                            batch_size=self.cfg.train.batch_size, max_tokens=max_tokens,
                            device=self.device, autocast_dtype=self.autocast_dtype)

    def train_step(self) -> float:
        tc = self.cfg.train
        lr = lr_at(self.step, tc)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        x, y = self.sampler.next()
        if self.device.startswith("cuda"):  # pinned pages let the copy overlap the GPU's work
            x, y = x.pin_memory(), y.pin_memory()
        x, y = x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
        with torch.autocast(device_type=torch.device(self.device).type, dtype=self.autocast_dtype,
                            enabled=self.autocast_dtype is not None):
            _, loss = self.fwd_model(x, y)
        global_loss = loss.detach()
        if self.world_size > 1:  # the global batch's loss, so every rank logs and stops alike
            import torch.distributed as dist

            global_loss = global_loss.clone()
            dist.all_reduce(global_loss)
            global_loss /= self.world_size
        if not torch.isfinite(global_loss):
            raise UserError(f"the loss became {global_loss.item()} at step {self.step + 1}; stopped, and the last good "
                            f"checkpoint stays. Lower train.lr (now {tc.lr}) or set train.grad_clip")
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if tc.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), tc.grad_clip)
        self.optimizer.step()
        self.step += 1
        return global_loss.item()

    def run(self) -> dict:
        tc = self.cfg.train
        if self.master:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            save_config(self.cfg, self.run_dir / "config.json")
            self.data.tokenizer.save(self.run_dir / "tokenizer.json")
        params = self.model.param_breakdown()
        self.log(f"model {self.cfg.model_type}: {params['total']:,} parameters "
                 + ", ".join(f"{k} {v:,}" for k, v in params.items() if k != "total"))
        if self.step == 0 and not self.resume:
            self.save(INIT)
            ev = self.evaluate("val", tc.eval_tokens)
            self.metric({"step": 0, "val_bpb": ev["bpb"], "val_loss": ev["loss"]})
        tokens_per_step = tc.batch_size * tc.seq_len
        bar = tqdm(total=self.stop_at, initial=self.step, disable=not (self.progress and self.master),
                   file=sys.stderr, dynamic_ncols=True, unit="step")
        s_last, n_last = self.seconds, self.step
        with _StopFlag() as stop:
            while self.step < self.stop_at:
                t0 = time.perf_counter()
                loss = self.train_step()
                self.seconds += time.perf_counter() - t0
                if self.step % tc.log_every == 0 or self.step == self.stop_at:
                    # training time only: evals and saves between logs do not count
                    tps = (self.step - n_last) * tokens_per_step / max(self.seconds - s_last, 1e-9)
                    s_last, n_last = self.seconds, self.step
                    self.metric({"step": self.step, "loss": loss, "lr": lr_at(self.step - 1, tc),
                                 "tokens_per_s": round(tps, 1)})
                    bar.set_postfix(loss=f"{loss:.4f}", lr=f"{lr_at(self.step - 1, tc):.2e}", tok_s=f"{tps:,.0f}")
                bar.update(1)
                if self.step % tc.eval_every == 0 and self.step < self.stop_at:
                    self._periodic_eval()
                elif tc.save_every and self.step % tc.save_every == 0:
                    self.save()
                if stop.signal is not None:
                    self.save()
                    bar.close()
                    self.log(f"interrupted at step {self.step}; saved {self.run_dir / LAST}; "
                             "continue with --resume")
                    raise KeyboardInterrupt
        bar.close()
        self._periodic_eval()
        summary = self.finish()
        if self.tb is not None:
            self.tb.close()
        return summary

    def _periodic_eval(self) -> None:
        ev = self.evaluate("val", self.cfg.train.eval_tokens)
        self.metric({"step": self.step, "val_bpb": ev["bpb"], "val_loss": ev["loss"]})
        self.log(f"step {self.step}: val bpb {ev['bpb']:.4f} ({ev['tokens']:,} tokens spread over the split)")
        if ev["bpb"] < self.best_val:
            self.best_val = ev["bpb"]
            self.best_step = self.step
            self.save(BEST)
        self.save()

    def finish(self) -> dict:
        """Full evaluation at the final step, written to summary.json."""
        tc = self.cfg.train
        val = self.evaluate("val")
        trn = self.evaluate("train", tc.train_eval_tokens) if tc.train_eval_tokens else None
        summary = {
            "step": self.step,
            "finished": self.step >= tc.steps,
            "val_bpb": val["bpb"], "val_loss": val["loss"], "val_tokens": val["tokens"], "val_bytes": val["bytes"],
            "train_bpb": trn["bpb"] if trn else None,
            "train_tokens": trn["tokens"] if trn else 0,
            "gap": (val["bpb"] - trn["bpb"]) if trn else None,  # val - train, the chapter's sign
            "params": self.model.param_breakdown(),
            "seconds": round(self.seconds, 2),
            "tokens_seen": self.step * tc.batch_size * tc.seq_len,
            # how many times the training tokens were read: the chapter's finding assumes < 1
            "train_split_tokens": len(self.data.tokens("train")),
            "epochs": self.step * tc.batch_size * tc.seq_len / max(1, len(self.data.tokens("train"))),
            "best_val_bpb": self.best_val if math.isfinite(self.best_val) else None,
            "best_step": self.best_step,
            "device": self.device,
            "corpus": self.cfg.data.corpus,
            "data_key": self.data.key,
        }
        if self.master:
            (self.run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
            self.metric({"step": self.step, "final": True, "val_bpb": val["bpb"], "train_bpb": summary["train_bpb"]})
        self.log(f"step {self.step}: val bpb {val['bpb']:.4f}"
                 + (f", train bpb {trn['bpb']:.4f} (gap {summary['gap']:+.4f})" if trn else "")
                 + f", {self.seconds:.1f}s")
        return summary


def _tensorboard(run_dir: Path):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        raise UserError("train.tensorboard needs the tensorboard package: pip install 'lrngpt[tensorboard]'") from None
    return SummaryWriter(log_dir=str(run_dir / "tensorboard"))


def _init_distributed(device: str) -> None:
    """torchrun sets RANK / WORLD_SIZE / MASTER_ADDR: gloo on CPU, nccl on CUDA."""
    import torch.distributed as dist

    if device.startswith("cuda"):
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.startswith("cuda") else "gloo")


def train(cfg: RunConfig, run_dir: str | Path, resume: bool = False, force: bool = False,
          stop_at: int | None = None, log=None, progress: bool | None = None) -> dict:
    trainer = Trainer(cfg, Path(run_dir), resume=resume, force=force, stop_at=stop_at, log=log, progress=progress)
    try:
        return trainer.run()
    finally:
        if trainer.world_size > 1:
            import torch.distributed as dist

            if dist.is_initialized():
                dist.destroy_process_group()
