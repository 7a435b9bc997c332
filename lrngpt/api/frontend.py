"""What `lrn` needs besides the workflows, so it imports nothing below the API: the choices and defaults
its help names, logging, strict JSON, suggestions, the errors it maps. No torch: `lrn --help` reads it."""

from __future__ import annotations

from typing import get_args

from lrngpt.analysis.costs import FFN_KINDS
from lrngpt.api.checks import ExportFormat, MapMethod, Precision
from lrngpt.core.fsio import DiskFull, json_safe, os_error_exit
from lrngpt.core.log import setup as setup_logging
from lrngpt.core.validate import nearest
from lrngpt.errors import UserError, in_words
from lrngpt.experiments.presets import CLI_SCALES, STUDIES
from lrngpt.experiments.presets import WIDTHS as CHAPTER_WIDTHS
from lrngpt.experiments.thresholds import (
           FEW_PASSES,
           HEADROOM,
           MAX_MINUTES,
           MIN_STEPS,
           OWN_TEXT_PASSES,
           QUIET_MACHINE,
)
from lrngpt.models.kinds import MODEL_TYPES
from lrngpt.runconfig.values import VAL_SPLIT_MODES, check_seed, did_you_mean
from lrngpt.store.layout import CHECKPOINT_LABELS, CHECKPOINTS

__all__ = ["BUDGET_HELP", "HEADROOM", "MAX_MINUTES", "QUIET_MACHINE", "CHAPTER_WIDTHS", "CHECKPOINTS", "CHECKPOINT_LABELS", "CHECKPOINT_MEANING", "CLI_SCALES", "CORPUS_FORMS",
           "DEMO_NAME", "DEMO_STEPS", "DEVICES", "DiskFull", "EXPORT_FORMATS", "FFN_KINDS", "MAPS", "MODEL_TYPES",
           "PRECISIONS", "STUDIES", "UserError", "VAL_SPLIT_MODES", "check_seed", "did_you_mean", "json_safe", "nearest",
           "in_words", "os_error_exit", "setup_logging"]

CORPUS_FORMS = ("stories[:SIZE[:SEED]], text:PATH[,PATH...], tinystories[:DIR], nsmc[:PATH], jsonl:PATH[:FIELD], "
                "parquet:PATH[:COLUMN], hf:NAME[@REV][:CONFIG][:SPLIT][:COLUMN][?stream]")
DEMO_NAME = "demo"
DEMO_STEPS = 200  # the mlp-cpu preset cut to fit a few minutes on a quiet 2-core machine (about 4 measured)
CHECKPOINT_MEANING = {"last": "the last", "best": "the best periodic val bpb (the last when the run has none)",
                      "init": "the untrained, step 0"}
DEVICES = "auto (a CUDA GPU, else MPS, else the CPU), cpu, cuda, cuda:N or mps"
MAPS = get_args(MapMethod)
PRECISIONS = get_args(Precision)
EXPORT_FORMATS = get_args(ExportFormat)
assert set(CHECKPOINT_MEANING) == set(CHECKPOINTS)

BUDGET_HELP = (f"fit the study into N minutes on this machine (at most {MAX_MINUTES:g}), keeping the book chapter's "
               "model: steps, batch, corpus size and widths are planned from a measured probe so that each run reads at "
               f"most {FEW_PASSES} passes of its text (a text of your own too small for {MIN_STEPS} steps: up to "
               f"{OWN_TEXT_PASSES:g} pass), filling at most {HEADROOM * 100:.0f}%% of N; a short budget shrinks to the "
               "smallest plan at which the findings can still show, a budget too short is refused naming what fits. "
               "--dry-run prints the plan and what it gives up. Again on the same --out it resumes the stored plan")
