"""Every threshold of the findings judge (lrngpt.experiments.findings) and of a budget's reading, named
once (docs/embedding-width-study.md derives each value; the budget plans for the FEW_PASSES the judge
asks of finding 2). The noise sigma is the largest max - min of a value over the seeds of one setting
(at least NOISE_FLOOR; without seeds NOISE_WITHOUT_SEEDS); what a judge tests is a linear combination
of such numbers, beyond the noise when above Z x sigma x its coefficients' length (lrngpt.experiments.trend).

Taking the range of two or three seeds as sigma is deliberate: the range of three normal draws is on
average 1.69 standard deviations, so Z x range = 3.4 standard deviations, about Student's t at 95%
one-sided for the two degrees of freedom three seeds give (2.92). A smaller noise would trust three
seeds more than they allow.

Two thresholds, so that noise can hide a finding but never invent one. A test whose passing keeps a
finding from showing (val bpb rises past its lowest width, for finding 2; a gap above zero; train
bpb rising, for finding 3) uses Z = 2. A test whose passing makes a finding show (the savings' slope
below zero and the first saving above the noise, for finding 1; the turn, for finding 3) uses
Z_STRICT = 3, and so does the largest of several differences (a saving larger than the one before:
one of six noisy differences passes Z = 2 by chance in about one curve in ten). Three seeds can
read the noise low: with their range at the noise itself, Z = 2 would let one curve in forty
without diminishing returns show them; Z_STRICT = 3, about one in a thousand (the property tests,
tests/experiments/test_findings_properties.py, measure it on generated curves).
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
# a width has trained once its train bpb (else val bpb) is at most this share of its untrained val bpb (step 0):
# token frequencies alone score 0.83 of the untrained bpb on the stories at vocabulary 512 and 0.69 at 4,096
# (measured: the unigram of the training split on the validation split), so below 0.6 a model reads its context;
# the cpu scale's widths end near 0.1-0.2 of it, --scale tiny's 30 steps at 0.75-0.85 ("cannot show at this scale")
TRAINED = 0.6
OWN_TEXT_PASSES = REREAD_PASSES  # passes: a budget's ceiling for a text too small for MIN_STEPS under FEW_PASSES (one pass)
# A budget (`lrn sweep STUDY --minutes N`, `lrn chapter`): a plan fills at most HEADROOM of its minutes (why:
# lrngpt.experiments.budget), and none past MAX_MINUTES is planned. The times lrn's help texts give were measured
# on QUIET_MACHINE.
HEADROOM = 0.88
MAX_MINUTES = 7 * 24 * 60.0  # a week: past it a study runs at its --scale, not a budget planned from seconds of probes
QUIET_MACHINE = "a quiet 2-core machine (AMD EPYC, Zen 1; nothing else running)"
