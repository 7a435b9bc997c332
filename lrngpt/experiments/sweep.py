"""A sweep: one training run per point of a grid over config keys.

`resolve_sweep(source, scale)` turns a study preset (lrngpt.experiments.presets) or a sweep
file into a `Sweep`; `run_sweep(sweep, out, shard)` trains the points of one shard that are
not finished yet and then gathers the summary (lrngpt.experiments.summary.summarize).

A sweep file is JSON: {"name": ..., "base": PRESET_OR_CONFIG_DICT (default mlp-chapter),
"study": a study preset whose derived settings apply (optional), "set": {"train.lr": 0.02},
"axes": {"model.n_embd": [16, 64], "train.seed": [1337, 1338]}, "scale": "cpu"}.
Without a scale (none given, none in the file, none in DIR/sweep.json) a machine whose torch sees
a CUDA GPU gets `full` and any other `cpu`, with a line saying so; `full` on a machine without
one is refused, with the time it would take, unless the device is set (`--device cpu`). What
--dry-run shows (steps, passes, estimated time per point) is lrngpt.experiments.plan.

The base config is resolved in this order: base -> scale -> file "set" -> command-line
--set -> derived settings (4x steps, small-data prefix; not for keys set explicitly) ->
the point's axis values. Points are the product of the axes in their order; point k
belongs to shard k mod n, so machines or GPUs sharing DIR split the grid without talking.

Sweep directory (what `lrn report` and `lrn cost mlp --sweep` read):

    DIR/sweep.json          the definition: version, name, preset (study name or null),
                            source, scale, about, base (the resolved config dict), axes,
                            points [{"index", "name", "values", "steps"}]
    DIR/runs/<name>/        one run directory per point (see lrngpt.run), name like
                            d64-s1337-t4000 (width, seed, steps; -<key><value> per other axis)
    DIR/lines.txt           one line per finished run, in the chapter's format
    DIR/summary.md|csv|json the tables: per-run rows, bpb saved per doubling of the width,
                            mean and spread over seeds (summary.json rows carry n_embd and
                            val_bpb, as lrngpt.analysis.costs.read_sweep_bpb expects)
    DIR/figures/*.png       val bpb by width (+ parameters), train vs val, val bpb by step

Under a Slurm job array (SLURM_ARRAY_TASK_ID / _COUNT / _MIN set) without --shard, array task k
runs shard k of COUNT (`slurm_shard`), so `sbatch --array=0-7` spreads a grid over 8 jobs.

A point counts as finished when runs/<name>/summary.json says finished at the point's
steps; it is skipped. A point with ckpt_last.pt but no finished summary resumes from it.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from lrngpt import log as logging
from lrngpt.config import (
    TOP_KEYS,
    check_key_form,
    check_shape,
    from_dict,
    parse_axis,
    parse_override,
    read_config_dict,
    set_key,
)
from lrngpt.errors import UserError
from lrngpt.experiments import presets
from lrngpt.experiments.summary import read_definition, summarize
from lrngpt.fsio import check_output, create_exclusive, read_json, user_path
from lrngpt.run import RunDir, read_summary

VERSION = 1
FILE_KEYS = {"name", "base", "study", "set", "axes", "scale", "about"}
# Short names for the run directory; other axis keys use their last part.
ALIASES = {"data.train_tokens": "tt", "train.lr": "lr", "model.n_hidden": "h", "model.block_size": "b"}


@dataclass
class Point:
    index: int
    name: str
    values: dict
    config: dict = field(repr=False)

    @property
    def steps(self) -> int:
        return self.config["train"]["steps"]


@dataclass
class Sweep:
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

    @property
    def width_study(self) -> bool:
        return "model.n_embd" in self.axes

    def definition(self) -> dict:
        return {"version": VERSION, "name": self.name, "preset": self.preset, "source": self.source,
                "scale": self.scale, "about": self.about, "base": self.base, "axes": self.axes,
                "points": [{"index": p.index, "name": p.name, "values": p.values, "steps": p.steps}
                           for p in self.points]}


# ---- resolving a preset or file into points ------------------------------------------------

def _set(d: dict, key: str, value, what: str) -> None:
    if key in TOP_KEYS:
        raise UserError(f"{what} key {key!r} must be data.KEY, model.KEY or train.KEY (e.g. model.n_embd)")
    check_key_form(key, what)  # refuses derived keys too
    set_key(d, key, value)


# What each key of a sweep file may hold
FILE_TYPES = {"name": (str, type(None)), "base": (str, dict), "study": (str, type(None)), "set": (dict,),
              "axes": (dict,), "scale": (str, type(None)), "about": (str,)}


def _read_file(path: Path) -> dict:
    doc = read_json(path, "sweep file")
    if not isinstance(doc, dict):
        raise UserError(f"sweep file {path} must hold a JSON object with base, axes, scale")
    unknown = sorted(set(doc) - FILE_KEYS)
    if unknown:
        raise UserError(f"sweep file {path}: unknown key {unknown[0]!r}; keys are {', '.join(sorted(FILE_KEYS))}")
    for key, kinds in FILE_TYPES.items():
        if key in doc and not isinstance(doc[key], kinds):
            want = " or ".join({str: "a string", dict: "an object", type(None): "null"}[k] for k in kinds)
            raise UserError(f"sweep file {path}: {key} must be {want}, got {json.dumps(doc[key])[:40]}")
    return doc


def _check_axes(axes, where: str) -> dict[str, list]:
    if not isinstance(axes, dict) or not axes:
        raise UserError(f"{where}: the grid is empty; give axes like {{\"model.n_embd\": [16, 64]}}")
    for key, values in axes.items():
        if not isinstance(values, list) or not values:
            raise UserError(f"{where}: axis {key} has no values (the grid is empty); give a non-empty list")
        if any(isinstance(v, dict | list) for v in values):
            raise UserError(f"{where}: axis {key} values must be numbers, strings or booleans")
        if len({json.dumps(v) for v in values}) != len(values):
            raise UserError(f"{where}: axis {key} repeats a value; each point must be distinct")
        _set({}, key, None, "axis")
    return {k: list(v) for k, v in axes.items()}


def _run_name(cfg: dict, values: dict) -> str:
    name = f"d{cfg['model']['n_embd']}-s{cfg['train']['seed']}-t{cfg['train']['steps']}"
    for key, value in values.items():
        if key not in ("model.n_embd", "train.seed", "train.steps"):
            short = ALIASES.get(key, key.split(".")[-1])
            name += "-" + re.sub(r"[^A-Za-z0-9.]+", "_", f"{short}{value}")
    return name


def resolve_sweep(source: str, scale: str | None = None, sets: list[str] | None = None,
                  axes: list[str] | None = None, out: str | Path | None = None) -> Sweep:
    """A study preset name or a sweep file -> the resolved grid (every point validated).

    `sets` are extra `section.key=value` overrides, `axes` replace or add axes
    (`section.key=v1,v2`); both as on the command line. Without a scale from the caller or the
    file, the sweep in `out` keeps its own, and a new one gets presets.default_scale().
    """
    cli_sets = dict(parse_override(item) for item in sets or [])
    cli_axes = dict(parse_axis(item) for item in axes or [])
    path = Path(source)
    if source in presets.STUDIES:
        study, doc, preset = presets.STUDIES[source], {}, source
        base_src, name = presets.BASE_PRESET, source
    elif path.suffix == ".json" or path.exists():
        if not path.is_file():
            raise UserError(f"sweep file {source} does not exist")
        doc, preset, name = _read_file(path), None, path.stem
        if doc.get("study") is not None and doc["study"] not in presets.STUDIES:
            raise UserError(f"sweep file {source}: unknown study {doc['study']!r}; studies: "
                            f"{', '.join(presets.STUDIES)}")
        study = presets.STUDIES.get(doc.get("study"), {})
        base_src, name = doc.get("base", presets.BASE_PRESET), str(doc.get("name") or name)
    else:
        raise UserError(f"unknown sweep preset {source!r}; presets: {', '.join(presets.STUDIES)} "
                        "(or a sweep file .json)")
    note = None
    if not (scale or doc.get("scale")):
        scale = _existing_scale(out)
        if not scale:
            scale, note = presets.default_scale()
    scale = presets.check_scale(scale or doc.get("scale"))
    if isinstance(base_src, str):
        base = read_config_dict(base_src)
    elif isinstance(base_src, dict):
        base = json.loads(json.dumps(base_src))
        check_shape(base, f"sweep file {source}: base: ")
    else:
        raise UserError(f"sweep file {source}: base must be a preset name or a config object")
    file_sets = doc.get("set", {})
    if not isinstance(file_sets, dict):
        raise UserError(f"sweep file {source}: set must be an object like {{\"train.lr\": 0.02}}")
    for what, overrides in (("scale", presets.scale_overrides(scale)), ("set", file_sets), ("--set", cli_sets)):
        for key, value in overrides.items():
            _set(base, key, value, what)
    explicit = set(file_sets) | set(cli_sets)
    train = from_dict(base).to_dict()["train"]
    for key, value in presets.derived_overrides(study, scale, train, explicit).items():
        _set(base, key, value, "derived")
    base["name"] = name
    base = from_dict(base).to_dict()
    grid = _check_axes({**(doc.get("axes") or study.get("axes") or {}), **cli_axes}, source)
    points = []
    for index, combo in enumerate(itertools.product(*grid.values())):
        values = dict(zip(grid, combo, strict=True))
        cfg = json.loads(json.dumps(base))
        for key, value in values.items():
            _set(cfg, key, value, "axis")
        cfg = from_dict(cfg).to_dict()  # validates: unknown keys and bad values fail here, before training
        points.append(Point(index, _run_name(cfg, values), values, cfg))
    seen: set[str] = set()
    for p in points:  # values that sanitise alike still get distinct directories
        if p.name in seen:
            p.name = f"{p.name}-p{p.index}"
        seen.add(p.name)
        p.config["name"] = p.name
    about = presets.describe_grid(grid, str(doc.get("about") or study.get("about", "")))
    return Sweep(name, preset, source, scale, about, base, grid, points, note, bool(study.get("reads")))


def _existing_scale(out) -> str | None:
    if out is None:
        return None
    try:
        scale = json.loads((Path(out) / "sweep.json").read_text()).get("scale")
    except (OSError, ValueError, AttributeError):
        return None
    return scale if scale in presets.SCALES else None


# ---- sharding, state, running --------------------------------------------------------------

def parse_shard(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
    if not m:
        raise UserError(f"--shard {text!r} must look like i/n, e.g. 0/2 (shard i of n, i from 0 to n-1)")
    return check_shard((int(m[1]), int(m[2])))


def check_shard(shard: tuple[int, int]) -> tuple[int, int]:
    i, n = shard
    if n < 1 or not 0 <= i < n:
        raise UserError(f"--shard {i}/{n} is outside the range: n must be at least 1 and i in 0..n-1")
    return i, n


def slurm_shard(env) -> tuple[tuple[int, int], str] | None:
    """(shard, how it was found) of a Slurm array task, None outside an array job.

    Task ids run MIN, MIN+STEP, ... (`--array=1-8` gives 1..8, `--array=0-14:2` gives 0, 2, ..);
    task k of the array is shard k of COUNT, so an array of n tasks covers the grid once.
    """
    if not env.get("SLURM_ARRAY_TASK_ID") and not env.get("SLURM_ARRAY_TASK_COUNT"):
        return None

    def read(name: str, default: int | None = None) -> int:
        raw = env.get(name, "")
        if raw == "" and default is not None:
            return default
        if raw == "":
            raise UserError(f"{name} is not set, but this looks like a Slurm array task; pass --shard i/n")
        try:
            return int(raw)
        except ValueError:
            raise UserError(f"{name}={raw!r} is not an integer; fix the environment or pass --shard i/n") from None

    task, count = read("SLURM_ARRAY_TASK_ID"), read("SLURM_ARRAY_TASK_COUNT")
    low, step = read("SLURM_ARRAY_TASK_MIN", 0), read("SLURM_ARRAY_TASK_STEP", 1)
    offset = task - low
    if count < 1 or step < 1 or offset < 0 or offset % step or offset // step >= count:
        raise UserError(f"SLURM_ARRAY_TASK_ID {task} is not one of the {count} tasks of an array from {low} "
                        f"in steps of {step}; submit a range like --array=0-7, or pass --shard i/n")
    i = offset // step
    return (i, count), (f"shard {i}/{count} from Slurm: SLURM_ARRAY_TASK_ID {task}, "
                        f"SLURM_ARRAY_TASK_MIN {low}, SLURM_ARRAY_TASK_COUNT {count}")


def resolve_shard(text: str | None, env) -> tuple[tuple[int, int], str | None]:
    """--shard i/n when given; else the Slurm array task's shard; else 0/1. Returns (shard, a note
    saying where the shard came from when it was not given)."""
    if text is not None:
        return parse_shard(text), None
    return slurm_shard(env) or ((0, 1), None)


def shard_points(sweep: Sweep, shard: tuple[int, int]) -> list[Point]:
    i, n = check_shard(shard)
    return [p for p in sweep.points if p.index % n == i]


def point_state(run_dir: Path, steps: int) -> str:
    """finished (summary at the wanted step), partial (a checkpoint to resume) or new.

    Reads (and so checks) the files a sweep relies on: summary.json, config.json, metrics.jsonl.
    """
    if (Path(run_dir) / "config.json").exists():
        RunDir(run_dir).config()
    RunDir(run_dir).metrics()
    s = read_summary(run_dir)
    if s and s.get("finished") and s.get("step") == steps:
        return "finished"
    return "partial" if RunDir(run_dir).checkpoint_path("last").is_file() else "new"


# How a run is executed, not what it computes: shards on different devices share one sweep.
RUNTIME_KEYS = ("device", "compile", "log_every", "save_every", "tensorboard", "logger")


def _normal(d: dict) -> dict:
    d = json.loads(json.dumps({k: d.get(k) for k in ("scale", "base", "axes")}))
    try:  # a key added to the config since the sweep began reads as its default, its old behaviour
        d["base"] = from_dict(d["base"]).to_dict()
    except (UserError, TypeError, AttributeError):
        pass  # a key that no longer exists: compared as written, so it differs
    for key in RUNTIME_KEYS:
        (d.get("base") or {}).get("train", {}).pop(key, None)
    return d


def write_definition(sweep: Sweep, out: Path) -> None:
    """Create DIR/sweep.json, or check that DIR holds this same sweep.

    Shards may start together on an empty DIR: exactly one creates the file, and every shard
    then compares against what is there.
    """
    path = out / "sweep.json"
    definition = sweep.definition()
    check_output(out, "dir")
    if not path.exists():
        with user_path(out, "--out"):
            others = [q for q in out.iterdir() if ".tmp-" not in q.name] if out.exists() else []
        if others:
            raise UserError(f"{out} is not empty and holds no sweep (no sweep.json); choose another --out")
        with user_path(out, "--out"):
            out.mkdir(parents=True, exist_ok=True)
        create_exclusive(path, json.dumps(definition, indent=2) + "\n")
    old = read_definition(out)
    if _normal(old) != _normal(definition):
        raise UserError(f"{out} holds a different sweep ({old.get('name')}, scale {old.get('scale')}); "
                        "choose another --out, or delete it to start over")


def run_sweep(sweep: Sweep, out: str | Path, shard: tuple[int, int] = (0, 1), log=None,
              progress: bool | None = None) -> dict:
    """Train this shard's unfinished points (resuming partial ones), then summarize DIR.

    Refuses the full scale on a machine without a CUDA GPU (check_machine); a width study whose
    runs read their text more than once says so in one line before the first run."""
    from lrngpt.corpora import fetch
    from lrngpt.experiments.plan import check_machine, passes_warning, point_passes  # (it imports us)
    from lrngpt.train import train

    log = log or logging.info
    out = check_output(out, "dir")  # before any download or timing
    mine = shard_points(sweep, shard)
    for corpus in dict.fromkeys(p.config["data"]["corpus"] for p in mine):
        fetch(corpus)  # a download that cannot happen stops the sweep before it writes anything
    check_machine(sweep)
    write_definition(sweep, out)
    tag = f"[{sweep.name}, {sweep.scale} scale]"
    # every point's files are read (and checked) before any training: a damaged one stops the sweep
    # now, with its name, not after hours of work when the summary gathers it
    states = {p.name: point_state(out / "runs" / p.name, p.steps) for p in sweep.points}
    todo = [p for p in mine if states[p.name] != "finished"]
    warning = passes_warning(sweep, [v["passes"] for v in point_passes(todo, log).values()]) if todo else None
    if warning:
        log(warning)
    trained, skipped = [], []
    bar = logging.progress(total=len(mine), desc=f"sweep {sweep.name}", unit="point", enabled=progress)
    for p in mine:
        run_dir = out / "runs" / p.name
        state = states[p.name]
        if state == "finished":
            log(f"{tag} skip {p.name}: finished at step {p.steps}")
            skipped.append(p.name)
            bar.update()
            continue
        log(f"{tag} {'resume' if state == 'partial' else 'train'} {p.name} "
            f"(point {p.index + 1} of {len(sweep.points)})")
        train(from_dict(p.config), run_dir, resume=state == "partial", force=state == "new",
              log=lambda msg, name=p.name: log(f"  {name}: {msg}"), progress=progress,
              warn_passes=not sweep.width_study, hparams=p.values)
        # the run's chapter-format line (its used axes need the weights) is printed once, with the
        # others, when the sweep ends; here only what summary.json holds
        s = read_summary(run_dir)
        bpb = "n/a" if s["val_bpb"] is None else f"{s['val_bpb']:.4f}"  # null: no bytes to score
        log(f"{tag} done {p.name}: val bpb {bpb}, {_passes(s['epochs'])}, {s['seconds']:.0f}s")
        trained.append(p.name)
        bar.update()
    bar.close()
    result = summarize(out)
    result.update(trained=trained, skipped=skipped, shard=f"{shard[0]}/{shard[1]}")
    return result


def _passes(epochs) -> str:
    return "passes -" if epochs is None else f"{epochs:.2f} passes"
