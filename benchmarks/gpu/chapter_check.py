"""The book chapter's width study at its shape on one GPU, in one call: `bash benchmarks/gpu/run_all.sh`.

1. prepares `stories:100MB` (the embedded generator: no network needed; 23M training tokens at
   the 4,096-token BPE, so 4,000 steps of 64 x 256 read it 2.8 times, which the chapter's 550M
   tokens do not: the bpb are not the chapter's, the seconds are comparable);
2. runs the 8-point `embed-dim` sweep at the chapter's shape through the sweep engine
   (`--scale full`: 4,000 steps of 64 x 256, the chapter's evaluation windows) with
   train.dtype=auto;
3. trains d = 64 again with float32 + TF32, bfloat16, and bfloat16 + torch.compile;

and prints per point the training seconds (the chapter: 22-30 s), tokens/s, MFU against the
device's peak for the dtype used (PEAK_TFLOPS by GPU name; n/a for another GPU), val bpb, the
evaluation seconds and the overhead (the point's wall time minus training and evaluations), and
the sweep's own overhead (its wall time minus its points'). Everything goes to OUT: results.json,
results.md, each sweep's lines.txt / summary.* / figures and each run's config, summary and
metrics (not the checkpoints). Results are written after every run, so a time limit that cuts
the script leaves what was done.

    python benchmarks/gpu/chapter_check.py [--out DIR]     # on a CUDA machine
    python benchmarks/gpu/chapter_check.py --smoke         # the same code, tiny scale, CPU, seconds

MFU = tokens/s x 6 x (block x d x hidden + hidden x vocab) / peak: the MLP's matmul FLOPs of a
training step per token (forward 2, backward 4 per multiply-add); the embedding lookup is none.
"""

from __future__ import annotations

import lrngpt  # noqa: F401 - first: it sets OMP_WAIT_POLICY before torch loads OpenMP
import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

# Dense peak TFLOP/s by dtype from the vendors' datasheets (SXM parts; no sparsity). T4 and V100
# have no bfloat16 and no TF32.
PEAK_TFLOPS = {
    r"H200|H100": {"bfloat16": 989.0, "float16": 989.0, "tf32": 494.7, "float32": 66.9},
    r"A100": {"bfloat16": 312.0, "float16": 312.0, "tf32": 156.0, "float32": 19.5},
    r"\bL4\b": {"bfloat16": 121.0, "float16": 121.0, "tf32": 60.0, "float32": 30.3},
    r"\bT4\b": {"float16": 65.0, "float32": 8.1},
    r"V100": {"float16": 125.0, "float32": 15.7},
}
CHAPTER_SECONDS = "22-30 s per point (d = 64: 23 s)"
VARIANTS = [("float32+tf32", ["train.dtype=float32", "train.tf32=true"]),
            ("bfloat16", ["train.dtype=bfloat16"]),
            ("bfloat16+compile", ["train.dtype=bfloat16", "train.compile=true"])]


def peak_tflops(gpu_name: str | None, dtype: str, tf32: bool) -> float | None:
    if not gpu_name:
        return None
    key = "tf32" if dtype == "float32" and tf32 else dtype
    for pattern, peaks in PEAK_TFLOPS.items():
        if re.search(pattern, gpu_name):
            return peaks.get(key)
    return None


def flops_per_token(model: dict, vocab: int) -> float:
    return 6.0 * (model["block_size"] * model["n_embd"] * model["n_hidden"] + model["n_hidden"] * vocab)


class Timers:
    """Wall time of each training run and of its evaluations, recorded by wrapping lrngpt.train."""

    def __init__(self):
        import importlib

        lt = importlib.import_module("lrngpt.training.trainer")  # the loop's module (its evaluate_bpb)
        rn = importlib.import_module("lrngpt.experiments.runner")  # where a sweep calls train_run
        ev = importlib.import_module("lrngpt.inference.evaluate")  # the final train bpb, split by reads, evaluates there

        self.calls: list[dict] = []
        self._eval = 0.0
        real_train, real_eval = rn.train_run, lt.evaluate_bpb

        def timed_eval(*a, **k):
            t0 = time.perf_counter()
            try:
                return real_eval(*a, **k)
            finally:
                self._eval += time.perf_counter() - t0

        def timed_train(cfg, run_dir, *a, **k):
            self._eval, t0 = 0.0, time.perf_counter()
            result = real_train(cfg, run_dir, *a, **k)
            self.calls.append({"run_dir": str(run_dir), "wall_seconds": time.perf_counter() - t0,
                               "eval_seconds": self._eval})
            return result

        rn.train_run, lt.evaluate_bpb, ev.evaluate_bpb = timed_train, timed_eval, timed_eval


def run_one_sweep(label: str, scale: str, sets: list[str], axes: list[str], work: Path, out: Path,
                  timers: Timers, gpu: str | None, log) -> dict:
    from lrngpt.experiments.grid import resolve_sweep
    from lrngpt.experiments.runner import run_sweep

    sweep = resolve_sweep("embed-dim", scale, sets, axes)
    sweep_dir = work / label
    first = len(timers.calls)
    t0 = time.perf_counter()
    run_sweep(sweep, sweep_dir, log=log, progress=False)
    wall = time.perf_counter() - t0
    rows = []
    for call in timers.calls[first:]:
        run = Path(call["run_dir"])
        s = json.loads((run / "summary.json").read_text())
        cfg = json.loads((run / "config.json").read_text())
        tps = s["tokens_seen"] / max(s["seconds"], 1e-9)
        peak = peak_tflops(gpu, s.get("dtype", "float32"), bool(s.get("tf32")))
        tflops = tps * flops_per_token(cfg["model"], cfg["data"]["vocab_size"]) / 1e12
        rows.append({"variant": label, "point": run.name, "d": cfg["model"]["n_embd"], "dtype": s.get("dtype"),
                     "tf32": s.get("tf32"), "compile": s.get("compile"), "steps": s["step"],
                     "train_seconds": s["seconds"], "tokens_per_s": round(tps), "model_tflops": round(tflops, 3),
                     "peak_tflops": peak, "mfu": round(tflops / peak, 4) if peak else None,
                     "val_bpb": s["val_bpb"], "train_bpb": s["train_bpb"], "passes": s["passes"],
                     "eval_seconds": round(call["eval_seconds"], 2), "wall_seconds": round(call["wall_seconds"], 2),
                     "overhead_seconds": round(call["wall_seconds"] - s["seconds"] - call["eval_seconds"], 2)})
    copy_small_files(sweep_dir, out / label)
    return {"label": label, "scale": scale, "sets": sets, "axes": axes, "wall_seconds": round(wall, 2),
            "sweep_overhead_seconds": round(wall - sum(c["wall_seconds"] for c in timers.calls[first:]), 2),
            "rows": rows}


def copy_small_files(src: Path, dst: Path) -> None:
    """What a sweep wrote, without the checkpoints (tens of MB each)."""
    for path in src.rglob("*"):
        if path.is_file() and not path.name.endswith(".pt") and ".lrn-lock" not in path.name:
            target = dst / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


def table(results: dict) -> str:
    head = ("| variant | point | dtype | TF32 | compile | train s | tokens/s | MFU | val bpb | eval s | overhead s |\n"
            "| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    lines = [head]
    for sw in results["sweeps"]:
        for r in sw["rows"]:
            mfu = "n/a" if r["mfu"] is None else f"{100 * r['mfu']:.1f}%"
            lines.append(f"| {r['variant']} | {r['point']} | {r['dtype']} | {r['tf32']} | {r['compile']} | "
                         f"{r['train_seconds']:.1f} | {r['tokens_per_s']:,} | {mfu} | {r['val_bpb']:.4f} | "
                         f"{r['eval_seconds']:.1f} | {r['overhead_seconds']:.2f} |")
    lines.append("")
    for sw in results["sweeps"]:
        lines.append(f"- {sw['label']}: {sw['wall_seconds']:.1f} s wall, sweep overhead (wall minus its runs) "
                     f"{sw['sweep_overhead_seconds']:.2f} s")
    for label, err in results["refused"].items():
        lines.append(f"- {label}: not run ({err})")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT") or "gpu-out", help="where results go (default: $OUT, "
                                                                          "else ./gpu-out)")
    ap.add_argument("--smoke", action="store_true",
                    help="the same code on the CPU at the tiny scale, 2 widths, a few steps (the test suite runs it); "
                         "the compile variant is left out (inductor compiles C++ on a CPU: about 30 s)")
    ap.add_argument("--corpus", default="stories:100MB", help="the corpus (default stories:100MB)")
    args = ap.parse_args(argv)

    import torch

    from lrngpt.runconfig.schema import DataConfig
    from lrngpt.data.prepared import prepare
    from lrngpt.errors import UserError

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="lrn-chapter-check-"))

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    if args.smoke:
        scale, device, corpus = "tiny", "cpu", "stories:300KB"
        base_sets = ["train.device=cpu", "train.steps=6", "train.eval_every=3"]
        sweep_axes = ["model.n_embd=8,64"]
        variants = VARIANTS[:2]
    else:
        if not torch.cuda.is_available():
            print("chapter_check: torch sees no CUDA GPU; run it on a GPU machine, or --smoke here", file=sys.stderr)
            raise SystemExit(2)
        scale, device, corpus = "full", "cuda", args.corpus
        base_sets = ["train.device=cuda"]
        sweep_axes = []
        variants = VARIANTS
    gpu = torch.cuda.get_device_name(0) if device == "cuda" else None
    results: dict = {"device": device, "gpu": gpu, "torch": torch.__version__, "cuda": torch.version.cuda,
                     "scale": scale, "corpus": corpus, "chapter": CHAPTER_SECONDS, "sweeps": [], "refused": {}}

    def save() -> None:
        (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
        (out / "results.md").write_text(table(results))

    t0 = time.perf_counter()
    vocab = 512 if args.smoke else 4096
    data = prepare(DataConfig(corpus=corpus, vocab_size=vocab), log=log)
    results["prepare_seconds"] = round(time.perf_counter() - t0, 1)
    results["train_tokens"] = int(len(data.tokens("train")))
    results["val_tokens"] = int(len(data.tokens("val")))
    log(f"prepared {corpus}: {results['train_tokens']:,} training tokens in {results['prepare_seconds']} s")
    save()
    timers = Timers()
    sets = [*base_sets, f"data.corpus={corpus}"]
    try:
        plan = [("auto", [*sets, "train.dtype=auto"], sweep_axes)]
        plan += [(label, [*sets, *extra], ["model.n_embd=64"]) for label, extra in variants]
        for label, s, axes in plan:
            try:
                results["sweeps"].append(run_one_sweep(label, scale, s, axes, work, out, timers, gpu, log))
            except UserError as e:  # bfloat16 on a GPU without it: say so, go on
                results["refused"][label] = str(e)
                log(f"{label}: not run: {e}")
            save()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results["total_seconds"] = round(time.perf_counter() - t0, 1)
    save()
    print(table(results))
    print(json.dumps({k: results[k] for k in ("device", "gpu", "prepare_seconds", "total_seconds")}))
    return results


if __name__ == "__main__":
    main()
