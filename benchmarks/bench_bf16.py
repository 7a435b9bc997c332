"""bfloat16 against float32 on this CPU: seconds per training step, and val bpb on the same points.

For each width and seed, two runs of the same point (same initialisation, same batches) are built,
one with train.dtype=float32 and one with train.dtype=bfloat16 (CPU autocast), and stepped in
interleaved order (float32, bfloat16, then bfloat16, float32, ...) so both see the same machine
load; the per-step figure is the median step after the first. Each run's val bpb is then measured
as the run would report it (in its own dtype), and the bfloat16 - float32 difference is judged
against the seed noise of the float32 runs (lrngpt.experiments.trend: the largest max - min over the
seeds of one width, at least its floor). The top line says whether this CPU has bfloat16
instructions (native) or emulates it. Usage:

    python benchmarks/bench_bf16.py                       # mlp-cpu, widths 16,64, 2 seeds, 60 steps
    python benchmarks/bench_bf16.py --preset mlp-tiny --widths 8,16,32 --seeds 3 --steps 30
    python benchmarks/bench_bf16.py --quick               # seconds: mlp-tiny, 2 widths, 2 seeds, 6 steps

Where bfloat16 is emulated (no avx512_bf16, amx_bf16 or arm bf16) its matmuls are far slower than
float32's, so mlp-cpu's bfloat16 steps can take minutes each there: use mlp-tiny on such a CPU.
"""

from __future__ import annotations

import lrngpt  # noqa: F401 - first: it sets OMP_WAIT_POLICY before torch loads OpenMP
import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lrngpt.device.precision import cpu_info
from lrngpt.experiments.trend import seed_noise
from lrngpt.runconfig.schema import load_config
from lrngpt.training.start import start_job
from lrngpt.training.trainer import Trainer

DTYPES = ("float32", "bfloat16")


def pair(preset: str, width: int, seed: int, steps: int, sets: list[str], root: Path) -> dict:
    """One point in both dtypes: median seconds per step and val bpb of each."""
    trainers = {}
    for dtype in DTYPES:
        cfg = load_config(preset, ["train.device=cpu", f"train.dtype={dtype}", f"model.n_embd={width}",
                                   f"train.seed={seed}", f"train.steps={steps}", *sets])
        trainers[dtype] = Trainer(start_job(cfg, root / f"d{width}-s{seed}-{dtype}", log=lambda m: None),
                                  progress=False)
    times: dict[str, list[float]] = {d: [] for d in DTYPES}
    for i in range(steps):
        for dtype in (DTYPES if i % 2 == 0 else DTYPES[::-1]):  # alternate who goes first
            t0 = time.perf_counter()
            trainers[dtype].train_step()
            times[dtype].append(time.perf_counter() - t0)
    out = {"n_embd": width, "seed": seed, "steps": steps}
    for dtype, tr in trainers.items():
        ts = times[dtype][1:] or times[dtype]  # the first step holds first-call costs
        out[dtype] = {"s_per_step": statistics.median(ts), "val_bpb": tr.evaluate("val", tr.cfg.train.eval_tokens)["bpb"]}
        tr.close()
    return out


def judge(rows: list[dict]) -> tuple[list[dict], str]:
    """Per width: mean seconds per step and val bpb of each dtype, the speed ratio, the difference and
    whether it lies within the float32 runs' seed noise."""
    noise = seed_noise([{"label": "float32", "rows": [
        {"steps": r["steps"], "train_tokens": None, "values": {}, "n_embd": r["n_embd"], "seed": r["seed"],
         "val_bpb": r["float32"]["val_bpb"]} for r in rows]}])
    sigma = noise.sigma("val")
    out = []
    for width in dict.fromkeys(r["n_embd"] for r in rows):
        rs = [r for r in rows if r["n_embd"] == width]
        mean = {d: {k: statistics.mean(r[d][k] for r in rs) for k in ("s_per_step", "val_bpb")} for d in DTYPES}
        diff = mean["bfloat16"]["val_bpb"] - mean["float32"]["val_bpb"]
        out.append({"n_embd": width, "seeds": [r["seed"] for r in rs], **mean,
                    "speedup": mean["float32"]["s_per_step"] / mean["bfloat16"]["s_per_step"],
                    "val_bpb_diff": diff, "paired_diffs": [r["bfloat16"]["val_bpb"] - r["float32"]["val_bpb"] for r in rs],
                    "noise": sigma, "within_noise": abs(diff) <= sigma})
    return out, noise.text("val")


def cpu_line(c: dict) -> str:
    return (f"CPU: {c['name']} ({c['vendor']}), ISA {c['isa']}, torch kernels {c['torch_capability']}; "
            f"bfloat16 {c['bf16'].upper()}" + ("" if c["bf16"] == "native" else
                                                " (no bfloat16 instructions: torch emulates it; native-bf16 "
                                                "figures need a CPU with avx512_bf16 or amx_bf16)"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--preset", default="mlp-cpu")
    ap.add_argument("--widths", default="16,64", help="model.n_embd values, comma-separated")
    ap.add_argument("--seeds", type=int, default=2, help="seeds per width (1337, 1338, ...): the noise")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--set", dest="overrides", action="append", default=[], help="KEY=VALUE, as lrn train --set")
    ap.add_argument("--quick", action="store_true", help="mlp-tiny, widths 8,16, 2 seeds, 6 steps: seconds")
    ap.add_argument("--json", dest="json_out", metavar="PATH", help="also write the rows and verdicts here")
    args = ap.parse_args(argv)
    if args.quick:
        args.preset, args.widths, args.seeds, args.steps = "mlp-tiny", "8,16", 2, 6
        args.overrides = ["train.eval_tokens=2000", *args.overrides]
    widths = [int(w) for w in args.widths.split(",")]
    seeds = [1337 + i for i in range(args.seeds)]
    cpu = cpu_info()
    print(cpu_line(cpu), flush=True)
    print(f"{args.preset}, widths {widths}, seeds {seeds}, {args.steps} steps; float32 and bfloat16 steps "
          "interleaved in one process", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for width in widths:
            for seed in seeds:
                r = pair(args.preset, width, seed, args.steps, args.overrides, Path(tmp))
                rows.append(r)
                print(f"  d={width} seed {seed}: float32 {r['float32']['s_per_step'] * 1e3:.1f} ms/step, val bpb "
                      f"{r['float32']['val_bpb']:.4f}; bfloat16 {r['bfloat16']['s_per_step'] * 1e3:.1f} ms/step, "
                      f"val bpb {r['bfloat16']['val_bpb']:.4f}", flush=True)
    verdicts, noise_text = judge(rows)
    print(f"noise: {noise_text}")
    for v in verdicts:
        speed = (f"{v['speedup']:.2f}x faster" if v["speedup"] >= 1 else f"{1 / v['speedup']:.2f}x slower")
        print(f"d={v['n_embd']}: seconds per step bfloat16 / float32 {1 / v['speedup']:.2f} (bfloat16 {speed}); val bpb float32 {v['float32']['val_bpb']:.4f}, "
              f"bfloat16 {v['bfloat16']['val_bpb']:.4f}, difference {v['val_bpb_diff']:+.4f} "
              f"({'within' if v['within_noise'] else 'OUTSIDE'} the seed noise {v['noise']:.4f}; largest same-seed "
              f"difference {max(v['paired_diffs'], key=abs):+.4f})")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"cpu": cpu, "preset": args.preset, "rows": rows,
                                                   "verdicts": verdicts, "noise": noise_text}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
