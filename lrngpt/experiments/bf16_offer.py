"""The budget plan's offer of bfloat16 where the CPU computes it in hardware (`lrn sweep --minutes N
--dry-run`): `train.dtype=auto` stays float32 on every CPU (bfloat16 is not bit-identical), so the dry
run times the plan's largest model in both and names the setting when bfloat16 is MIN_SPEEDUP faster.
"""

from __future__ import annotations

from collections.abc import Callable

from lrngpt.device.distributed import resolve_device
from lrngpt.device.precision import DeviceCaps, device_caps
from lrngpt.errors import UserError
from lrngpt.experiments.grid import Point
from lrngpt.training import timing as run_timing
from lrngpt.training.precision_probe import dtype_step_seconds

MIN_SPEEDUP = 1.1  # below this a few probed steps cannot tell bfloat16 from float32 on a loaded machine
SEE = "docs/distributed.md#bfloat16-on-a-cpu"


def bf16_offer(points: list[Point], caps: DeviceCaps | None = None,
               measure: Callable[..., dict] | None = None) -> dict | None:
    """What the plan says of bfloat16 here ({"bf16", "speedup", "seconds", "line"}); None where it
    does not apply. `caps` and `measure`: this CPU's and the probe unless given (tests)."""
    cpu = [p for p in points if p.config.train.dtype in ("auto", "float32") and _on_cpu(p)]
    if not cpu:
        return None
    caps = caps or device_caps("cpu")
    status = caps.bf16_status
    if status != "native":
        return {"bf16": status, "speedup": None, "seconds": None, "line": None}
    largest = max(cpu, key=lambda p: run_timing.params(p.config))
    seconds = (measure or dtype_step_seconds)(largest.config, "cpu")
    speedup = seconds["float32"] / seconds["bfloat16"] if seconds["bfloat16"] > 0 else None
    # the dry run's line only for bfloat16 measured at least MIN_SPEEDUP times faster per step
    line = None if speedup is None or speedup < MIN_SPEEDUP else (
        f"bfloat16 would be {speedup:.2f}x faster per step here (measured); add --set train.dtype=bfloat16 "
        f"(not bit-identical to float32; see {SEE})")
    return {"bf16": status, "speedup": speedup, "seconds": seconds, "line": line}


def _on_cpu(p: Point) -> bool:
    try:
        return resolve_device(p.config.train.device) == "cpu"
    except UserError:  # a GPU point planned on a machine without one: not this offer's business
        return False
