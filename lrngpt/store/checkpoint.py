"""Checkpoints: one schema (`make_payload`), written atomically, read as untrusted input.

A checkpoint holds only tensors and plain values, so it loads with `torch.load(weights_only=True)`.
Required: model (the state_dict), config (the RunConfig as a dict), tokenizer (its JSON), step and
schema. Besides: tokenizer_hash, data_key (None: not trained here), optimizer, rng (every random
state, for exact resume), best_val and best_step, seconds, schedules (what `--resume --extend`
changed), precision (what the steps computed in), scaler (float16's GradScaler) and source.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from lrngpt.core import log as logging
from lrngpt.core.fsio import USER_ERRNOS, atomic_open, check_regular, describe_os_error, user_path
from lrngpt.errors import UserError, option
from lrngpt.runconfig.schema import from_dict

SCHEMA = 1
REQUIRED = ("model", "config", "tokenizer", "step")
RETRY = "use another checkpoint, or train again"
DAMAGED = f"it is damaged: {RETRY}"


def make_payload(model_state: dict, config: dict, tokenizer, step: int, *, source: str,
                 data_key: str | None = None, optimizer: dict | None = None, rng: dict | None = None,
                 best_val: float = float("inf"), best_step: int = 0, seconds: float = 0.0,
                 **extra: Any) -> dict:
    """The checkpoint dict; `tokenizer` is an lrngpt Tokenizer."""
    return {
        "schema": SCHEMA, "source": source,
        "model": model_state, "config": config, "step": int(step),
        "tokenizer": tokenizer.to_str(), "tokenizer_hash": tokenizer.hash, "data_key": data_key,
        "optimizer": optimizer, "rng": rng,
        "best_val": best_val, "best_step": best_step, "seconds": seconds, **extra,
    }


def save_checkpoint(payload: dict, path: Path, replace: Callable[..., None] | None = None) -> None:
    """Write `path` atomically; `replace(tmp, path, digest=)` puts the finished file in place. The zip is
    made in memory first: a failed write is then the OSError itself (torch.save would wrap it in a
    RuntimeError naming no cause), and its digest is taken without reading the file again."""
    payload = {k: v for k, v in payload.items() if k != "run_config"}  # what load_checkpoint adds: not saved
    start = time.perf_counter()
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    data = buffer.getbuffer()  # (a view, not a copy: the zip is held in memory once)
    put = None if replace is None else (lambda tmp, dst: replace(tmp, dst, digest=hashlib.sha256(data).hexdigest()))
    with atomic_open(path, "wb", replace=put) as f:
        f.write(data)
    logging.debug(f"checkpoint: step {payload.get('step')} saved to {path} ({len(data):,} bytes, "
                  f"{time.perf_counter() - start:.2f} s)")


def load_checkpoint(path: Path, map_location: str | torch.device = "cpu") -> dict:
    path = Path(path)
    if not path.is_file():
        check_regular(path, "checkpoint")  # a FIFO or a device: named (opening a FIFO would wait for ever)
        with user_path(path, "checkpoint"):
            open(path, "rb").close()  # says what is there instead: nothing, a directory, a broken link
        raise UserError(f"checkpoint {path} is not a regular file; give a checkpoint lrn wrote")
    try:
        payload = torch.load(path, map_location=map_location, weights_only=True)
    except OSError as e:  # a permission, a mount: we cannot read it; else (EINVAL, a seek past a cut end) the bytes
        if e.errno in USER_ERRNOS:
            raise UserError(describe_os_error(path, e, "checkpoint")) from None
        raise UserError(_corrupt(path, e)) from None
    except RuntimeError as e:
        if any(s in str(e) for s in ("CUDA", "device", "mps", "Expected one of")):  # cannot be placed there
            raise UserError(f"checkpoint {path} cannot be placed on {map_location} ({str(e).splitlines()[0]}); "
                            f"use {option('device')} cpu") from None
        raise UserError(_corrupt(path, e)) from None
    except (pickle.UnpicklingError, zipfile.BadZipFile, EOFError, ValueError, KeyError, AttributeError) as e:
        raise UserError(_corrupt(path, e)) from None
    if not isinstance(payload, dict) or "model" not in payload or "config" not in payload:
        raise UserError(f"{path} is not an lrn checkpoint (no model/config inside)")
    schema = payload.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool) or schema < 1:
        raise UserError(f"checkpoint {path}: schema must be a positive whole number (got {schema!r}); {DAMAGED}")
    if schema > SCHEMA:
        raise UserError(f"checkpoint {path} is schema {schema}, newer than this lrn reads ({SCHEMA}); upgrade lrn "
                        "(pip install -U lrngpt) to read it")
    missing = [k for k in REQUIRED if k not in payload]
    if missing:
        raise UserError(f"checkpoint {path} has no {missing[0]!r}; it was not written by lrn or is damaged: {RETRY}")
    if not isinstance(payload["step"], int) or isinstance(payload["step"], bool) or payload["step"] < 0:
        raise UserError(f"checkpoint {path}: step must be a non-negative integer (got {payload['step']!r})")
    model = payload["model"]
    if not isinstance(model, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                              for k, v in model.items()):
        raise UserError(f"checkpoint {path}: model must map parameter names to tensors; {DAMAGED}")
    bad = non_finite_tensor(model)
    if bad:  # lrn train stops before a NaN loss reaches a checkpoint: these weights were damaged after
        raise UserError(f"checkpoint {path}: tensor {bad!r} holds NaN or infinite values; the weights are "
                        "damaged: use another of the run's checkpoints (ckpt_best.pt), or train again")
    for key in ("optimizer", "rng"):
        if not isinstance(payload.get(key), dict | None):
            raise UserError(f"checkpoint {path}: {key} must be a dict or None; {DAMAGED}")
    try:
        payload["run_config"] = from_dict(payload["config"])  # parsed and checked once, for every reader
    except UserError as e:
        raise UserError(f"checkpoint {path}: its config is not valid ({e.text}); use another checkpoint") from None
    logging.debug(f"checkpoint: {path} read (step {payload['step']}, schema {schema}, source "
                  f"{payload.get('source')!r}, onto {map_location})")
    return payload


def non_finite_tensor(state: dict) -> str | None:
    """The name of the first floating-point tensor holding a NaN or an infinity (None: all finite)."""
    for name, t in state.items():
        if isinstance(t, torch.Tensor) and t.is_floating_point() and not bool(torch.isfinite(t).all()):
            return name
    return None


def _corrupt(path: Path, e: Exception) -> str:
    # no option named: eval and sample choose another checkpoint with --checkpoint, train --resume cannot
    why = f"{type(e).__name__}: {e.strerror}" if isinstance(e, OSError) and e.strerror else type(e).__name__
    return (f"checkpoint {path} cannot be read ({why}); it is truncated or corrupted: "
            "use another of the run's checkpoints (ckpt_best.pt), or train again")
