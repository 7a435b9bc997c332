"""Experiments: sweeps over config keys x seeds, their tables and figures (SPEC section 8)."""

from lrngpt.experiments.summary import summarize
from lrngpt.experiments.sweep import Sweep, parse_shard, resolve_sweep, run_sweep

__all__ = ["Sweep", "parse_shard", "resolve_sweep", "run_sweep", "summarize"]
