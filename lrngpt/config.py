"""Run configuration: the one place that validates what a user asks for.

A run is `RunConfig(model_type, data, model, train)`. It is read from a JSON file or a
named preset (lrngpt/presets/*.json), changed with `--set section.key=value`, validated
in the dataclasses' __post_init__, and saved as config.json in the run directory.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lrngpt.errors import UserError
from lrngpt.models.mlp import MLPConfig

PRESET_DIR = Path(__file__).parent / "presets"
MODEL_TYPES = ("mlp", "gpt")


@dataclass
class DataConfig:
    corpus: str = "stories:5MB"
    vocab_size: int = 4096
    val_fraction: float = 0.05
    split_seed: int = 0
    train_tokens: int | None = None  # use only this prefix of the training tokens
    tokenizer_bytes: int = 100_000_000  # the tokenizer trains on at most this much text

    def __post_init__(self):
        from lrngpt.tokenizer import check_vocab_size

        check_vocab_size(self.vocab_size)
        if not 0 < self.val_fraction < 1:
            raise UserError(f"data.val_fraction must be between 0 and 1 (got {self.val_fraction})")
        if self.train_tokens is not None and self.train_tokens < 2:
            raise UserError(f"data.train_tokens must be at least 2 (got {self.train_tokens})")
        if self.tokenizer_bytes < 1:
            raise UserError("data.tokenizer_bytes must be positive")


@dataclass
class TrainConfig:
    steps: int = 4000  # the final global step
    batch_size: int = 64
    seq_len: int | None = 256  # window length; None -> the GPT's context_length
    lr: float = 1e-2
    min_lr: float = 1e-3
    warmup_steps: int = 100
    weight_decay: float = 0.0
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0  # 0 disables clipping
    eval_every: int = 500
    eval_tokens: int | None = 200_000  # validation tokens per periodic eval (the final eval is full)
    train_eval_tokens: int = 2_000_000  # training-text bpb over this prefix (the chapter: 2M)
    seed: int = 1337
    device: str = "auto"  # auto | cpu | cuda | cuda:N | mps
    dtype: str = "float32"  # float32 | bfloat16 (autocast, CUDA only)
    compile: bool = False
    log_every: int = 10
    save_every: int = 0  # also checkpoint every N steps (0: at evals and at the end)
    tensorboard: bool = False  # also write metrics.jsonl's scalars to RUN_DIR/tensorboard

    def __post_init__(self):
        for name in ("steps", "batch_size", "eval_every", "log_every"):
            if getattr(self, name) < 1:
                raise UserError(f"train.{name} must be at least 1 (got {getattr(self, name)})")
        if self.seq_len is not None and self.seq_len < 1:
            raise UserError(f"train.seq_len must be at least 1 (got {self.seq_len})")
        if not self.lr > 0:
            raise UserError(f"train.lr must be positive (got {self.lr})")
        if not 0 <= self.min_lr <= self.lr:
            raise UserError(f"train.min_lr must be between 0 and train.lr (got {self.min_lr})")
        for name in ("warmup_steps", "save_every", "train_eval_tokens"):
            if getattr(self, name) < 0:
                raise UserError(f"train.{name} must not be negative (got {getattr(self, name)})")
        if self.weight_decay < 0 or self.grad_clip < 0:
            raise UserError("train.weight_decay and train.grad_clip must not be negative")
        if not (0 <= self.beta1 < 1 and 0 <= self.beta2 < 1):
            raise UserError("train.beta1 and train.beta2 must be in [0, 1)")
        if self.eval_tokens is not None and self.eval_tokens < 2:
            raise UserError("train.eval_tokens must be at least 2 (or null for the full split)")
        if self.dtype not in ("float32", "bfloat16"):
            raise UserError(f"train.dtype must be float32 or bfloat16 (got {self.dtype!r})")


def _gpt_config_class():
    from lrngpt.models.gpt import GPTConfig

    return GPTConfig


@dataclass
class RunConfig:
    model_type: str = "mlp"
    data: DataConfig = field(default_factory=DataConfig)
    model: Any = None  # MLPConfig or GPTConfig; vocab_size comes from data, pad_id from the tokenizer
    train: TrainConfig = field(default_factory=TrainConfig)
    name: str = ""

    def __post_init__(self):
        if self.model_type not in MODEL_TYPES:
            raise UserError(f"model_type must be one of {', '.join(MODEL_TYPES)} (got {self.model_type!r})")
        if self.model_type == "gpt":
            if self.train.seq_len is None:
                self.train.seq_len = self.model.context_length
            if self.train.seq_len > self.model.context_length:
                raise UserError(f"train.seq_len {self.train.seq_len} exceeds model.context_length "
                                f"{self.model.context_length}; lower it or raise the context")
        elif self.train.seq_len is None:
            raise UserError("train.seq_len must be set for the mlp model (the chapter uses 256)")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def model_dict(self) -> dict:
        """What decides the model's shape; a resume refuses any change to it."""
        return {"model_type": self.model_type, **dataclasses.asdict(self.model)}


# ---- reading and overriding -------------------------------------------------------------

def model_class(model_type: str):
    return MLPConfig if model_type == "mlp" else _gpt_config_class()


def _coerce(value: Any, annotation: Any, key: str) -> Any:
    """Check/convert one JSON value against a dataclass field's annotation."""
    if isinstance(annotation, str):
        annotation = eval(annotation, {"Any": Any}, {})  # noqa: S307 - our own annotations
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union):
        options = typing.get_args(annotation)
        if value is None and type(None) in options:
            return None
        annotation = next(a for a in options if a is not type(None))
    if annotation is Any:
        return value
    if annotation is bool:
        if isinstance(value, bool):
            return value
    elif annotation is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
    elif annotation is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif annotation is str:
        if isinstance(value, str):
            return value
    raise UserError(f"{key} must be {getattr(annotation, '__name__', annotation)}, got {json.dumps(value)}")


def _build(cls, values: dict, section: str, fixed: dict | None = None):
    fields = {f.name: f for f in dataclasses.fields(cls)}
    fixed = fixed or {}
    kwargs = dict(fixed)
    for key, value in values.items():
        if key not in fields:
            valid = ", ".join(f"{section}.{k}" for k in fields if k not in fixed)
            raise UserError(f"unknown config key {section}.{key}; valid keys: {valid}")
        if key in fixed:
            continue  # derived (vocab_size from data, pad_id from the tokenizer)
        kwargs[key] = _coerce(value, fields[key].type, f"{section}.{key}")
    return cls(**kwargs)


def from_dict(d: dict, pad_id: int | None = None) -> RunConfig:
    """A validated RunConfig; the MLP's pad_id is `pad_id`, else the dict's own, else 0."""
    d = dict(d)
    unknown = set(d) - {"model_type", "data", "model", "train", "name"}
    if unknown:
        raise UserError(f"unknown config section {sorted(unknown)[0]!r}; sections are model_type, data, model, train")
    model_type = d.get("model_type", "mlp")
    if model_type not in MODEL_TYPES:
        raise UserError(f"model_type must be one of {', '.join(MODEL_TYPES)} (got {model_type!r})")
    data = _build(DataConfig, d.get("data", {}), "data")
    fixed = {"vocab_size": data.vocab_size}
    if model_type == "mlp":
        fixed["pad_id"] = pad_id if pad_id is not None else (d.get("model") or {}).get("pad_id", 0)
    model = _build(model_class(model_type), d.get("model", {}), "model", fixed)
    train = _build(TrainConfig, d.get("train", {}), "train")
    return RunConfig(model_type=model_type, data=data, model=model, train=train, name=str(d.get("name", "")))


def preset_names() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.json"))


def read_config_dict(config: str) -> dict:
    """A JSON file path, or the name of a preset."""
    path = Path(config)
    if path.suffix == ".json" or path.exists():
        if not path.is_file():
            raise UserError(f"config file {config} does not exist")
    else:
        path = PRESET_DIR / f"{config}.json"
        if not path.is_file():
            raise UserError(f"unknown preset {config!r}; presets: {', '.join(preset_names())} (or a .json file)")
    try:
        d = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise UserError(f"{path} is not valid JSON: {e}") from None
    if not isinstance(d, dict):
        raise UserError(f"{path} must hold a JSON object")
    d.setdefault("name", path.stem)
    return d


def apply_overrides(d: dict, overrides: list[str]) -> dict:
    """`--set section.key=value`; value is JSON (numbers, true, null) or else a plain string."""
    d = json.loads(json.dumps(d))
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise UserError(f"--set {item!r} must look like section.key=value, e.g. model.n_embd=128")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        parts = key.split(".")
        if parts == ["model_type"] or parts == ["name"]:
            d[parts[0]] = value
            continue
        if len(parts) != 2 or parts[0] not in ("data", "model", "train"):
            raise UserError(f"--set key {key!r} must be data.KEY, model.KEY, train.KEY or model_type")
        d.setdefault(parts[0], {})[parts[1]] = value
    return d


def load_config(config: str, overrides: list[str] | None = None, pad_id: int | None = None) -> RunConfig:
    return from_dict(apply_overrides(read_config_dict(config), overrides or []), pad_id=pad_id)


def save_config(cfg: RunConfig, path: Path) -> None:
    path.write_text(json.dumps(cfg.to_dict(), indent=2) + "\n")
