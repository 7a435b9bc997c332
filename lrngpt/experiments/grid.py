"""The grid of a sweep: its definition, points, their names and shards (no training here).

A sweep file is JSON: {"name", "base" (a preset or config; default mlp-chapter), "study", "set",
"axes", "scale"}. The base config is resolved in this order: base -> study -> scale -> file "set" ->
--set -> derived settings -> the point's axis values. Point k belongs to shard k mod n, so machines
sharing DIR split the grid without talking; a Slurm array task k runs shard k of its COUNT.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import torch

from lrngpt.core.fsio import read_json_object
from lrngpt.errors import UserError, option
from lrngpt.experiments import presets
from lrngpt.experiments.sweepdir import VERSION, SweepDir
from lrngpt.runconfig.overrides import parse_axis, parse_override
from lrngpt.runconfig.schema import RunConfig, from_dict, read_config_dict
from lrngpt.runconfig.values import TOP_KEYS, check_key_form, check_shape, set_key
from lrngpt.runconfig.width import model_keys, replace_width

MAX_POINTS = 512  # points one sweep takes (the chapter's studies have 8 to 32): a dry run of that many answers in seconds
# Short names for the run directory; other axis keys use their last part.
ALIASES = {"data.train_tokens": "tt", "train.lr": "lr", "model.n_hidden": "h", "model.block_size": "b"}


@dataclass
class Point:
    """One run of the grid: its axis values and its config, a RunConfig validated once."""
    index: int
    name: str
    values: dict
    config: RunConfig = field(repr=False)

    @property
    def steps(self) -> int:
        return self.config.train.steps


@dataclass
class SweepSpec:
    name: str
    preset: str | None
    source: str
    scale: str
    about: str
    base: dict
    axes: dict[str, list]
    points: list[Point]
    note: str | None = None  # how the scale was chosen, when it was not given
    repeats_on_purpose: bool = False  # a study that cuts the text to a prefix read many times
    budget: dict | None = None  # the plan of `--minutes` (lrngpt.experiments.budget), stored in sweep.json

    @property
    def width_study(self) -> bool:
        return "model.n_embd" in self.axes

    def definition(self) -> dict:
        return {"version": VERSION, "name": self.name, "preset": self.preset, "source": self.source,
                "scale": self.scale, "about": self.about, "base": self.base, "axes": self.axes,
                "points": [{"index": p.index, "name": p.name, "values": p.values, "steps": p.steps}
                           for p in self.points], **({"budget": self.budget} if self.budget else {})}


def _set(d: dict, key: str, value, what: str) -> None:
    if key in TOP_KEYS:
        raise UserError(f"{what} key {key!r} must be data.KEY, model.KEY or train.KEY (e.g. model.n_embd)")
    check_key_form(key, what)  # refuses derived keys too
    set_key(d, key, value)


# The keys of a sweep file and what each may hold
FILE_TYPES: dict[str, tuple[type, ...]] = {
    "name": (str, type(None)), "base": (str, dict), "study": (str, type(None)), "set": (dict,), "axes": (dict,),
    "scale": (str, type(None)), "about": (str,)}


def _layer(d: dict, overrides: dict, what: str) -> None:
    """One layer of settings over the config dict `d`; the width is given one way (lrngpt.runconfig.width.replace_width)."""
    if isinstance(d.get("model"), dict):
        replace_width(d["model"], model_keys(overrides), what)
    for key, value in overrides.items():
        _set(d, key, value, what)


def _check_axes(axes, where: str) -> dict[str, list]:
    if not isinstance(axes, dict) or not axes:
        raise UserError(f"{where}: the grid is empty; give axes like {{\"model.n_embd\": [16, 64]}}")
    seen: set[str] = set()
    for key, values in axes.items():
        if not isinstance(values, list) or not values:
            raise UserError(f"{where}: axis {key} has no values (the grid is empty); give a non-empty list")
        keys = key.split("+")  # several joined by "+" advance together (a shape: n_layer+n_embd)
        for part in keys:
            _set({}, part, None, "axis")
            if part in seen:
                raise UserError(f"{where}: {part} is on two axes; give it on one")
            seen.add(part)
        if len(keys) > 1:
            if any(not isinstance(v, list) or len(v) != len(keys) or any(isinstance(x, dict | list) for x in v)
                   for v in values):
                raise UserError(f"{where}: axis {key} links {len(keys)} keys: each value must be a list of "
                                f"{len(keys)} numbers, strings or booleans, e.g. [2, 120, 15]")
        elif any(isinstance(v, dict | list) for v in values):
            raise UserError(f"{where}: axis {key} values must be numbers, strings or booleans")
        if len({json.dumps(v) for v in values}) != len(values):
            raise UserError(f"{where}: axis {key} repeats a value; each point must be distinct")
    return {k: list(v) for k, v in axes.items()}


def _run_name(cfg: dict, values: dict) -> str:
    name = f"d{cfg['model']['n_embd']}-s{cfg['train']['seed']}-t{cfg['train']['steps']}"
    for key, value in values.items():
        if key not in ("model.n_embd", "train.seed", "train.steps"):
            short = ALIASES.get(key, key.split(".")[-1])
            name += "-" + re.sub(r"[^A-Za-z0-9.]+", "_", f"{short}{value}")
    return name


def resolve_base(source: str, scale: str | None = None, sets: list[str] | None = None,
                 out: str | Path | None = None) -> tuple:
    """A sweep's base config, no points: (base, scale, name, preset, study, file doc, note)."""
    cli_sets = dict(parse_override(item) for item in sets or [])
    path = Path(source)
    if source in presets.STUDIES:
        study, doc, preset = presets.STUDIES[source], {}, source
        base_src, name = study.get("base", presets.BASE_PRESET), source
    elif path.suffix == ".json" or path.exists():  # (missing, a directory, a FIFO: read_json names it)
        doc, preset, name = read_json_object(path, "sweep file"), None, path.stem
        unknown = sorted(set(doc) - set(FILE_TYPES))
        if unknown:
            raise UserError(f"sweep file {path}: unknown key {unknown[0]!r}; keys are {', '.join(sorted(FILE_TYPES))}")
        for key, kinds in FILE_TYPES.items():
            if key in doc and not isinstance(doc[key], kinds):
                want = " or ".join({str: "a string", dict: "an object", type(None): "null"}[k] for k in kinds)
                raise UserError(f"sweep file {path}: {key} must be {want}, got {json.dumps(doc[key])[:40]}")
        if doc.get("study") is not None and doc["study"] not in presets.STUDIES:
            raise UserError(f"sweep file {source}: unknown study {doc['study']!r}; studies: "
                            f"{', '.join(presets.STUDIES)}")
        study = presets.STUDIES[doc["study"]] if doc.get("study") is not None else {}
        base_src, name = doc.get("base", study.get("base", presets.BASE_PRESET)), str(doc.get("name") or name)
    else:
        raise UserError(f"unknown sweep preset {source!r}; presets: {', '.join(presets.STUDIES)} "
                        "(or a sweep file .json)")
    note = None
    if not (scale or doc.get("scale")):
        scale = SweepDir(out).known().get("scale") if out is not None else None
        if scale not in presets.SCALES:
            scale, note = default_scale(study)
    scale = presets.check_scale(scale or doc.get("scale"))
    if isinstance(base_src, str):
        base = read_config_dict(base_src)
    else:  # an object (FILE_TYPES refused anything else)
        base = json.loads(json.dumps(base_src))
        check_shape(base, f"sweep file {source}: base: ")
    file_sets = doc.get("set", {})
    layers = (("study", study.get("set", {})), ("scale", presets.scale_overrides(scale, study)), ("set", file_sets),
              ("--set", cli_sets))
    for what, overrides in layers:
        _layer(base, overrides, what)
    explicit = set(file_sets) | set(cli_sets)
    train = from_dict(base).to_dict()["train"]
    _layer(base, presets.derived_overrides(study, scale, train, explicit), "derived")
    base["name"] = name
    base = from_dict(base).to_dict()
    return base, scale, name, preset, study, doc, note


def resolve_sweep(source: str, scale: str | None = None, sets: list[str] | None = None,
                  axes: list[str] | None = None, out: str | Path | None = None) -> SweepSpec:
    """A study preset or a sweep file -> the resolved grid, every point validated. Without a scale, the
    sweep in `out` keeps its own and a new one gets default_scale()."""
    for item in sets or []:
        parse_override(item)  # a bad --set is named before a bad --axis, as it always was
    cli_axes = dict(parse_axis(item) for item in axes or [])
    base, scale, name, preset, study, doc, note = resolve_base(source, scale, sets, out)
    grid = _check_axes({**(doc.get("axes") or study.get("axes") or {}), **cli_axes}, source)
    n_points = math.prod(len(v) for v in grid.values())
    if n_points > MAX_POINTS:  # refused before a single point is built: a dry run of it answers at once
        sizes = " x ".join(f"{len(v):,} {k}" for k, v in grid.items())
        raise UserError(f"{source}: the grid has {n_points:,} points ({sizes}), above the {MAX_POINTS:,} one sweep "
                        "takes; give fewer values, or split the grid into several sweep files")
    points: list[Point] = []
    seen: set[str] = set()
    for index, combo in enumerate(itertools.product(*grid.values())):
        values: dict = {}  # key by key: a linked axis's value (a list) spread over its keys
        for key, value in zip(grid, combo, strict=True):
            values.update(zip(key.split("+"), value, strict=True) if "+" in key else [(key, value)])
        cfg = json.loads(json.dumps(base))
        _layer(cfg, values, "axis")
        resolved = from_dict(cfg)  # validates: unknown keys and bad values fail here, before training
        run_name = _run_name(resolved.to_dict(), values)  # values that sanitise alike still get distinct directories
        resolved.name = f"{run_name}-p{index}" if run_name in seen else run_name
        seen.add(resolved.name)
        points.append(Point(index, resolved.name, values, resolved))
    about = presets.describe_grid(grid, str(doc.get("about") or study.get("about", "")))
    return SweepSpec(name, preset, source, scale, about, base, grid, points, note, bool(study.get("reads")))


def default_scale(study: dict | None = None) -> tuple[str, str | None]:
    """The scale when none is given: full where torch sees a CUDA GPU, else cpu (and a line saying so)."""
    if torch.cuda.is_available():
        return "full", None
    cpu, full = presets.scale_overrides("cpu", study), presets.scale_overrides("full", study)
    seq = lambda s: s.get("train.seq_len") or ("context" if study and "scales" in study else 256)  # noqa: E731
    return "cpu", (f"no --scale given and torch sees no CUDA GPU: using the cpu scale ({cpu['data.corpus']}, "
                   f"{cpu['train.steps']} steps of {cpu['train.batch_size']} x {seq(cpu)}) instead of full "
                   f"({full.get('train.steps', 4000):,} steps of {full.get('train.batch_size', 64)} x {seq(full)} per "
                   "point); --scale full --device cpu insists")


def parse_shard(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
    if not m:
        raise UserError(f"{option('shard', f'{text!r}')} must look like i/n, e.g. 0/2 (shard i of n, i from 0 to n-1)")
    i, n = int(m[1]), int(m[2])
    if n < 1 or not 0 <= i < n:
        raise UserError(f"{option('shard', i)}/{n} is outside the range: n must be at least 1 and i in 0..n-1")
    return i, n


def slurm_shard(env) -> tuple[tuple[int, int], str] | None:
    """(shard, how it was found) of a Slurm array task (task k of COUNT: shard k), None outside one."""
    if not env.get("SLURM_ARRAY_TASK_ID") and not env.get("SLURM_ARRAY_TASK_COUNT"):
        return None

    def read(name: str, default: int | None = None) -> int:
        raw = env.get(name, "")
        if raw == "" and default is not None:
            return default
        if raw == "":
            raise UserError(f"{name} is not set, but this looks like a Slurm array task; pass {option('shard')} i/n")
        try:
            return int(raw)
        except ValueError:
            raise UserError(f"{name}={raw!r} is not an integer; fix the environment or pass {option('shard')} i/n") from None

    task, count = read("SLURM_ARRAY_TASK_ID"), read("SLURM_ARRAY_TASK_COUNT")
    low, step = read("SLURM_ARRAY_TASK_MIN", 0), read("SLURM_ARRAY_TASK_STEP", 1)
    offset = task - low
    if count < 1 or step < 1 or offset < 0 or offset % step or offset // step >= count:
        raise UserError(f"SLURM_ARRAY_TASK_ID {task} is not one of the {count} tasks of an array from {low} "
                        f"in steps of {step}; submit a range like --array=0-7, or pass {option('shard')} i/n")
    i = offset // step
    return (i, count), (f"shard {i}/{count} from Slurm: SLURM_ARRAY_TASK_ID {task}, "
                        f"SLURM_ARRAY_TASK_MIN {low}, SLURM_ARRAY_TASK_COUNT {count}")


def resolve_shard(text: str | None, env) -> tuple[tuple[int, int], str | None]:
    """--shard i/n, else the Slurm array task's shard, else 0/1; with a note where it came from."""
    if text is not None:
        return parse_shard(text), None
    return slurm_shard(env) or ((0, 1), None)


def shard_points(sweep: SweepSpec, shard: tuple[int, int]) -> list[Point]:
    """The points of shard i of n (as parse_shard or slurm_shard checked it)."""
    i, n = shard
    return [p for p in sweep.points if p.index % n == i]


