"""`lrn doctor`: what this machine gives a run (lrngpt.api.machine)."""

from __future__ import annotations

import lrngpt.api as api
from lrngpt.cli.common import command, emit

FIELDS = """fields (--json):
  lrn, python, platform, torch   versions; cuda / cudnn: the CUDA and cuDNN torch was built with (null: a CPU build)
  devices            every device torch sees: name, memory_bytes, capability (CUDA compute capability),
                     bf16 / fp16 (autocast works there), bf16_fast (bfloat16 in hardware), tf32 (TF32 matmuls)
  cpu                vendor, name, isa (amx / avx512_bf16 / avx512 / avx2 / baseline; arm: sve / neon), flags,
                     torch_capability (torch's kernels), bf16 (native / emulated: typically slower / unknown),
                     fp16_units (float16 arithmetic in hardware)
  default_device     where train.device=auto runs
  precision          what train.dtype=auto resolves to there: dtype, tf32, grad_scaler, reason
  compile            the torch.compile probe: works, seconds, c_compiler (inductor needs one on a CPU), error
  threads            torch's intra-op and inter-op threads, the CPUs and those this process may use, OMP_NUM_THREADS
  cache              the cache directory (LRN_CACHE_DIR, else XDG_CACHE_HOME/lrngpt, else ~/.cache/lrngpt), free_bytes
  full_scale         lrn sweep embed-dim --scale full here: est_seconds (from the dry run's timed steps, float32)
                     and disk_bytes (download, token_arrays, checkpoints)"""


def register(sub) -> None:
    p = command(
        sub, "doctor", cmd_doctor, "what this machine gives a run: devices, precision, compile, cache, full-scale cost",
        "Report what a run gets on this machine, training and downloading nothing: versions, devices and their "
        "precision, the CPU, whether torch.compile works here (a tiny probe in a child process), threads, cache "
        "and the estimated time and disk of `lrn sweep embed-dim --scale full` here.",
        FIELDS + "\n\nexamples:\n  lrn doctor\n  lrn doctor --json --no-probe     # seconds: no compile probe")
    p.add_argument("--no-probe", action="store_true",
                   help="skip the torch.compile probe (on a CPU it compiles C++ and can take a minute)")
    p.add_argument("--probe-timeout", type=float, default=120.0, metavar="SECONDS",
                   help="give up on the torch.compile probe after this long (it is then reported as failing)")


def cmd_doctor(args) -> None:
    result = api.doctor(probe=not args.no_probe, probe_timeout=args.probe_timeout)
    emit(args, result, api.texts.doctor_text(result))
