"""Every threshold of the findings judge and of a budget's reading, named once (their derivation:
docs/embedding-width-study.md).

The noise sigma is the largest max - min over the seeds of one setting. Two z's, so that noise can
hide a finding but never invent one: a test whose passing keeps a finding from showing uses Z; one
whose passing makes it show uses Z_STRICT (tests/experiments/test_findings_properties.py measures
the false-showing rate on generated curves).
"""

from __future__ import annotations

from lrngpt.data.sizing import REREAD_PASSES

Z = 2.0  # a difference is beyond the noise when it exceeds Z times its propagated noise
Z_STRICT = 3.0  # the same where passing makes a finding show, or for the largest of several differences
NOISE_WITHOUT_SEEDS = 0.002  # bpb: sigma without a seed sweep, about twice the largest seed range measured (0.0012)
NOISE_FLOOR = 0.0004  # bpb: the smallest seed range measured (the chapter's three seeds); a smaller one is luck
FEW_PASSES = 0.25  # passes: at most this, finding 2's premise holds (2.6% of targets read twice; the chapter 0.7%)
MANY_PASSES = 4.0  # passes: a series reading its text this often is a small-data series (the chapter's: 16)
MIN_STEPS = 100  # steps: the fewest a budgeted run is planned with (fewer and the curves say nothing)
# trained: train bpb at most this share of the untrained val bpb (token frequencies alone score 0.69 to 0.83)
TRAINED = 0.6
OWN_TEXT_PASSES = REREAD_PASSES  # passes: a budget's ceiling for a text too small for MIN_STEPS under FEW_PASSES (one pass)
# a plan fills at most HEADROOM of its minutes: probed steps vary 13% between invocations, and a browser tab
# takes a tenth of two cores (the help texts' times were measured on QUIET_MACHINE)
HEADROOM = 0.88
MAX_MINUTES = 7 * 24 * 60.0  # a week: past it a study runs at its --scale, not a budget planned from seconds of probes
QUIET_MACHINE = "a quiet 2-core machine (AMD EPYC, Zen 1; nothing else running)"
