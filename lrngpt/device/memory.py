"""How much memory a device has free (psutil's count for the machine, torch's for a GPU), and the refusal
of work whose arrays alone would not fit, said before anything is allocated."""

from __future__ import annotations

import psutil
import torch
from tqdm import tqdm

from lrngpt.errors import UserError


def training_memory(params: int, batch_size: int, seq_len: int, vocab_size: int) -> int:
    """The bytes one training step needs at the least: fp32 weights, gradients and AdamW's two
    moments (16 bytes a parameter) and one batch of fp32 logits."""
    return 16 * params + 4 * batch_size * seq_len * vocab_size


def check_memory(n_bytes: int, what: str, fix: str, device: str = "cpu") -> None:
    """Refuse work whose arrays alone need more memory than the device has free."""
    if str(device).startswith("cuda"):
        try:
            free = torch.cuda.mem_get_info(torch.device(device))[0]
        except Exception:  # no driver, no device: let torch say so later
            return
    else:
        free = psutil.virtual_memory().available  # (Linux's MemAvailable; macOS's and Windows' own count)
    if n_bytes > free:
        where = "this machine" if str(device) == "cpu" else str(device)
        raise UserError(f"{what} needs {tqdm.format_sizeof(n_bytes, 'B')} of memory, but {where} has "
                        f"{tqdm.format_sizeof(free, 'B')} free; {fix}")

