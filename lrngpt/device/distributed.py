"""Where a job runs: the device (`resolve_device`), and data-parallel training under torchrun (RANK,
WORLD_SIZE, LOCAL_RANK; without them one process and every call a no-op). gloo on CPU, nccl on CUDA;
every rank draws the same global batch and keeps its slice, and rank 0 alone writes files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from lrngpt.core import log as logging
from lrngpt.errors import UserError, option


def resolve_device(name: str = "auto") -> str:
    """The device to run on: auto is cuda, else mps, else cpu; a named one must exist here."""
    if name != "auto":
        try:
            kind, index = torch.device(name).type, torch.device(name).index or 0
        except (RuntimeError, ValueError):
            kind, index = "", 0
        if kind not in ("cpu", "cuda", "mps"):
            raise UserError(f"unknown device {name!r}; use auto, cpu, cuda, cuda:N or mps")
        count = {"cpu": 1, "mps": int(torch.backends.mps.is_available()),
                 "cuda": torch.cuda.device_count() if torch.cuda.is_available() else 0}[kind]
        if index >= count:
            raise UserError(f"device {name} asked for, but torch sees {count} {kind} device(s) here; "
                            f"use {option('device')} cpu")
        logging.debug(f"device: {name}, as asked")
        return name
    if torch.cuda.is_available():
        logging.debug(f"device auto: cuda ({torch.cuda.device_count()} GPU(s), the first is {torch.cuda.get_device_name(0)})")
        return "cuda"
    if torch.backends.mps.is_available():
        logging.debug("device auto: mps (no CUDA GPU)")
        return "mps"
    logging.debug(f"device auto: cpu (no CUDA GPU, no MPS; torch uses {torch.get_num_threads()} threads)")
    return "cpu"


@dataclass(frozen=True)
class Distributed:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @classmethod
    def from_env(cls) -> Distributed:
        env = os.environ
        return cls(int(env.get("RANK", 0)), int(env.get("WORLD_SIZE", 1)), int(env.get("LOCAL_RANK", 0)))

    @property
    def master(self) -> bool:
        return self.rank == 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    def device(self, device: str) -> str:
        """One GPU per process: cuda becomes cuda:LOCAL_RANK."""
        return f"cuda:{self.local_rank}" if self.enabled and device.startswith("cuda") else device

    def init(self, device: str) -> None:
        if not self.enabled:
            return
        if device.startswith("cuda"):
            torch.cuda.set_device(device)
        if not dist.is_initialized():
            dist.init_process_group(backend="nccl" if device.startswith("cuda") else "gloo")

    def barrier(self) -> None:
        if self.enabled:
            dist.barrier()

    def mean(self, value: torch.Tensor) -> torch.Tensor:
        """The mean over ranks (the global batch's loss, so every rank logs and stops alike)."""
        if not self.enabled:
            return value
        value = value.clone()
        dist.all_reduce(value)
        return value / self.world_size

    def wrap(self, model: torch.nn.Module, device: str) -> torch.nn.Module:
        if not self.enabled:
            return model

        ids = [torch.device(device).index] if device.startswith("cuda") else None
        return DistributedDataParallel(model, device_ids=ids)

    def close(self) -> None:
        if self.enabled and dist.is_initialized():
            dist.destroy_process_group()
