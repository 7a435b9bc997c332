"""The book chapter's embedding-width studies and the scales that shrink them.

A study names a grid (`axes`) over the chapter's MLP plus settings derived from the run length; a
scale (full: the chapter's protocol, a GPU job; cpu: about 30 minutes on 2 cores; tiny: seconds, for
tests; budget: planned from a probe, lrngpt.experiments.budget) only shrinks length, batch, corpus and
evaluation sizes, never what the study varies. docs/embedding-width-study.md lists each scale.
"""

from __future__ import annotations

from lrngpt.errors import UserError, option

BASE_PRESET = "mlp-chapter"
WIDTHS = [4, 8, 16, 32, 64, 128, 256, 512]

SCALES: dict[str, dict] = {
    "full": {},
    "cpu": {
        "data.corpus": "stories:5MB",
        "train.steps": 400, "train.batch_size": 16, "train.warmup_steps": 20,
        "train.eval_every": 100, "train.eval_tokens": 50_000, "train.train_eval_tokens": 200_000,
        "train.eval_windows": "spread",
    },
    "tiny": {
        "data.corpus": "stories:300KB", "data.vocab_size": 512,
        "model.block_size": 4, "model.n_hidden": 64,
        "train.steps": 30, "train.batch_size": 8, "train.seq_len": 64, "train.warmup_steps": 5,
        "train.eval_every": 10, "train.eval_tokens": 5_000, "train.train_eval_tokens": 5_000,
        "train.log_every": 5, "train.eval_windows": "spread",
    },
    "budget": {  # the rest comes from the plan, lrngpt.experiments.budget
        "data.corpus": "stories:5MB",
        "train.batch_size": 16, "train.warmup_steps": 20,
        "train.eval_tokens": 50_000, "train.train_eval_tokens": 200_000,
    },
}
CLI_SCALES = [s for s in SCALES if s != "budget"]  # budget is chosen with --minutes

# `steps_factor` multiplies the (scaled) steps; `reads` cuts the training split so the model reads it `reads`
# times (the chapter's 4M tokens at full scale), with `evals` periodic evaluations a run
STUDIES: dict[str, dict] = {
    "embed-dim": {
        "axes": {"model.n_embd": WIDTHS, "train.seed": [1337]},
        "about": "everything else as the chapter's MLP",
    },
    "embed-dim-long": {
        "axes": {"model.n_embd": [16, 64, 256], "train.seed": [1337]},
        "steps_factor": 4,
        "about": "trained 4x as long (the chapter's 16,000 steps at full scale)",
    },
    "embed-dim-small-data": {
        "axes": {"model.n_embd": WIDTHS[1:], "train.seed": [1337]},
        "reads": 16, "full_train_tokens": 4_000_000, "evals": 16,
        "about": "the training text cut to a prefix read about 16 times (the chapter's 4M tokens at full scale)",
    },
    "seed-variance": {
        "axes": {"model.n_embd": [64], "train.seed": [1337, 1338, 1339]},
        "about": "the noise floor for the width differences",
    },
}

# Width against depth at a fixed budget (Kaplan et al. 2020): its own base GPT, settings and scales, and one
# linked axis (keys joined by "+" advance together) of shapes 0.74% apart in non-embedding parameters, d / L
# from 60 down to 1.14 (tests/experiments/test_width_depth.py shows the arithmetic)
SHAPE_AXIS = "model.n_layer+model.n_embd+model.n_head"
WIDTH_DEPTH_SHAPES = [[2, 120, 15], [7, 64, 8], [18, 40, 5], [28, 32, 4]]
STUDIES["width-depth"] = {
    "base": "gpt-default",
    "axes": {SHAPE_AXIS: WIDTH_DEPTH_SHAPES, "train.seed": [1337, 1338]},
    "set": {"model.context_length": 128, "model.dropout": 0.0, "train.seq_len": None, "train.lr": 0.002,
            "train.min_lr": 0.0002, "train.weight_decay": 0.1},
    "scales": {
        "full": {"data.corpus": "tinystories", "data.vocab_size": 4096,
                 "train.steps": 4000, "train.batch_size": 64, "train.warmup_steps": 100,
                 "train.eval_every": 500, "train.eval_tokens": 1_000_000, "train.train_eval_tokens": 1_000_000},
        "cpu": {"data.corpus": "stories:5MB", "data.vocab_size": 1024,
                "train.steps": 400, "train.batch_size": 16, "train.warmup_steps": 20,
                "train.eval_every": 100, "train.eval_tokens": 50_000, "train.train_eval_tokens": 100_000},
        "tiny": {"data.corpus": "stories:300KB", "data.vocab_size": 512, "model.context_length": 32,
                 "train.steps": 6, "train.batch_size": 4, "train.warmup_steps": 2, "train.log_every": 3,
                 "train.eval_every": 6, "train.eval_tokens": 2_000, "train.train_eval_tokens": 2_000},
    },
    "about": "width against depth at a fixed non-embedding parameter count (Kaplan et al. 2020)",
}
SHAPE_STUDIES = ("width-depth",)


def evaluation_windows(train: dict) -> dict:
    """Which tokens a resolved train section's evaluations score (the dry run shows it)."""
    how = train.get("eval_windows", "spread")

    def tokens(n, split: str) -> str:
        if not n:
            return f"the whole {split} split"
        return f"the first {n:,} tokens of the {split} split" if how == "prefix" else \
            f"{n:,} tokens spread over the {split} split"

    train_n = train.get("train_eval_tokens")
    return {"windows": how, "eval_every": train["eval_every"],
            "periodic_val": f"every {train['eval_every']:,} steps: {tokens(train.get('eval_tokens'), 'validation')}",
            "train_bpb": tokens(train_n, "training") if train_n else None,
            "final_val": "the whole validation split"}


AXIS_NAMES = {"model.n_embd": "d", "train.seed": "seed", SHAPE_AXIS: "(n_layer, d, heads)"}


def describe_grid(axes: dict[str, list], note: str = "") -> str:
    """The grid as it is, e.g. "d = 8, 64; seed 1337", then the study's note (the `about` of a sweep)."""
    parts = []
    for key, values in axes.items():
        shown = [f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) and key != "train.seed" else
                 "(" + ", ".join(map(str, v)) + ")" if isinstance(v, list) else str(v) for v in values]
        if len(shown) > 10:
            shown = [*shown[:4], "...", *shown[-2:]]
        name = AXIS_NAMES.get(key, key)
        plural = "s" if key == "train.seed" and len(values) > 1 else ""
        parts.append(f"{name}{plural} {', '.join(shown)}" if key == "train.seed" else f"{name} = {', '.join(shown)}")
    return "; ".join(parts) + (f": {note}" if note else "")


def check_scale(scale: object) -> str:
    if not isinstance(scale, str) or scale not in SCALES:
        raise UserError(f"unknown scale {scale!r}; scales: {', '.join(SCALES)}")
    return scale


def scale_overrides(scale: str, study: dict | None = None) -> dict:
    """A scale's settings: the study's own where it has them (a shape study's GPT), else the MLP's."""
    own = (study or {}).get("scales")
    if own is not None:
        if check_scale(scale) not in own:
            what = "--minutes" if scale == "budget" else f"the {scale} scale"
            raise UserError(f"{what} plans the MLP width studies; this study runs at {option('scale')} "
                            f"{', '.join(own)}")
        return dict(own[scale])
    return dict(SCALES[check_scale(scale)])


def derived_overrides(study: dict, scale: str, train: dict, explicit: set[str]) -> dict:
    """Settings that follow from the run length (`train`: resolved), unless the user set the key."""
    out: dict = {}
    steps = train["steps"]
    factor = study.get("steps_factor")
    if factor and "train.steps" not in explicit:
        steps = steps * factor
        out["train.steps"] = steps
    reads = study.get("reads")
    if reads:
        if "data.train_tokens" not in explicit:
            full = study.get("full_train_tokens") if scale == "full" else None
            out["data.train_tokens"] = full or max(2, steps * train["batch_size"] * train["seq_len"] // reads)
        if "train.eval_every" not in explicit:
            out["train.eval_every"] = max(1, steps // study.get("evals", reads))
    return out
