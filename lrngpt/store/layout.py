"""The names of a run directory's files (what each holds: lrngpt/store/rundir.py), apart from the
code that reads them, so that a front end can name checkpoints without loading it."""

from __future__ import annotations

from lrngpt.core.ownership import RECORD, RUN_LOCK

MARKER, LOCK = RECORD, RUN_LOCK  # (a record of kind "run" makes a run: is_run; the lock: its one writer)
CONFIG, TOKENIZER, METRICS, SUMMARY = "config.json", "tokenizer.json", "metrics.jsonl", "summary.json"
LAST, INIT, BEST = "ckpt_last.pt", "ckpt_init.pt", "ckpt_best.pt"
CHECKPOINT_FILES = {"last": LAST, "best": BEST, "init": INIT}  # each checkpoint's file
CHECKPOINTS = tuple(CHECKPOINT_FILES)  # the names of a run's weights: last, best, init
CHECKPOINT_LABELS = {"last": "trained", "best": "best", "init": "untrained"}  # what each one's table is called
TENSORBOARD, REPORT = "tensorboard", "report.html"
TRACKERS, METRICS_CSV, WANDB = "trackers.json", "metrics.csv", "wandb"  # lrngpt.training.trackers
BY_READS = "by_reads.json"  # what `lrn eval --by-reads` measured on the last weights (for lrn report)
# Everything a run writes: `--force` removes these (and its unchanged PAGES beside it), nothing else.
RUN_FILES = (CONFIG, TOKENIZER, METRICS, SUMMARY, INIT, LAST, BEST, TENSORBOARD, TRACKERS, METRICS_CSV, WANDB,
             BY_READS)
# What RunDir writes, recorded with its sha256: `--force` removes a run only while they are as recorded
# (the trackers' files go with it by name).
RECORDED = (CONFIG, TOKENIZER, METRICS, SUMMARY, INIT, LAST, BEST, BY_READS)
PAGES = (REPORT, "report-explorer.html")
RUN_FILE = "run file"  # what the record calls them
