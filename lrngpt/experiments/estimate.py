"""How long a sweep point takes on this machine: lrngpt.training.timing's probe, extrapolated.

The timing lives in the training layer, where `lrn train` times a long run before it starts
(lrngpt.training.duration); the sweep's planners (dry_run, budget) call it through this module.
"""

from lrngpt.training.timing import PROBE_STEPS, PROBE_TOKENS, clock, estimate_seconds, eval_tokens_of, probe

__all__ = ["PROBE_STEPS", "PROBE_TOKENS", "clock", "estimate_seconds", "eval_tokens_of", "probe"]
