"""Which number format a run trains in, chosen for its device (`train.dtype`, `train.tf32`).

`resolve_precision(requested, caps, tf32)` is a pure function of what was asked for and what the device
can do (`DeviceCaps`), so every branch, the CUDA ones included, is tested on a CPU with a made-up device.
auto: bfloat16 autocast on CUDA that has it (capability 8.0 on), else float16 + a GradScaler; float32 on
CPU and MPS. float32 matmuls run as TF32 on CUDA from 8.0 on with train.tf32. The GradScaler's state is
checkpointed, so a resume stays bit-exact. A CPU without bfloat16 instructions (`cpu_bf16`) emulates
it, slower than float32: a run asking for it there is warned (`emulation_warning`).
"""

from __future__ import annotations

import platform
from dataclasses import asdict, dataclass

import psutil
import torch

from lrngpt.errors import UserError
from lrngpt.runconfig.schema import DTYPES, check_dtype

TF32_CAPABILITY = (8, 0)  # TF32 tensor cores: Ampere (A100) and later


@dataclass(frozen=True)
class DeviceCaps:
    """What a device can do, as far as precision goes."""

    kind: str  # cpu | cuda | mps
    name: str
    capability: tuple[int, int] | None = None  # CUDA compute capability
    bf16: bool = False  # bfloat16 in hardware (CUDA), or CPU / MPS autocast
    memory_bytes: int | None = None
    bf16_native: bool | None = None  # bfloat16 instructions (CPU: from its flags; None: cannot tell)

    @property
    def tf32(self) -> bool:
        return self.kind == "cuda" and self.capability is not None and tuple(self.capability) >= TF32_CAPABILITY

    @property
    def bf16_status(self) -> str:
        """native, emulated or unknown: whether bfloat16 runs on instructions of its own (bf16_native)."""
        return "unknown" if self.bf16_native is None else "native" if self.bf16_native else "emulated"


@dataclass(frozen=True)
class Precision:
    """The resolved choice: what the run computes in."""

    requested: str  # train.dtype as written
    dtype: str  # float32 | bfloat16 | float16
    tf32: bool  # float32 matmuls as TF32 (CUDA only)
    grad_scaler: bool  # float16: the loss is scaled (torch.amp.GradScaler)
    reason: str  # one phrase: why this dtype

    @property
    def autocast_dtype(self):
        """The torch dtype for torch.autocast, or None for plain float32."""
        return {"bfloat16": torch.bfloat16, "float16": torch.float16}.get(self.dtype)

    def to_dict(self) -> dict:
        return asdict(self)


def resolve_precision(requested: str, caps: DeviceCaps, tf32: bool = True) -> Precision:
    """The precision a run on a device with `caps` trains in when train.dtype is `requested`."""
    check_dtype(requested)
    dtype, reason = requested, "asked for"
    if requested == "auto":
        if caps.kind == "cuda":
            dtype, reason = (("bfloat16", f"auto: {caps.name} has bfloat16") if caps.bf16 else
                             ("float16", f"auto: {caps.name} has no bfloat16 (capability "
                                         f"{_cap(caps.capability)}), float16 with loss scaling"))
        else:
            dtype, reason = "float32", f"auto: float32 on {caps.kind}"
    if dtype == "bfloat16" and caps.kind == "cuda" and not caps.bf16:
        raise UserError(f"train.dtype=bfloat16, but {caps.name} (capability {_cap(caps.capability)}) has no "
                        "bfloat16; use train.dtype=float16 (or auto, which picks it) or float32")
    use_tf32 = dtype == "float32" and bool(tf32) and caps.tf32
    return Precision(requested=requested, dtype=dtype, tf32=use_tf32, grad_scaler=dtype == "float16",
                     reason=reason)


def _cap(capability) -> str:
    return "unknown" if capability is None else f"{capability[0]}.{capability[1]}"


def device_caps(device: str) -> DeviceCaps:
    """The capabilities of `device` (cpu, cuda, cuda:N, mps) as torch sees them here."""
    dev = torch.device(device)
    if dev.type == "cuda":
        index = dev.index if dev.index is not None else torch.cuda.current_device()
        props = torch.cuda.get_device_properties(index)
        with torch.cuda.device(index):
            bf16 = torch.cuda.is_bf16_supported(including_emulation=False)
        return DeviceCaps("cuda", props.name, (props.major, props.minor), bool(bf16), int(props.total_memory),
                          bool(bf16))
    if dev.type == "mps":
        return DeviceCaps("mps", "Apple MPS", None, True, None)
    return DeviceCaps("cpu", cpu_name(), None, True, psutil.virtual_memory().total, _bf16_native(cpu_flags()))


def cpu_name() -> str:
    """The CPU's model name (Linux /proc/cpuinfo), else the platform's word for it."""
    return _cpuinfo(("model name",)) or platform.processor() or platform.machine() or "cpu"


# x86: AVX-512 BF16 (Cooper Lake, Zen 4 on) and AMX (Sapphire Rapids on) compute bfloat16 dot products;
# aarch64: the bf16 feature (BFDOT, BFMMLA: ARMv8.6, Graviton 3, Apple M2 on)
BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})
FP16_FLAGS = frozenset({"avx512_fp16", "amx_fp16", "fphp"})  # float16 arithmetic in hardware
# the flags `lrn doctor` names: what decides the ISA level and the low-precision units
NAMED_FLAGS = ("avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_fp16",
               "asimd", "sve", "bf16", "fphp")


def _cpuinfo(keys: tuple[str, ...], path: str = "/proc/cpuinfo") -> str | None:
    """The first value of any of `keys` in /proc/cpuinfo (the first CPU's), None where not readable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                key, sep, value = line.partition(":")
                if sep and key.strip() in keys:
                    return value.strip()
    except OSError:
        pass
    return None


def cpu_flags(path: str = "/proc/cpuinfo") -> frozenset[str]:
    """The first CPU's feature flags (x86 `flags`, aarch64 `Features`); empty where not readable (macOS)."""
    return frozenset((_cpuinfo(("flags", "Features"), path) or "").split())


def _bf16_native(flags) -> bool | None:
    """Whether a CPU with these flags has bfloat16 instructions; None where none were read (macOS)."""
    return bool(set(flags) & BF16_FLAGS) if flags else None


def cpu_bf16(flags) -> str:
    """native (bfloat16 instructions), emulated or unknown (no flags to read), from a CPU's flags."""
    return DeviceCaps("cpu", "cpu", bf16_native=_bf16_native(flags)).bf16_status


def cpu_isa(flags) -> str:
    """The CPU's vector ISA level as far as precision goes (unknown without flags)."""
    flags = set(flags)
    if not flags:
        return "unknown"
    for level, need in (("amx", "amx_bf16"), ("avx512_bf16", "avx512_bf16"), ("avx512", "avx512f"),
                        ("avx2", "avx2"), ("sve", "sve"), ("neon", "asimd")):
        if need in flags:
            return level
    return "baseline"


def emulation_warning(precision: Precision, caps: DeviceCaps) -> str | None:
    """The warning for bfloat16 asked for on a CPU that has no bfloat16 instructions (or may not)."""
    if precision.dtype != "bfloat16" or caps.kind != "cpu" or caps.bf16_native:
        return None
    why = ("has no bfloat16 instructions (avx512_bf16, amx_bf16; arm: bf16)" if caps.bf16_native is False
           else "may have no bfloat16 instructions (its flags could not be read)")
    return (f"warning: train.dtype=bfloat16 on {caps.name}, which {why}: bfloat16 is emulated here, typically "
            "slower than float32, and not bit-identical to it; float32 (what auto picks on a CPU) is the exact default")


def bf16_hardware(precision: Precision, caps: DeviceCaps) -> str | None:
    """What a bfloat16 run's summary records: native, emulated or unknown; None for another dtype."""
    return caps.bf16_status if precision.dtype == "bfloat16" else None


def cpu_vendor(path: str = "/proc/cpuinfo") -> str | None:
    """The CPU's vendor (x86 `vendor_id`: GenuineIntel, AuthenticAMD; aarch64 `CPU implementer`)."""
    return _cpuinfo(("vendor_id", "CPU implementer"), path) or platform.machine() or None


def cpu_info(flags=None) -> dict:
    """What `lrn doctor` says of the CPU."""
    flags = cpu_flags() if flags is None else frozenset(flags)
    return {"vendor": cpu_vendor(), "name": cpu_name(), "isa": cpu_isa(flags),
            "flags": [f for f in NAMED_FLAGS if f in flags], "torch_capability": torch.backends.cpu.get_cpu_capability(),
            "bf16": cpu_bf16(flags), "fp16_units": bool(flags & FP16_FLAGS)}


def apply_tf32(precision: Precision, device: str) -> None:
    """Set torch's TF32 switches (the matmul precision, which matmul.allow_tf32 reads, and cuDNN's), both
    ways, for a CUDA run; others leave them alone (on a CPU the matmul precision would change its matmuls)."""
    if not device.startswith("cuda"):
        return
    torch.backends.cudnn.allow_tf32 = precision.tf32
    torch.set_float32_matmul_precision("high" if precision.tf32 else "highest")


def grad_scaler(precision: Precision, device: str):
    """A GradScaler for a float16 run (None otherwise), on the device's kind (cuda, cpu, mps)."""
    return None if not precision.grad_scaler else torch.amp.GradScaler(torch.device(device).type)


def saved_dtype(ckpt: dict) -> str | None:
    """The dtype a checkpoint recorded for its steps; None when it has no such record."""
    recorded = ckpt.get("precision")
    return recorded["dtype"] if isinstance(recorded, dict) and recorded.get("dtype") in DTYPES[1:] else None


def describe(precision: Precision, caps: DeviceCaps, compile_: bool) -> str:
    """The run's first log line: device, dtype, TF32, compile."""
    where = caps.name + (f", capability {_cap(caps.capability)}" if caps.capability else "")
    scaler = " + GradScaler" if precision.grad_scaler else ""
    tf32 = "on" if precision.tf32 else ("off" if caps.kind == "cuda" else "n/a")
    return (f"device {caps.kind} ({where}): {precision.dtype}{scaler} ({precision.reason}), TF32 {tf32}, "
            f"compile {'on' if compile_ else 'off'}")
