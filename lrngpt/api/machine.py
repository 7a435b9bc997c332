"""What this machine gives a run: `lrn doctor`. The torch.compile probe runs in a child process with a
time limit: on a CPU inductor needs a C++ compiler, and a missing or broken one is reported, not raised."""

from __future__ import annotations

import math
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import torch

from lrngpt.api.checks import checked
from lrngpt.core.version import __version__
from lrngpt.corpora.download import cache_dir
from lrngpt.corpora.tinystories import EXPECTED
from lrngpt.data.sizing import STORIES_BYTES_PER_TOKEN
from lrngpt.device.distributed import resolve_device
from lrngpt.device.precision import cpu_info, device_caps, resolve_precision
from lrngpt.errors import UserError, option
from lrngpt.experiments.dry_run import estimate_points
from lrngpt.experiments.grid import resolve_sweep
from lrngpt.models.build import param_breakdown
from lrngpt.training.timing import PROBE_STEPS, read_only_cache

# a tiny function through torch.compile (a hung or crashing compiler cannot take lrn doctor with it)
COMPILE_PROBE = ("import torch\n"
                 "f = lambda x: torch.tanh(x @ x.T) * 2 + 1\n"
                 "x = torch.randn(8, 8, device={device!r})\n"
                 "assert torch.allclose(torch.compile(f)(x), f(x), atol=1e-5)\n"
                 "print('OK')\n")
CHECKPOINTS_PER_RUN = 3  # ckpt_init, ckpt_best, ckpt_last
MAX_PROBE_TIMEOUT = 86400  # seconds: subprocess's timeout takes no infinity, and a day is patience enough


def compile_probe(device: str, timeout: float) -> dict:
    """Whether torch.compile compiles and runs a tiny function on `device` here, and how long it took."""
    t0, error = time.perf_counter(), None
    compiler = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++") or shutil.which("clang++")
    try:
        proc = subprocess.run([sys.executable, "-c", COMPILE_PROBE.format(device=device)], capture_output=True,
                              text=True, timeout=timeout)
        ok = proc.returncode == 0 and proc.stdout.strip().endswith("OK")
        if not ok:
            lines = [line for line in (proc.stderr or proc.stdout).strip().splitlines() if line.strip()]
            error = lines[-1][:300] if lines else f"exit code {proc.returncode}"
    except subprocess.TimeoutExpired:
        ok, error = False, f"no answer within {timeout:g} s (the compiler may still work, slowly; --probe-timeout)"
    return {"probed": True, "works": ok, "seconds": round(time.perf_counter() - t0, 1), "c_compiler": compiler,
            "error": error}


def _fp16_on_cpu() -> bool:
    try:
        with torch.autocast("cpu", dtype=torch.float16):
            return (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float16
    except (RuntimeError, TypeError):
        return False


def devices() -> list[dict]:
    """Every device torch sees: the CPU, each CUDA GPU, MPS; one row each from device_caps."""
    cuda = torch.cuda.device_count() if torch.cuda.is_available() else 0
    names = ["cpu", *(f"cuda:{i}" for i in range(cuda)), *["mps"] * torch.backends.mps.is_available()]
    return [{"device": name, "name": caps.name, "memory_bytes": caps.memory_bytes,
             "capability": list(caps.capability) if caps.capability else None, "bf16": caps.bf16,
             "bf16_fast": bool(caps.bf16_native) or caps.kind == "mps",  # (MPS: none to read, autocast is)
             "fp16": caps.kind != "cpu" or _fp16_on_cpu(), "tf32": caps.tf32}
            for name, caps in ((name, device_caps(name)) for name in names)]


def _free_bytes(path: Path) -> int | None:
    """Free bytes on the disk of `path`, or of its nearest existing parent (the cache may not exist yet)."""
    try:
        return shutil.disk_usage(next(p for p in (path, *path.parents) if p.exists())).free
    except (OSError, StopIteration):
        return None


def full_scale_cost(device: str) -> dict:
    """Time and disk of `lrn sweep embed-dim --scale full` on `device`, nothing downloaded or trained."""
    sweep = resolve_sweep("embed-dim", "full", [f"train.device={device}"])
    with read_only_cache():  # the doctor writes nothing, not even the probe cache
        est = estimate_points(sweep.points, quick=True, log=lambda m: None)
    seconds = sum(e["est_seconds"] or 0 for e in est.values())
    text = sum(size for size, _ in EXPECTED.values())
    tokens = int(text / STORIES_BYTES_PER_TOKEN) * 2  # uint16 ids (a 4,096-token vocabulary)
    params = [param_breakdown("mlp", p.config.model)["total"] for p in sweep.points]
    # a checkpoint holds the float32 weights and AdamW's two moments (ckpt_init: no moments yet)
    checkpoints = sum(4 * n * (1 + 3 * (CHECKPOINTS_PER_RUN - 1)) for n in params)
    return {"sweep": "embed-dim", "points": len(sweep.points), "device": device, "est_seconds": round(seconds, 1),
            "estimate": f"{PROBE_STEPS} timed float32 training steps of the smallest and the largest model on "
                        "this device, extrapolated to 4,000 steps and the evaluations (lrn sweep --dry-run's probe)",
            "disk_bytes": text + tokens + checkpoints,
            "disk": {"download": text, "token_arrays": tokens, "checkpoints": checkpoints}}


@checked
def doctor(probe: bool = True, probe_timeout: float = 120.0) -> dict:
    """What this machine gives a run (`lrn doctor`): versions, devices, precision, the torch.compile probe
    (`probe=False` skips it; given up after `probe_timeout` seconds, at most a day), threads, cache and the
    full-scale sweep's cost here; nothing trained or downloaded.

    Example: ``lrngpt.doctor(probe=False)["default_device"]``"""
    if not (math.isfinite(probe_timeout) and 0 < probe_timeout <= MAX_PROBE_TIMEOUT):  # (a number: @checked)
        raise UserError(f"{option('probe_timeout')} must be a positive, finite number of seconds up to {MAX_PROBE_TIMEOUT:,} "
                        f"(a day), got {probe_timeout!r}; {option('probe', False)} skips the probe")

    device = resolve_device("auto")
    precision = resolve_precision("auto", device_caps(device))
    cache = cache_dir()
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    return {
        "lrn": __version__, "python": platform.python_version(), "platform": platform.platform(),
        "torch": torch.__version__, "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.cuda.is_available() else None,
        "cuda_available": torch.cuda.is_available(),
        "devices": devices(),
        "cpu": cpu_info(),
        "default_device": device,
        "precision": {**precision.to_dict(), "device": device},
        "compile": compile_probe(device, probe_timeout) if probe else {"probed": False, "works": None},
        "threads": {"torch": torch.get_num_threads(), "interop": torch.get_num_interop_threads(),
                    "cpu_count": os.cpu_count(), "usable_cpus": affinity,
                    "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS")},
        "cache": {"dir": str(cache), "exists": cache.is_dir(), "free_bytes": _free_bytes(cache)},
        "full_scale": full_scale_cost(device),
    }


