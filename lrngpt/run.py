"""A run directory: what `lrn train` writes and every later command reads.

    RUN_DIR/
      config.json      the resolved RunConfig (data, model, train)
      tokenizer.json   the run's tokenizer (Hugging Face format)
      metrics.jsonl    one JSON object per line: training logs and evaluations
      ckpt_init.pt     step-0 weights (analyses compare trained with untrained)
      ckpt_last.pt     the latest state: model, optimizer, step, RNG states, data hash
      ckpt_best.pt     the weights with the best periodic validation bpb
      summary.json     final evaluation (val/train bpb, gap, params, seconds), once finished
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from lrngpt.checkpoint import find_checkpoint, load_checkpoint
from lrngpt.config import RunConfig, from_dict
from lrngpt.errors import UserError
from lrngpt.models import build_model
from lrngpt.tokenizer import Tokenizer


@dataclass
class LoadedRun:
    dir: Path
    config: RunConfig
    model: nn.Module
    tokenizer: Tokenizer
    step: int
    checkpoint: dict


def resolve_device(name: str = "auto") -> str:
    if name != "auto":
        if name.startswith("cuda") and not torch.cuda.is_available():
            raise UserError(f"device {name} asked for, but torch sees no CUDA GPU; use --device cpu")
        if name == "mps" and not torch.backends.mps.is_available():
            raise UserError("device mps asked for, but it is not available; use --device cpu")
        return name
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def load_run(run_dir: str | Path, which: str = "last", device: str = "cpu") -> LoadedRun:
    run_dir = Path(run_dir)
    ckpt = load_checkpoint(find_checkpoint(run_dir, which), map_location=device)
    cfg = from_dict(ckpt["config"])
    tok = Tokenizer.from_str(ckpt["tokenizer"])
    model = build_model(cfg.model_type, cfg.model)
    try:
        model.load_state_dict(ckpt["model"])
    except RuntimeError as e:
        raise UserError(f"checkpoint in {run_dir} does not match its config ({str(e).splitlines()[0]})") from None
    model.to(device).eval()
    return LoadedRun(run_dir, cfg, model, tok, int(ckpt["step"]), ckpt)


def read_summary(run_dir: Path) -> dict | None:
    try:
        return json.loads((Path(run_dir) / "summary.json").read_text())
    except (OSError, json.JSONDecodeError):
        return None


def read_metrics(run_dir: Path) -> list[dict]:
    path = Path(run_dir) / "metrics.jsonl"
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a line cut by a kill mid-write
    return rows
