"""What the by-reads split costs a run: its final train-bpb evaluation with the targets split by
whether the run's batches read them (what every run's summary.json now records), against the same
evaluation without the split, in alternating rounds of the same process so both see the same
machine load. The split replays the run's batches from its seed (train.steps draws of the batch's
window starts), sorts the starts and marks each scored target by two binary searches; the forward
passes are the same. Prints both times, their ratio and the extra seconds per run. Usage:

    python benchmarks/bench_by_reads.py [--preset mlp-cpu] [--rounds 5] [--set train.steps=4000]
"""

from __future__ import annotations

import lrngpt  # noqa: F401 - first: it sets OMP_WAIT_POLICY before torch loads OpenMP
import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from lrngpt.data.sampler import BatchSampler
from lrngpt.inference.evaluate import capped_windows, evaluate_bpb, train_bpb_by_reads
from lrngpt.runconfig.schema import load_config
from lrngpt.training.start import start_job
from lrngpt.training.trainer import Trainer


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="mlp-cpu")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    args = ap.parse_args()

    cfg = load_config(args.preset, ["train.device=cpu", *args.overrides])
    with tempfile.TemporaryDirectory() as tmp:
        tr = Trainer(start_job(cfg, Path(tmp), log=lambda m: None), progress=False)
        tc = cfg.train
        tr.state.step = tc.steps  # as at the end of the run: the split replays all its batches

        def plain():
            evaluate_bpb(tr.model, tr.data.tokens("train"), tr.token_bytes, tc.seq_len, batch_size=tc.batch_size,
                         max_tokens=tc.train_eval_tokens, device=tr.device, windows=tc.eval_windows)

        tokens = tr.data.tokens("train")
        scored = capped_windows(len(tokens), tc.seq_len, tc.train_eval_tokens, tc.eval_windows)
        positions = np.concatenate([np.arange(s + 1, s + n + 1) for s, n in scored])

        def marks():  # the split's own work: replay the batches, mark every scored target
            counter = BatchSampler(tokens, tc.batch_size, tc.seq_len, tc.seed).read_counter(tr.state.step)
            counter(positions)

        def split():  # the run's final train bpb, split by reads (Trainer.finish)
            train_bpb_by_reads(tr.model, tokens, tr.token_bytes, tc, tr.state.step, tc.train_eval_tokens, device=tr.device)

        plain(), split()  # warm up
        times = {"plain": [], "split": [], "marks": []}
        for _ in range(args.rounds):
            for name, fn in (("plain", plain), ("split", split), ("marks", marks)):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
        p, s, m = (statistics.median(times[k]) for k in ("plain", "split", "marks"))
        print(f"{args.preset}: train bpb over {tc.train_eval_tokens:,} tokens after {tc.steps:,} steps of "
              f"{tc.batch_size} x {tc.seq_len}, median of {args.rounds} rounds")
        print(f"  evaluation without the split {p:.3f} s, with it {s:.3f} s: ratio {s / p:.3f}")
        print(f"  the split's own work (replaying {tr.state.step:,} batches, marking {len(positions):,} targets) {m:.3f} s: "
              f"{m / p:.1%} of the evaluation")


if __name__ == "__main__":
    main()
