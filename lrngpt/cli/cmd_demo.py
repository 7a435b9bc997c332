"""`lrn demo`: the main job on the embedded stories corpus (lrngpt/api/quickstart.py)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import lrngpt.api as api
from lrngpt.api.frontend import DEMO_STEPS
from lrngpt.cli.common import add_out, add_set, command, emit


def register(sub) -> None:
    p = command(
        sub, "demo", cmd_demo, "train the book chapter's MLP LM on the stories corpus and show what it learned",
        "Generates the stories corpus, trains a 4096-token BPE and the book chapter's MLP language model at d=64 "
        "(mlp-cpu, fewer steps), then prints validation bits per byte before and after, samples and the nearest "
        "neighbours of ' Lily'. About 4 minutes on a quiet 2-core machine. It replaces only its own earlier run.",
        "examples:\n  lrn demo\n  lrn demo --out runs/demo2 --steps 400 --json")
    add_out(p, "the run directory to write (an earlier demo run there is replaced; anything else is refused)",
            metavar="RUN_DIR", required=False, default="runs/demo")
    p.add_argument("--steps", type=int, default=DEMO_STEPS, help="training steps of the MLP")
    add_set(p, "a config value of the mlp-cpu preset")


def cmd_demo(args) -> None:
    r = api.demo(args.out, args.steps, args.overrides)
    lines = [
        f"MLP language model, d=64, {r['params']['total']:,} parameters, {r['steps']} steps in {r['seconds']:.0f}s",
        f"validation bits per byte on the full validation split: untrained {r['val_bpb_untrained']:.4f} -> "
        f"trained {r['val_bpb']:.4f} (the training log's periodic figures are estimates on fewer tokens)",
        "", "samples:", *(_sample_text(s) for s in r["samples"]), "",
        "nearest neighbours of ' Lily' (cosine): " + ", ".join(f"{t!r} {c:.2f}" for t, c in r["neighbors"][" Lily"]),
        *r["chapter"], "", f"run directory: {r['run_dir']}", next_line(r["run_dir"]),
    ]
    emit(args, r, "\n".join(lines))


def _sample_text(text: str) -> str:
    """A sample as text, each of its lines indented under a dash (not a Python repr)."""
    lines = text.strip("\n").splitlines() or [""]
    return "\n".join(["  - " + lines[0], *("    " + line for line in lines[1:])])


def next_line(run_dir: str) -> str:
    """What to type next, from any folder: absolute paths, and the activate script of this lrn's virtual
    environment (none outside one: lrn is on the PATH there)."""
    run = shlex.quote(str(Path(run_dir).resolve()))
    activate = Path(sys.prefix) / "bin" / "activate"
    if sys.prefix != sys.base_prefix and activate.is_file():
        return (f"next: source {shlex.quote(str(activate))} (puts lrn on the PATH), then "
                f'lrn sample {run} --prompt "Mia found"')
    return f'next: lrn sample {run} --prompt "Mia found"'
