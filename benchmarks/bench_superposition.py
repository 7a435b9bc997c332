"""Milliseconds per training step of the superposition lesson's toy model at one thread (what
`lrn lesson superposition` uses) against torch's default thread count, in the same process.

    python benchmarks/bench_superposition.py [--steps 200]
"""

from __future__ import annotations

import argparse
import time

import torch

from lrngpt.analysis import superposition


def ms_per_step(steps: int, threads: int | None) -> float:
    saved = torch.set_num_threads
    if threads is None:  # keep the default: make the lesson's own set_num_threads(1) a no-op
        torch.set_num_threads = lambda n: None
    try:
        t0 = time.perf_counter()
        superposition.train_toy(steps=steps, seed=0)
        return 1000 * (time.perf_counter() - t0) / steps
    finally:
        torch.set_num_threads = saved


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    default = torch.get_num_threads()
    ms_per_step(5, 1)  # warm up
    one, many = ms_per_step(args.steps, 1), ms_per_step(args.steps, None)
    print(f"toy model, 7 sparsities x batch 1024 x 20 features x 5 dims: {one:.2f} ms/step at 1 thread, "
          f"{many:.2f} ms/step at {default} threads; ratio default / one thread {many / one:.2f}")


if __name__ == "__main__":
    main()
