"""Run configuration: the one place that validates what a user asks for.

A run is `RunConfig(model_type, data, model, train)`, made by `from_dict` from a JSON or YAML file (or
`lrn config show --json`'s output) or a preset (presets/*.json), with `--set section.key=value`
applied (lrngpt.runconfig.overrides); the dataclasses' __post_init__ check the values, and it is saved
as config.json in the run directory.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lrngpt.core import log as logging
from lrngpt.core.validate import check_fields, check_size, field_types, show_value
from lrngpt.corpora.registry import KINDS
from lrngpt.errors import UserError
from lrngpt.models.gpt import GPTConfig
from lrngpt.models.kinds import MODEL_TYPES
from lrngpt.models.mlp import MLPConfig
from lrngpt.runconfig.files import from_show_json, read_config_file
from lrngpt.runconfig.overrides import apply_overrides
from lrngpt.runconfig.values import (
    DERIVED,
    SECTIONS,
    TOP_KEYS,
    VAL_SPLIT_MODES,
    check_plain,
    check_shape,
    did_you_mean,
)
from lrngpt.runconfig.width import fill_width
from lrngpt.tokenizer.bpe import check_vocab_size

PRESET_DIR = Path(__file__).parent / "presets"
EVAL_WINDOWS = ("spread", "prefix")  # train.eval_windows; lrngpt/inference/evaluate.py picks the windows
DTYPES = ("auto", "float32", "bfloat16", "float16")  # train.dtype; lrngpt/device/precision.py resolves auto


def check_dtype(value: str) -> None:
    if value not in DTYPES:
        raise UserError(f"train.dtype must be one of {', '.join(DTYPES)} (got {value!r}); auto picks bfloat16 "
                        "on a GPU that has it, float16 + loss scaling on one that does not, float32 on a CPU")
LOGGERS = ("tensorboard", "wandb", "mlflow", "csv")  # train.logger: the trackers (lrngpt/training/trackers.py)


def parse_loggers(text: str) -> tuple[str, ...]:
    """train.logger: `none`, `all` or a comma-separated list of LOGGERS -> the names, in order, once each."""
    names = [n.strip() for n in text.split(",")]
    if names in (["none"], ["all"]):
        return () if names == ["none"] else LOGGERS
    bad = [n for n in names if n not in LOGGERS]
    if bad:
        what = (f"{bad[0]} stands alone" if bad[0] in ("none", "all") else f"unknown logger {bad[0]!r}" if bad[0]
                else "an empty logger name")
        raise UserError(f"train.logger {text!r}: {what}; give none, all, or any of {', '.join(LOGGERS)}, "
                        "comma-separated or as a list (e.g. tensorboard,wandb or [\"tensorboard\", \"csv\"])")
    return tuple(dict.fromkeys(names))


def join_loggers(value: Any) -> Any:
    """train.logger given as a list -> the comma-separated text config.json keeps (else left as it is)."""
    if not isinstance(value, list | tuple):
        return value
    if not value or not all(isinstance(n, str) and n.strip() and "," not in n for n in value):
        raise UserError(f"train.logger {json.dumps(value)[:80]}: a list of logger names is needed, each one of "
                        f"{', '.join(LOGGERS)} (or [\"all\"], or none)")
    return ",".join(n.strip() for n in value)


@dataclass
class DataConfig:
    corpus: str = "stories:5MB"
    vocab_size: int = 4096
    val_fraction: float = 0.05
    split_seed: int = 0
    val_split: str = "documents"  # or chunks (lrn config keys says what each does)
    train_tokens: int | None = None  # use only this prefix of the training tokens
    tokenizer_bytes: int = 100_000_000  # the tokenizer trains on at most this much text

    def __post_init__(self):
        check_fields(self, "data")
        kind = self.corpus.strip().partition(":")[0]
        if kind not in KINDS:  # the form only (an empty one too): the corpus is read when the data is prepared
            raise UserError(f"data.corpus {self.corpus!r}: unknown corpus kind {kind!r}; use one of "
                            f"{', '.join(KINDS)} (e.g. stories:5MB, text:PATH)")
        check_vocab_size(self.vocab_size)
        if not 0 < self.val_fraction < 1:
            raise UserError(f"data.val_fraction must be between 0 and 1 (got {self.val_fraction})")
        if self.val_split not in VAL_SPLIT_MODES:
            raise UserError(f"data.val_split must be one of {', '.join(VAL_SPLIT_MODES)} (got {self.val_split!r}); "
                            "chunks draws seeded chunks of the text into validation, for a one-document corpus")
        for name, low in (("train_tokens", 2), ("tokenizer_bytes", 1)):
            if getattr(self, name) is not None and getattr(self, name) < low:
                raise UserError(f"data.{name} must be at least {low} (got {getattr(self, name)})")


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
    train_eval_tokens: int = 2_000_000  # training-text bpb over this many tokens (the chapter: its first 2M)
    eval_windows: str = "spread"  # capped evaluations: windows spread over the split, or its prefix (the chapter)
    seed: int = 1337
    device: str = "auto"  # auto | cpu | cuda | cuda:N | mps
    dtype: str = "auto"  # auto | float32 | bfloat16 | float16 (autocast); see lrngpt/device/precision.py
    tf32: bool = True  # float32 matmuls as TF32 on CUDA GPUs that have it (capability 8.0 on)
    compile: bool = False
    log_every: int = 10
    save_every: int = 0  # also checkpoint every N steps (0: at evals and at the end)
    tensorboard: bool = False  # also write metrics.jsonl's scalars to RUN_DIR/tensorboard (= logger tensorboard)
    logger: str = "none"  # none, all, or trackers fed the metrics: tensorboard,wandb,mlflow,csv (comma-separated, or a list)
    max_days: float = 7.0  # refuse to start a run estimated to take longer (lrngpt/training/duration.py); 0: no limit

    def __post_init__(self):
        self.logger = join_loggers(self.logger)
        check_fields(self, "train")
        check_size("train.batch_size", self.batch_size)
        if self.seq_len is not None:
            check_size("train.seq_len", self.seq_len)
        for names, ok, rule in (
                (("steps", "eval_every", "log_every"), lambda v: v >= 1, "must be at least 1 (got {})"),
                (("lr",), lambda v: v > 0, "must be positive (got {})"),
                (("min_lr",), lambda v: 0 <= v <= self.lr, "must be between 0 and train.lr (got {})"),
                (("warmup_steps", "save_every", "train_eval_tokens"), lambda v: v >= 0, "must not be negative (got {})"),
                (("max_days",), lambda v: v >= 0, "must not be negative (got {}); 0 means no limit"),
                (("weight_decay", "grad_clip"), lambda v: v >= 0, "must not be negative (got {}); 0 turns it off"),
                (("beta1", "beta2"), lambda v: 0 <= v < 1, "must be in [0, 1) (got {})")):
            for name in names:
                if not ok(getattr(self, name)):
                    raise UserError(f"train.{name} {rule.format(getattr(self, name))}")
        if self.eval_tokens is not None and self.eval_tokens < 2:
            raise UserError("train.eval_tokens must be at least 2 (or null for the full split)")
        if not re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", self.device):
            raise UserError(f"train.device must be auto, cpu, cuda, cuda:N or mps (got {self.device!r})")
        check_dtype(self.dtype)
        if self.eval_windows not in EVAL_WINDOWS:
            raise UserError(f"train.eval_windows must be spread or prefix (got {self.eval_windows!r}): spread takes a "
                            "capped evaluation's windows evenly over the split, prefix its first tokens")
        parse_loggers(self.logger)

    @property
    def loggers(self) -> tuple[str, ...]:
        """The trackers this run feeds: train.logger, and tensorboard when train.tensorboard is set."""
        names = parse_loggers(self.logger)
        return tuple(dict.fromkeys((*names, "tensorboard"))) if self.tensorboard else names

    @property
    def tokens_per_step(self) -> int:
        """Tokens read by one step (the global batch); seq_len is resolved once in a RunConfig."""
        assert self.seq_len is not None, "a RunConfig resolves train.seq_len"
        return self.batch_size * self.seq_len


@dataclass
class RunConfig:
    model_type: str = "mlp"
    data: DataConfig = field(default_factory=DataConfig)
    model: Any = None  # MLPConfig or GPTConfig; vocab_size comes from data, pad_id from the tokenizer
    train: TrainConfig = field(default_factory=TrainConfig)
    name: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise UserError(f"name must be a string, got {show_value(self.name)}")
        if self.model_type == "gpt":  # (from_dict, the one way a RunConfig is made, checked model_type)
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


# ---- reading -------------------------------------------------------------------------------

def model_class(model_type: str):
    return MLPConfig if model_type == "mlp" else GPTConfig


def _build(cls, values: dict, section: str, fixed: dict | None = None):
    fields = field_types(cls)
    fixed = fixed or {}
    kwargs = dict(fixed)
    for key, value in values.items():
        if key not in fields:
            name, valid = f"{section}.{key}", [f"{section}.{k}" for k in fields if k not in fixed]
            raise UserError(f"unknown config key {name}; {did_you_mean(name, valid)}valid keys: {', '.join(valid)} "
                            "(lrn config show PRESET lists them)")
        if key in fixed:
            continue  # derived (vocab_size from data, pad_id from the tokenizer): a saved config holds them
        kwargs[key] = value  # checked (and coerced) once, by the dataclass's own check_fields
    required = [f.name for f in dataclasses.fields(cls) if f.name not in kwargs
                and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if required:
        raise UserError(f"{section}.{required[0]} is required for this model; set it, e.g. "
                        f"--set {section}.{required[0]}=256")
    return cls(**kwargs)


def from_dict(d: dict) -> RunConfig:
    """A validated RunConfig; the MLP's pad_id is the dict's own, else 0 (training sets the tokenizer's)."""
    if not isinstance(d, dict):
        raise UserError(f"a config must be a JSON object with sections data, model, train; got {show_value(d)}")
    check_plain(d, "")  # plain data within bounds, whoever built it (a file, --set, the Python API)
    d = dict(d)
    unknown = set(d) - {*TOP_KEYS, *SECTIONS}
    if unknown:
        raise UserError(f"unknown config section {sorted(unknown)[0]!r}; sections are model_type, data, model, train")
    check_shape(d)  # the shape first, then the values
    model_type = d.get("model_type", "mlp")
    if model_type not in MODEL_TYPES:
        raise UserError(f"model_type must be one of {', '.join(MODEL_TYPES)} (got {show_value(model_type)})")
    data = _build(DataConfig, d.get("data", {}), "data")
    model_values = d.get("model", {})  # (check_shape: a section present is an object)
    if model_values.get("vocab_size", data.vocab_size) != data.vocab_size:
        raise UserError(f"model.vocab_size {show_value(model_values['vocab_size'])} differs from data.vocab_size "
                        f"{data.vocab_size}; {DERIVED['model.vocab_size']}")
    fixed: dict[str, Any] = {"vocab_size": data.vocab_size}
    if model_type == "mlp":
        fixed["pad_id"] = model_values.get("pad_id", 0)
    # a model section of the other model type: say so, not "unknown key"
    mine, other = field_types(model_class(model_type)), next(t for t in MODEL_TYPES if t != model_type)
    foreign = [k for k in model_values if k not in mine and k in field_types(model_class(other))]
    if foreign:
        raise UserError(f"model_type is {model_type}, but the model section has model.{foreign[0]}, a key of the "
                        f"{other} model: model_type chooses the model section's keys, so start from a preset of "
                        f"model_type {model_type} instead (lrn config list)")
    if model_type == "gpt":
        model_values = fill_width(model_values)
    model = _build(model_class(model_type), model_values, "model", fixed)
    train = _build(TrainConfig, d.get("train", {}), "train")
    return RunConfig(model_type=model_type, data=data, model=model, train=train, name=d.get("name", ""))


def preset_names() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.json"))


CONFIG_SUFFIXES = (".json", ".yaml", ".yml")


def read_config_dict(config: str) -> dict:
    """A JSON or YAML file path, or the name of a preset; `configs/NAME.json` (where the seed project's
    configs lived) reads the preset NAME when no such file exists."""
    path = Path(config)
    if not path.exists() and path.parent.name == "configs" and path.suffix == ".json" \
            and path.stem in preset_names():
        path = PRESET_DIR / path.name
    if path.suffix.lower() not in CONFIG_SUFFIXES and not path.exists() and not path.is_symlink():  # a preset's name
        path = PRESET_DIR / f"{config}.json"
        if not path.is_file():
            raise UserError(f"unknown preset {config!r}; {did_you_mean(config, preset_names())}presets: {', '.join(preset_names())} "
                            "(or a .json or .yaml file)")
    d = read_config_file(path)
    check_plain(d, f"config file {path}")
    if "keys" in d and not set(d) & {*SECTIONS, *TOP_KEYS}:
        d = from_show_json(d, path)
    check_shape(d, f"{path}: ")
    d.setdefault("name", path.stem)
    logging.debug(f"config {config!r}: {'the preset in ' if path.parent == PRESET_DIR else ''}{path}")
    return d


def flat_keys(d: dict, prefix: str = "") -> dict:
    """{"model": {"n_embd": 64}} -> {"model.n_embd": 64}: nested keys named as `--set` names them."""
    out = {}
    for key, value in d.items():
        if isinstance(value, dict):
            out.update(flat_keys(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def load_config(config: dict | str, overrides: list[str] | None = None, source: str = "") -> RunConfig:
    """`config` (a preset name or a file, read here; or a dict read from `source`) with the --set overrides
    applied: the one path every config is read by. An error of the config itself names its source."""
    if isinstance(config, str):
        source, config = config, read_config_dict(config)
    try:
        return from_dict(apply_overrides(config, overrides or []))
    except UserError as e:
        try:
            from_dict(config)
        except UserError:
            raise UserError(f"{source}: {e.text}") from None
        raise


def with_pad_id(cfg: RunConfig, pad_id: int) -> RunConfig:
    """The config with the MLP's pad id set to the tokenizer's <|endoftext|> (GPT configs as they are;
    MLPConfig refuses an id outside the vocabulary)."""
    if cfg.model_type != "mlp" or cfg.model.pad_id == pad_id:
        return cfg
    return dataclasses.replace(cfg, model=dataclasses.replace(cfg.model, pad_id=pad_id))


def validated(cfg: RunConfig) -> RunConfig:
    """`cfg` checked again as a config file is: a field changed after it was built (`cfg.train.lr = "fast"`)
    fails with the message `--set train.lr=fast` gives. A new RunConfig; the MLP keeps its pad_id."""
    if not isinstance(cfg, RunConfig):
        raise UserError(f"a config must be a RunConfig (lrngpt.config(NAME) makes one), got {type(cfg).__name__}")
    d = cfg.to_dict()
    if isinstance(d.get("model"), dict):
        d["model"].pop("vocab_size", None)
    return from_dict(d)
