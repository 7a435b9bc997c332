"""Speed of the `mlp-cpu` training step and of evaluation, against torch's own matmul.

Prints the training step's achieved GFLOP/s (6 x MACs per token x tokens / second) next to
the fp32 matmul GFLOP/s that torch reaches in the same process on the model's largest
matmul shape (tokens x hidden @ hidden x vocab) and on a square 2048 matmul, measured in
alternating rounds so both see the same machine load. Evaluation (inference_mode) tokens/s
is printed as a ratio to training tokens/s, and the loss's forward and backward
(lrngpt.models.loss.cross_entropy) against F.cross_entropy's on logits of the step's shape. Usage:

    python benchmarks/bench_train.py [--preset mlp-cpu] [--rounds 5] [--steps 5]
"""

from __future__ import annotations

import lrngpt  # noqa: F401 - first: it sets OMP_WAIT_POLICY before torch loads OpenMP
import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch
from torch.nn import functional as F

from lrngpt.models.loss import cross_entropy
from lrngpt.runconfig.schema import load_config
from lrngpt.training.start import start_job
from lrngpt.training.trainer import Trainer


def timed(fn, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def loss_timer(fn, logits: torch.Tensor, targets: torch.Tensor):
    """Forward and backward of a loss on a fresh copy of `logits` (a model's head makes new ones each step)."""
    def run():
        x = logits.clone().requires_grad_()
        fn(x, targets).backward()
    return run


def train_macs_per_token(model) -> int:
    """Multiply-accumulates per token of the forward pass through every Linear / matmul."""
    c = model.config
    if hasattr(c, "n_hidden"):  # MLP
        return c.block_size * c.n_embd * c.n_hidden + c.n_hidden * c.vocab_size
    raise SystemExit("bench_train.py measures the MLP; benchmarks/bench_gpt.py measures the GPT")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="mlp-cpu")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    args = ap.parse_args()

    cfg = load_config(args.preset, ["train.device=cpu", *args.overrides])
    with tempfile.TemporaryDirectory() as tmp:
        tr = Trainer(start_job(cfg, Path(tmp), log=lambda m: None), progress=False)
        model, tc = tr.model, cfg.train
        tokens_per_step = tc.batch_size * tc.seq_len
        flops_per_step = 6 * train_macs_per_token(model) * tokens_per_step
        a = torch.randn(tokens_per_step, model.config.n_hidden)
        b = torch.randn(model.config.n_hidden, model.config.vocab_size)
        sq = torch.randn(2048, 2048)
        logits = torch.randn(tokens_per_step, model.config.vocab_size)
        targets = torch.randint(0, model.config.vocab_size, (tokens_per_step,))
        ours_loss = loss_timer(cross_entropy, logits, targets)
        torch_loss = loss_timer(lambda x, t: F.cross_entropy(x, t, ignore_index=-1), logits, targets)
        copy_only = loss_timer(lambda x, t: x.sum(), logits, targets)
        val = tr.data.tokens("val")
        n_eval = min(len(val), 64 * tokens_per_step)
        tr.train_step()  # warm up allocator and kernels
        rows = []
        for _ in range(args.rounds):
            t_step = timed(tr.train_step, args.steps)
            t_mm = timed(lambda: a @ b, 5)
            t_sq = timed(lambda: sq @ sq, 3)
            t_copy = timed(copy_only, 3)
            t_ours_loss, t_torch_loss = timed(ours_loss, 3) - t_copy, timed(torch_loss, 3) - t_copy
            t0 = time.perf_counter()
            ev = tr.evaluate("val", n_eval)
            t_eval = time.perf_counter() - t0
            rows.append({
                "step_gflops": flops_per_step / t_step / 1e9,
                "mm_gflops": 2 * a.shape[0] * a.shape[1] * b.shape[1] / t_mm / 1e9,
                "sq_gflops": 2 * 2048**3 / t_sq / 1e9,
                "train_tok_s": tokens_per_step / t_step,
                "eval_tok_s": ev["tokens"] / t_eval,
                "loss_ms": 1e3 * t_ours_loss, "torch_loss_ms": 1e3 * t_torch_loss,
                "loss_ratio": t_ours_loss / t_torch_loss,
            })
            rows[-1]["step_over_mm"] = rows[-1]["step_gflops"] / rows[-1]["mm_gflops"]
            rows[-1]["step_over_sq"] = rows[-1]["step_gflops"] / rows[-1]["sq_gflops"]
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    print(f"preset {args.preset}: batch {tc.batch_size} x {tc.seq_len}, {model.param_breakdown()['total']:,} params, "
          f"{torch.get_num_threads()} threads, median of {args.rounds} rounds")
    print(f"training step      {med['step_gflops']:7.1f} GFLOP/s   {med['train_tok_s']:9,.0f} tokens/s")
    print(f"matmul {a.shape[0]}x{a.shape[1]}@{b.shape[1]} {med['mm_gflops']:7.1f} GFLOP/s   "
          f"(the model's largest matmul)")
    print(f"matmul 2048^3      {med['sq_gflops']:7.1f} GFLOP/s")
    print(f"evaluation         {med['eval_tok_s']:9,.0f} tokens/s (inference_mode)")
    print(f"loss forward+backward {med['loss_ms']:6.0f} ms; F.cross_entropy {med['torch_loss_ms']:6.0f} ms "
          f"(ratio {med['loss_ratio']:.2f}; each less a copy of the logits and a sum, timed alike)")
    # per round (as bench_gpt.py): a load that changes between rounds moves both sides of a round alike
    low, high = min(r["step_over_mm"] for r in rows), max(r["step_over_mm"] for r in rows)
    print(f"ratio step / model-shape matmul: {med['step_over_mm']:.2f} (rounds {low:.2f}-{high:.2f})")
    print(f"ratio step / square matmul:      {med['step_over_sq']:.2f}")
    print(f"ratio eval / train tokens/s:     {med['eval_tok_s'] / med['train_tok_s']:.2f}")


if __name__ == "__main__":
    main()
