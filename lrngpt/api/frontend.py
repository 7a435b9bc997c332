"""What a front end needs besides the workflows: the choices and defaults its help texts name, the
logging set-up of an application, JSON that is strict, the suggestion for a mistyped word, the
errors it maps to exit codes, and `cli_words` (the API's errors then name lrn's options). `lrn` (lrngpt/cli/) imports these from here and nothing from the
library below the API, so both front ends name the same studies, scales, checkpoints and corpora.
Nothing here imports torch: `lrn --help` reads it."""

from __future__ import annotations

from typing import get_args

from lrngpt.analysis.costs import FFN_KINDS
from lrngpt.api.checks import ExportFormat, MapMethod, ModelType, Precision, cli_words
from lrngpt.api.corpus import CORPUS_FORMS
from lrngpt.api.quickstart import DEMO_NAME, DEMO_STEPS
from lrngpt.core.fsio import DiskFull, json_safe, os_error_exit
from lrngpt.core.log import setup as setup_logging
from lrngpt.core.validate import VAL_SPLITS, check_seed, did_you_mean, nearest
from lrngpt.errors import UserError
from lrngpt.experiments.budget import BUDGET_HELP
from lrngpt.experiments.presets import CLI_SCALES, STUDIES
from lrngpt.experiments.presets import WIDTHS as CHAPTER_WIDTHS
from lrngpt.store.rundir import CHECKPOINT_LABELS, CHECKPOINTS

__all__ = ["BUDGET_HELP", "CHAPTER_WIDTHS", "CHECKPOINTS", "CHECKPOINT_LABELS", "CHECKPOINT_MEANING", "CLI_SCALES", "CORPUS_FORMS",
           "DEMO_NAME", "DEMO_STEPS", "DEVICES", "cli_words", "DiskFull", "EXPORT_FORMATS", "FFN_KINDS", "MAPS", "MODEL_TYPES",
           "PRECISIONS", "STUDIES", "UserError", "VAL_SPLITS", "check_seed", "did_you_mean", "json_safe", "nearest",
           "os_error_exit", "setup_logging"]

CHECKPOINT_MEANING = {"last": "the last", "best": "the best periodic val bpb (the last when the run has none)",
                      "init": "the untrained, step 0"}
DEVICES = "auto (a CUDA GPU, else MPS, else the CPU), cpu, cuda, cuda:N or mps"
MODEL_TYPES = get_args(ModelType)  # the API's argument types: lrn offers what the functions take
MAPS = get_args(MapMethod)
PRECISIONS = get_args(Precision)
EXPORT_FORMATS = get_args(ExportFormat)
assert set(CHECKPOINT_MEANING) == set(CHECKPOINTS)
