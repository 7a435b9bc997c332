"""Planning a sweep: what `lrn sweep --dry-run` shows (passes, a width study's warning, time estimates
from a short probe) and what a run checks before it starts (`check_machine`). Trains and downloads nothing.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import torch

from lrngpt.core import log as logging
from lrngpt.corpora.registry import pinned_source
from lrngpt.data.prepared import dry_run_prepared, prepare
from lrngpt.data.sizing import REREAD_PASSES, sizing
from lrngpt.device.distributed import resolve_device
from lrngpt.errors import UserError, option
from lrngpt.experiments.chapter import PREMISE
from lrngpt.experiments.grid import Point, SweepSpec, shard_points
from lrngpt.experiments.packing import for_sweep, seconds_of, wall_seconds
from lrngpt.experiments.packing import kept as packing_kept
from lrngpt.experiments.packing import text as packing_text
from lrngpt.experiments.presets import evaluation_windows
from lrngpt.experiments.sweepdir import SweepDir
from lrngpt.models.build import param_breakdown
from lrngpt.training import timing as run_timing
from lrngpt.training.timing import PROBE_STEPS, clock


def data_key_of(p: Point) -> str:
    """What decides a point's prepared data: its data section (points with equal ones share it)."""
    return json.dumps(dataclasses.asdict(p.config.data), sort_keys=True)


def point_passes(points: list[Point], log, dry_run: bool = False, prepared: dict | None = None) -> dict[str, dict]:
    """Per point: its training tokens, the tokens its steps read and the passes (a dry run leaves a big
    corpus unprepared: None). `prepared` receives each data configuration, prepared once."""
    prepared = {} if prepared is None else prepared
    out = {}
    for p in points:
        cfg = p.config
        key = data_key_of(p)
        if key not in prepared:
            prepared[key] = dry_run_prepared(cfg.data, log) if dry_run else prepare(cfg.data, log=log)
        data = prepared[key]
        n_train = len(data.tokens("train")) if data is not None else None
        size = sizing(cfg.train.steps, cfg.train.tokens_per_step, n_train)
        out[p.name] = {"train_split_tokens": n_train, "val_split_tokens": len(data.tokens("val")) if data else None,
                       "tokens_read": size["tokens_read"], "passes": size["passes"]}
    return out


def passes_warning(sweep: SweepSpec, passes: list[float]) -> str | None:
    """One line for a width study whose runs read their training text more than once."""
    passes = [x for x in passes if x is not None]
    if not sweep.width_study or not passes or max(passes) <= REREAD_PASSES:
        return None
    lo, hi = min(passes), max(passes)
    span = f"{hi:.1f} passes" if hi - lo < 0.05 else f"{lo:.1f} to {hi:.1f} passes"
    why = ("as this small-data study intends; compare it with a full-data sweep" if sweep.repeats_on_purpose
           else "give it more text (--set data.corpus=...) or fewer steps to measure what the chapter measures")
    return (f"warning: this width study reads its training text more than once ({span} per run); {PREMISE}, so "
            f"wider models here can memorise their text: {why}")


MAX_PROBES = 8  # model shapes timed per estimate; the others are interpolated between them


def estimate_points(points: list[Point], val_tokens: dict[str, int] | None = None, quick: bool = False,
                    log=None, probe_fn=None) -> dict[str, dict]:
    """Estimated seconds per point from a probe of its model. At most MAX_PROBES shapes are timed (`quick`:
    two), the others interpolated by parameter count, so a huge axis costs MAX_PROBES probes."""

    log = log or logging.info
    key = {p.name: json.dumps(run_timing.shape(p.config, p.config.train.device, p.config.train.batch_size),
                              sort_keys=True) for p in points}
    first: dict[str, Point] = {}  # a point of each shape, the smallest models first (params: counted once a shape)
    for p in sorted(points, key=lambda q: run_timing.params(q.config)):
        first.setdefault(key[p.name], p)
    by_size = list(first)
    n = min(len(by_size), 2 if quick else MAX_PROBES)
    probed = list(dict.fromkeys(by_size[round(i * (len(by_size) - 1) / max(1, n - 1))] for i in range(n)))
    device = None
    timed = []  # (parameters, timing) of each probed shape
    for k in probed:
        cfg = first[k].config
        try:
            device = resolve_device(cfg.train.device)
        except UserError:  # a GPU job planned on a machine without one (a login node): no estimate
            device = None
            break
        log(f"timing {cfg.model_type} d={cfg.model.n_embd} on {device} ({cfg.train.batch_size} x {cfg.train.seq_len})")
        timed.append((run_timing.params(cfg), (probe_fn or run_timing.probe)(cfg, device)))
    if device is None:
        return {p.name: {"est_seconds": None, "device": f"{p.config.train.device} (not on this machine)",
                         "probed": False} for p in points}
    return {p.name: {"est_seconds": seconds_of(p.config, timed, (val_tokens or {}).get(p.name)), "device": device,
                     "probed": key[p.name] in probed} for p in points}


def refuses_machine(sweep: SweepSpec) -> bool:
    """True for the full scale where torch sees no CUDA GPU and the device was not set explicitly."""
    return sweep.scale == "full" and sweep.base["train"].get("device", "auto") == "auto" and \
        not torch.cuda.is_available()


def check_machine(sweep: SweepSpec) -> None:
    """Refuse the full scale where torch sees no CUDA GPU, unless the device was set explicitly."""
    if not refuses_machine(sweep):
        return

    est = estimate_points(sweep.points, quick=True, log=lambda m: None)  # the refusal is one line
    total = sum(e["est_seconds"] or 0 for e in est.values())
    t = sweep.base["train"]
    raise UserError(f"{option('scale')} full plans {len(sweep.points)} runs of {t['steps']:,} steps of {t['batch_size']} x "
                    f"{t['seq_len']} tokens, about {clock(total)} on this machine's {resolve_device('auto')} "
                    f"(estimated from {PROBE_STEPS} timed steps; torch sees no CUDA GPU); use {option('scale')} cpu, or "
                    f"insist with {option('device')} cpu")


def dry_run_plan(sweep: SweepSpec, out: str | Path, shard: tuple[int, int] = (0, 1), log=None,
               known: dict[str, float] | None = None, points_at_once: int | None = None) -> dict:
    """What `lrn sweep --dry-run` shows: this shard's points, their state, passes and estimates, and the
    points at once as the run will choose them. Downloads nothing; `known`: estimates already made."""

    log = log or logging.info
    out = Path(out)
    mine = shard_points(sweep, shard)
    passes = point_passes(mine, log, dry_run=True)
    if known is not None and all(p.name in known for p in mine):
        est = {p.name: {"est_seconds": known[p.name], "device": resolve_device(p.config.train.device),
                        "probed": True} for p in mine}
    else:
        est = estimate_points(mine, {n: v["val_split_tokens"] for n, v in passes.items()}, log=lambda m: None)
    points = [{"index": p.index, "name": p.name, "values": p.values, "steps": p.steps,
               "state": SweepDir(out).point_state(p.name, p.steps), **passes[p.name], **est[p.name],
               **({"shape": {"n_layer": m.n_layer, "n_embd": m.n_embd, "n_head": m.n_head,  # a GPT's
                             "non_embedding": param_breakdown("gpt", m)["blocks"], "ratio": m.n_embd / m.n_layer}}
                  if (m := p.config.model) and p.config.model_type == "gpt" else {})}
              for p in mine]
    # the points at once, each unfinished point's estimate packed (a budget's are packed already), their wall time
    unfinished = [q for q, p in zip(mine, points, strict=True) if p["state"] != "finished"]
    packing = for_sweep(sweep.budget, unfinished, points_at_once, {p["name"]: p["val_split_tokens"] for p in points})
    slowdown = (packing.get("slowdown") or 1.0) if packing["points_at_once"] > 1 and not packing.get("planned") else 1.0
    for p in points:
        if p["state"] != "finished" and p["est_seconds"] is not None:
            p["est_seconds"] *= slowdown
    times = {p["name"]: p["est_seconds"] for p in points if p["state"] != "finished"}
    todo = None if None in times.values() else wall_seconds(unfinished, times, packing["points_at_once"])
    corpus = sweep.base["data"]["corpus"]
    source = pinned_source(corpus)  # where a downloaded corpus comes from; nothing is downloaded here
    return {"sweep": sweep.name, "scale": sweep.scale, "about": sweep.about, "corpus": corpus,
            "shapes": shapes_line([p["shape"] for p in points if "shape" in p]),
            "revision": source["revision"] if source else None, "source": source,
            "shard": f"{shard[0]}/{shard[1]}", "points": points, "est_seconds": todo,
            "points_at_once": packing["points_at_once"], "packing": packing_kept(packing),
            "estimate": f"time per point: {PROBE_STEPS} training steps of its model timed on this machine (at "
                        f"most {MAX_PROBES} model shapes timed, the others interpolated by parameter count), "
                        "extrapolated to its steps and evaluations (an estimate)",
            "unprepared": sorted({q.config.data.corpus for q, p in zip(mine, points, strict=True)
                                if p["passes"] is None}),
            "warning": passes_warning(sweep, [p["passes"] for p in points]),
            "refused": refuses_machine(sweep),
            "evaluation": evaluation_windows((mine[0] if mine else sweep.points[0]).config.to_dict()["train"])}


def shapes_line(shapes: list[dict]) -> str | None:
    """How far apart a sweep's shapes are: d/L span and non-embedding parameters (None for one shape)."""
    distinct = {(s["n_layer"], s["n_embd"]): s for s in shapes}
    if len(distinct) < 2:
        return None
    params = [s["non_embedding"] for s in distinct.values()]
    ratios = [s["ratio"] for s in distinct.values()]
    return (f"shapes: d_model / n_layer from {min(ratios):.3g} to {max(ratios):.3g} ({max(ratios) / min(ratios):.1f}x); "
            f"non-embedding parameters {min(params):,} to {max(params):,} ({max(params) / min(params) - 1:.2%} apart)")


SHAPE_COLUMNS = ("#", "n_layer", "n_embd", "heads", "non-embedding", "d/L", "point")


def shape_table(points: list[dict]) -> list[str]:
    """The plan's GPT shapes as a table, one row per point ([] when no point is a GPT)."""
    rows = [(str(p["index"]), str(s["n_layer"]), str(s["n_embd"]), str(s["n_head"]), f"{s['non_embedding']:,}",
             f"{s['ratio']:.3g}", p["name"]) for p in points if (s := p.get("shape"))]
    if not rows:
        return []
    widths = [max(len(c) for c in col) for col in zip(SHAPE_COLUMNS, *rows, strict=True)]
    # numbers right-aligned so the parameters and ratios read down a column; the name last, left-aligned
    return ["  ".join(c.rjust(w) if i < len(widths) - 1 else c for i, (c, w) in enumerate(zip(row, widths, strict=True)))
            for row in (SHAPE_COLUMNS, *rows)]


def sweep_plan_text(r: dict) -> str:
    """The dry run as lines: the grid, one line per point, the total, and what is not known."""

    def seconds(x):
        return "-" if x is None else "~" + clock(x)

    rows = [f"{p['index']:>3} {p['name']:<24} {p['state']:<9} {p['steps']:>7,} steps "
            f"{'-' if p['passes'] is None else format(p['passes'], '.2f'):>8} passes   {seconds(p['est_seconds'])}"
            for p in r["points"]]
    shapes = ["each point's shape:", *shape_table(r["points"]), r["shapes"]] if r.get("shapes") else []
    todo = sum(p["state"] != "finished" for p in r["points"])
    device = r["points"][0]["device"] if r["points"] else "this machine"
    at_once = f" ({r['points_at_once']} at once)" if r.get("points_at_once", 1) > 1 else ""
    total = (f"about {clock(r['est_seconds'])} for the {todo} unfinished points{at_once} on {device}; {r['estimate']}"
             if r["est_seconds"] is not None else f"no time estimate: the device {device}")
    where = f" at revision {r['revision']}" if r.get("revision") else ""
    return "\n".join([f"sweep {r['sweep']} ({r['scale']} scale, corpus {r['corpus']}{where}), shard {r['shard']}: "
                      f"{r['about']}",
                      *rows, *shapes, total,
                      *([packing_text(r["packing"])] if r.get("packing") else []),
                      *([f"evaluations: val bpb {r['evaluation']['periodic_val']}; train bpb on "
                         f"{r['evaluation']['train_bpb'] or 'nothing'}; final val bpb on "
                         f"{r['evaluation']['final_val']}"] if r.get("evaluation") else []),
                      *(f"passes -: {c} is not prepared yet (big, or downloaded); `lrn data prepare --corpus {c}` "
                        "counts its tokens, and so does the sweep when it starts" for c in r["unprepared"]),
                      *(["a run is refused here: the full scale, and torch sees no CUDA GPU; use --scale cpu, or "
                         "insist with --device cpu"] if r["refused"] else []),
                      *([r["warning"]] if r["warning"] else [])])
