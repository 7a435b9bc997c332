"""The budget plan's offer of bfloat16 on a CPU that has bfloat16 instructions (`lrn sweep --minutes N --dry-run`).

`train.dtype=auto` stays float32 on every CPU: the tables and findings were measured in it, and
bfloat16 is not bit-identical to it. Where the CPU computes bfloat16 in hardware (avx512_bf16,
amx_bf16, arm bf16: lrngpt.device.precision.cpu_bf16), the dry run times a few training steps of the
plan's largest model in both dtypes (lrngpt.training.precision_probe) and, when bfloat16 is at
least MIN_SPEEDUP times faster per step, says so in one line naming the setting. Where bfloat16 is
emulated (most CPUs before 2020-2022) nothing is probed and nothing is offered.
"""

from __future__ import annotations

from collections.abc import Callable

from lrngpt.device.distributed import resolve_device
from lrngpt.device.precision import DeviceCaps, device_caps
from lrngpt.errors import UserError
from lrngpt.experiments.grid import Point
from lrngpt.models.build import param_breakdown
from lrngpt.training.precision_probe import dtype_step_seconds

MIN_SPEEDUP = 1.1  # below this a few probed steps cannot tell bfloat16 from float32 on a loaded machine
SEE = "docs/distributed.md#bfloat16-on-a-cpu"


def offer_line(bf16: str, speedup: float | None) -> str | None:
    """The dry run's line: only for native bfloat16 measured at least MIN_SPEEDUP times faster per step."""
    if bf16 != "native" or speedup is None or speedup < MIN_SPEEDUP:
        return None
    return (f"bfloat16 would be {speedup:.2f}x faster per step here (measured); add --set train.dtype=bfloat16 "
            f"(not bit-identical to float32; see {SEE})")


def bf16_offer(points: list[Point], caps: DeviceCaps | None = None,
               measure: Callable[..., dict] | None = None) -> dict | None:
    """What the plan says of bfloat16 here: {"bf16": native | emulated | unknown, "speedup", "seconds",
    "line"}; None where it does not apply (no CPU point, or a dtype other than auto / float32 asked
    for). `caps` and `measure` are this CPU's and the probe, unless given (tests give made-up ones)."""
    cpu = [p for p in points if p.config.train.dtype in ("auto", "float32") and _on_cpu(p)]
    if not cpu:
        return None
    caps = caps or device_caps("cpu")
    status = "unknown" if caps.bf16_native is None else "native" if caps.bf16_native else "emulated"
    if status != "native":
        return {"bf16": status, "speedup": None, "seconds": None, "line": None}
    largest = max(cpu, key=lambda p: param_breakdown(p.config.model_type, p.config.model)["total"])
    seconds = (measure or dtype_step_seconds)(largest.config, "cpu")
    speedup = seconds["float32"] / seconds["bfloat16"] if seconds["bfloat16"] > 0 else None
    return {"bf16": status, "speedup": speedup, "seconds": seconds, "line": offer_line(status, speedup)}


def _on_cpu(p: Point) -> bool:
    try:
        return resolve_device(p.config.train.device) == "cpu"
    except UserError:  # a GPU point planned on a machine without one: not this offer's business
        return False
