"""The demo: the main job on the embedded stories corpus, in a few minutes on a laptop CPU."""

from __future__ import annotations

from pathlib import Path

from lrngpt.api.checks import checked, positive
from lrngpt.api.configs import Overrides, override_list
from lrngpt.api.embedding import embed_neighbors
from lrngpt.api.frontend import DEMO_NAME, DEMO_STEPS
from lrngpt.api.results import Run
from lrngpt.core import log as logging
from lrngpt.errors import UserError, option
from lrngpt.runconfig.schema import load_config
from lrngpt.store.rundir import RunDir
from lrngpt.training.trainer import train_run

PROMPTS = ["Once upon a time", "Lily saw a", "Tom was sad because"]


@checked
def demo(out: str | Path = "runs/demo", steps: int = DEMO_STEPS, set: Overrides = None) -> dict:
    """The main job on the embedded stories corpus (`lrn demo`): the mlp-cpu preset cut to `steps`, trained
    into `out` (replacing only an earlier demo's run), then validation bpb untrained and trained, samples and
    the neighbours of " Lily"; `set` overrides keys of the preset as config() does.

    Example: ``r = lrngpt.demo("runs/demo", steps=50); r["val_bpb_untrained"], r["val_bpb"]``"""
    overrides = override_list(set, "demo(): set")
    out, log = Path(out), logging.info
    positive(steps, option('steps'))
    run = RunDir(out)
    earlier = run.holds_run()
    if earlier and not _is_demo(run):
        raise UserError(f"{out} holds a run that is not an earlier demo; pass another {option('out')}")
    kept = run.kept_files() if earlier else {}
    if kept:  # (the demo has no --force to speak of: train's refusal would name it)
        raise UserError(f"{out} holds an earlier demo whose {', '.join(kept)} lrn may not remove (changed since lrn "
                        f"wrote it, or not named by its record); pass another {option('out')}")
    sets = [f"name={DEMO_NAME}", "train.device=cpu", f"train.steps={steps}", "train.train_eval_tokens=100000",
            *overrides]
    cfg = load_config("mlp-cpu", sets)
    # force replaces only an earlier demo's files (checked above); anything else in the directory is refused
    summary = train_run(cfg, out, force=earlier, log=log)
    trained = Run(out, "last", "cpu")  # read where it trained
    samples = [trained.sample(PROMPTS[0], max_new_tokens=60, temperature=0.8, top_k=40)]
    samples += [trained.sample(p, max_new_tokens=40, temperature=0.8, top_k=40) for p in PROMPTS[1:]]
    # " Lily"'s neighbours, and the chapter's " Lily" ~ " Mia" and (untrained) " Luna"'s, beside this run's
    lily, luna = embed_neighbors(out, [" Lily"]), embed_neighbors(out, [" Luna"], checkpoint="init")
    return {
        "val_bpb_untrained": Run(out, "init").eval()["val_bpb"],
        "val_bpb": summary["val_bpb"],
        "train_bpb": summary["train_bpb"],
        "steps": summary["step"],
        "seconds": summary["seconds"],
        "params": summary["params"],
        "samples": samples,
        "neighbors": {" Lily": [[n["token"], n["cosine"]] for n in lily["results"][0]["neighbors"]]},
        "chapter": lily["chapter"] + luna["chapter"],
        "run_dir": str(out),
    }


def _is_demo(run: RunDir) -> bool:
    try:
        return run.config_dict().get("name") == DEMO_NAME
    except UserError:
        return False
