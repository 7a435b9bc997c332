"""Checkpoints: written atomically, read as untrusted input (SPEC section 5).

A checkpoint is one torch file holding only tensors and plain Python values (so it loads
with `weights_only=True`): model and optimizer state, step, config, tokenizer, every RNG
state and the data hash. Writing goes to a temp file in the same directory, is fsynced,
then renamed over the old file, so a crash mid-save leaves the previous checkpoint whole.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch

from lrngpt.errors import UserError

INIT, LAST, BEST = "ckpt_init.pt", "ckpt_last.pt", "ckpt_best.pt"


def save_checkpoint(payload: dict, path: Path) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        torch.save(payload, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)  # make the rename itself durable
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def load_checkpoint(path: Path, map_location: str | torch.device = "cpu") -> dict:
    path = Path(path)
    if not path.is_file():
        raise UserError(f"no checkpoint at {path}; train first, or drop --resume to start a new run")
    try:
        payload = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as e:  # truncated, corrupted or not a torch file
        raise UserError(f"checkpoint {path} cannot be read ({type(e).__name__}); it is truncated or "
                        "corrupted: delete it, or resume from another checkpoint") from None
    if not isinstance(payload, dict) or "model" not in payload or "config" not in payload:
        raise UserError(f"{path} is not an lrn checkpoint (no model/config inside)")
    return payload


def find_checkpoint(run_dir: Path, which: str = "last") -> Path:
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise UserError(f"run directory {run_dir} does not exist")
    names = {"last": LAST, "best": BEST, "init": INIT}
    if which not in names:
        raise UserError(f"checkpoint must be one of last, best, init (got {which!r})")
    path = run_dir / names[which]
    if which == "best" and not path.exists():
        path = run_dir / LAST
    if not path.exists():
        raise UserError(f"{run_dir} has no {names[which]}; is it an lrn run directory?")
    return path
