"""A whole sweep one point after another against packed (several points at once, each in a worker
process with its share of the threads: lrngpt.experiments.packing), in the same invocation, in
alternating rounds so both see the same machine load. The sweep is the width study's cpu points
(`embed-dim --scale cpu`, by default its small widths d = 4 to 64, where packing should pay) cut to a
fixed number of steps; each round trains every point afresh into its own directory, its data prepared
once before the first round. Prints the training tokens per second of each (the points' tokens read
over the sweep's wall time, start of the workers and evaluations included), their ratio, whether the
two gave the same results (each point's final val bpb and weights, bit for bit), and the load average.
Usage:

    python benchmarks/bench_packed.py [--widths 4,8,16,32,64] [--steps 60] [--rounds 1] [--at-once 2]
    python benchmarks/bench_packed.py --quick      # tiny scale, seconds (what the test runs)
"""

from __future__ import annotations

import lrngpt  # noqa: F401 - first: it sets OMP_WAIT_POLICY before torch loads OpenMP
import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import torch

from lrngpt.api import sweep


def run(out: Path, scale: str, widths: str, steps: int, at_once: int, sets: list[str]) -> float:
    """One sweep into `out`; its wall seconds."""
    t0 = time.perf_counter()
    sweep("embed-dim", scale, out=out, set=[f"train.steps={steps}", *sets], axes=[f"model.n_embd={widths}"],
          progress=False, notes=lambda m: None, points_at_once=at_once)
    return time.perf_counter() - t0


def same_results(a: Path, b: Path) -> bool:
    """Every point's weights and final val bpb equal, bit for bit, in the two sweeps."""
    for run_dir in sorted((a / "runs").iterdir()):
        other = b / "runs" / run_dir.name
        sa, sb = (json.loads((d / "summary.json").read_text())["val_bpb"] for d in (run_dir, other))
        wa, wb = (torch.load(d / "ckpt_last.pt", weights_only=True)["model"] for d in (run_dir, other))
        if sa != sb or any(not torch.equal(wa[k], wb[k]) for k in wa):
            return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--widths", default="4,8,16,32,64")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--at-once", type=int, default=2, help="points at once in the packed sweep")
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--quick", action="store_true", help="tiny scale, two widths, 10 steps: seconds")
    args = ap.parse_args()
    scale, widths, steps = ("tiny", "16,32", 10) if args.quick else ("cpu", args.widths, args.steps)
    n_points = len(widths.split(","))
    sets = list(args.overrides)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        run(tmp / "warm", scale, widths.split(",")[0], 1, 1, sets)  # the data prepared and cached once
        walls: dict[str, list[float]] = {"one after another": [], "packed": []}
        for r in range(args.rounds):
            kinds = [("one after another", 1), ("packed", args.at_once)]
            for name, n in kinds if r % 2 == 0 else kinds[::-1]:
                walls[name].append(run(tmp / f"{name[:3]}{r}", scale, widths, steps, n, sets))
        first = sorted((tmp / "one0" / "runs").iterdir())[0]
        cfg = json.loads((first / "config.json").read_text())["train"]
        tokens = n_points * steps * cfg["batch_size"] * cfg["seq_len"]
        seq, packed = (statistics.median(walls[k]) for k in ("one after another", "packed"))
        same = same_results(tmp / "one0", tmp / "pac0")
    print(f"sweep embed-dim --scale {scale}, d = {widths}, {steps} steps of {cfg['batch_size']} x {cfg['seq_len']} "
          f"each ({tokens:,} training tokens), torch threads {torch.get_num_threads()}, {args.rounds} round(s)")
    print(f"one after another: {seq:.1f} s, {tokens / seq:,.0f} tokens/s")
    print(f"packed ({args.at_once} at once): {packed:.1f} s, {tokens / packed:,.0f} tokens/s")
    print(f"packed / one after another: {seq / packed:.2f}x the tokens per second; same results: "
          f"{'yes' if same else 'NO'}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
