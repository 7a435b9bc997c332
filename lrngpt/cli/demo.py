"""`lrn demo`: the main job on the embedded stories corpus, in about two minutes on a laptop CPU.

Prepares the stories corpus and a 4096-token BPE, trains the chapter's MLP LM at d=64,
and shows what it learned: validation bits per byte before and after, a few samples, and
the nearest neighbours of " Lily" in the learned embedding table.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from lrngpt.cli.common import add_json, emit
from lrngpt.errors import UserError

DEMO_NAME = "demo"
DEMO_STEPS = 200  # the mlp-cpu preset cut to fit about two minutes on a 2-core laptop
PROMPTS = ["Once upon a time", "Lily saw a", "Tom was sad because"]


def register(sub) -> None:
    p = sub.add_parser("demo", help="train the chapter's MLP LM on the stories corpus and show what it learned")
    p.add_argument("--out", default="runs/demo", help="run directory (default runs/demo)")
    p.add_argument("--steps", type=int, default=DEMO_STEPS, help=f"training steps (default {DEMO_STEPS})")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    add_json(p)
    p.set_defaults(func=cmd_demo)


def _clear_previous_demo(out: Path) -> None:
    """The demo may replace its own earlier output, never anything else."""
    if not out.exists() or not any(out.iterdir()):
        return
    try:
        name = json.loads((out / "config.json").read_text()).get("name")
    except (OSError, json.JSONDecodeError):
        name = None
    if name != DEMO_NAME:
        raise UserError(f"{out} holds something that is not an earlier demo; pass another --out")
    shutil.rmtree(out)


def run_demo(out: Path, steps: int = DEMO_STEPS, overrides: list[str] | None = None, log=None) -> dict:
    from lrngpt.analysis.embeddings import token_neighbors
    from lrngpt.cli.evaluate import evaluate_run
    from lrngpt.cli.sample import sample_texts
    from lrngpt.config import load_config
    from lrngpt.run import load_run
    from lrngpt.sample import SamplingConfig
    from lrngpt.train import train

    log = log or (lambda m: print(m, file=sys.stderr))
    sets = [f"name={DEMO_NAME}", "train.device=cpu", f"train.steps={steps}", "train.train_eval_tokens=100000",
            *(overrides or [])]
    cfg = load_config("mlp-cpu", sets)
    _clear_previous_demo(out)
    summary = train(cfg, out, log=log)
    untrained = evaluate_run(out, "init", split="val", log=log)
    run = load_run(out)
    samples = sample_texts(run, PROMPTS[0], SamplingConfig(max_new_tokens=60, temperature=0.8, top_k=40, seed=0),
                           num_samples=1)
    samples += [s for p in PROMPTS[1:] for s in sample_texts(
        run, p, SamplingConfig(max_new_tokens=40, temperature=0.8, top_k=40, seed=0))]
    table = run.model.token_embedding.weight.detach().float()
    near = token_neighbors(run.tokenizer, table, " Lily", 10)
    return {
        "val_bpb_untrained": untrained["val_bpb"],
        "val_bpb": summary["val_bpb"],
        "train_bpb": summary["train_bpb"],
        "steps": summary["step"],
        "seconds": summary["seconds"],
        "params": summary["params"],
        "samples": [s["text"] for s in samples],
        "neighbors": {" Lily": [[n["token"], n["cosine"]] for n in near["neighbors"]]},
        "run_dir": str(out),
    }


def cmd_demo(args) -> None:
    r = run_demo(Path(args.out), args.steps, args.overrides)
    lines = [
        f"MLP language model, d=64, {r['params']['total']:,} parameters, {r['steps']} steps in {r['seconds']:.0f}s",
        f"validation bits per byte: untrained {r['val_bpb_untrained']:.4f} -> trained {r['val_bpb']:.4f}",
        "",
        "samples:",
        *(f"  {s!r}" for s in r["samples"]),
        "",
        "nearest neighbours of ' Lily' (cosine): "
        + ", ".join(f"{t!r} {c:.2f}" for t, c in r["neighbors"][" Lily"]),
        "",
        f"run directory: {r['run_dir']}  (try: lrn sample {r['run_dir']} --prompt \"Mia found\")",
    ]
    emit(args, r, "\n".join(lines))
