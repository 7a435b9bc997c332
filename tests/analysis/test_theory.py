"""Random-vector cosines, the JL bound and the fourth-root rule against theory and the chapter."""

from __future__ import annotations

import math

import pytest
import torch

from lrngpt.analysis.theory import (
    cosine_pair_stats,
    fourth_root_width,
    jl_dimension,
    random_cosine_stats,
)
from lrngpt.errors import UserError

N = 4096
PAIRS = N * (N - 1) // 2  # 8,386,560, the chapter's count


@pytest.fixture(scope="module")
def chapter_rows():
    return {r["d"]: r for r in random_cosine_stats(N, [4, 8, 16, 64, 256], seed=0)}


def share_abs_cos_exact(d: int, threshold: float = 0.5, steps: int = 20_000) -> float:
    """P(|cos| > threshold) for two independent Gaussian vectors in d dimensions.

    cos^2 ~ Beta(1/2, (d-1)/2); with cos = cos(theta) the angle has density proportional to
    sin(theta)^(d-2) on [0, pi], so the tail is a ratio of two smooth integrals (Simpson's
    rule; no scipy needed). d = 1: the two vectors are always parallel or opposite.
    """
    if d < 1:
        raise ValueError(f"d {d}: must be at least 1")
    if not 0.0 <= threshold < 1.0:
        raise ValueError(f"threshold {threshold}: must be in [0, 1)")
    if d == 1:
        return 1.0

    def integral(hi: float) -> float:  # int_0^hi sin(t)^(d-2) dt, composite Simpson
        h = hi / steps
        f = [math.sin(i * h) ** (d - 2) for i in range(steps + 1)]  # 0.0 ** 0 == 1.0 covers d = 2
        return h / 3 * (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2]))

    # |cos| > t means theta < acos(t) or theta > pi - acos(t): twice the left tail, by symmetry.
    return 2 * integral(math.acos(threshold)) / (2 * integral(math.pi / 2))


def test_exact_share_matches_closed_forms():
    # d=2: the angle is uniform on [0, pi], |cos| > 1/2 on 2/3 of it; d=3: cos is uniform on [-1, 1].
    assert share_abs_cos_exact(2) == pytest.approx(2 / 3, abs=1e-9)
    assert share_abs_cos_exact(3) == pytest.approx(0.5, abs=1e-9)
    # d=4: cos^2 ~ Beta(1/2, 3/2), density of cos proportional to sqrt(1 - c^2), so
    # P(|cos| > t) = 1 - (2/pi)(t sqrt(1 - t^2) + asin t).
    t = 0.5
    assert share_abs_cos_exact(4) == pytest.approx(1 - 2 / math.pi * (t * math.sqrt(1 - t * t) + math.asin(t)),
                                                   abs=1e-9)
    assert share_abs_cos_exact(1) == 1.0


def _share_se(p: float) -> float:
    # Given one vector X, cos(X, Y) has the same law for every X (rotation invariance), so the
    # indicators of two pairs that share a vector are uncorrelated; pairs sharing none are
    # independent. The share over all pairs therefore has variance exactly p(1-p)/PAIRS.
    return math.sqrt(p * (1 - p) / PAIRS)


def _std_se(d: int) -> float:
    # Same argument for cos^2: E[cos^2] = 1/d, Var(cos^2) = 2(d-1)/(d^2 (d+2)) (Beta(1/2,(d-1)/2)),
    # uncorrelated across pairs; std = sqrt(mean cos^2) (the mean of cos is ~0), so by the delta
    # method SE(std) = SE(mean cos^2) / (2 / sqrt(d)).
    se_m2 = math.sqrt(2 * (d - 1) / (d * d * (d + 2)) / PAIRS)
    return se_m2 * math.sqrt(d) / 2


@pytest.mark.parametrize("d", [4, 8, 16, 64, 256])
def test_std_of_pairwise_cosines_is_one_over_sqrt_d(chapter_rows, d):
    row = chapter_rows[d]
    assert row["inv_sqrt_d"] == pytest.approx(1 / math.sqrt(d))
    assert abs(row["std"] - 1 / math.sqrt(d)) < 5 * _std_se(d)


@pytest.mark.parametrize("d", [4, 8, 16, 64, 256])
def test_share_above_half_matches_beta_tail(chapter_rows, d):
    p = share_abs_cos_exact(d)
    assert abs(chapter_rows[d]["share_abs_gt_0_5"] - p) < 5 * _share_se(p) + 1 / PAIRS


@pytest.mark.parametrize("d", [8, 16, 64, 256])
def test_max_is_where_extreme_value_theory_puts_it(chapter_rows, d):
    # The expected number of pairs above the observed maximum, q = PAIRS * P(cos > max), is
    # close to Exp(1) for the largest of many weakly dependent draws: P(q < 0.0025) ~ 0.25% and
    # P(q > 6) ~ e^-6 ~ 0.25%. A max computed over too few or too many pairs (diagonal!) fails.
    q = PAIRS * share_abs_cos_exact(d, chapter_rows[d]["max"]) / 2
    assert 0.0025 < q < 6


def test_chapter_draw_is_within_sampling_error_of_theory():
    # The chapter's own single draw (seeds/002), checked against the same exact values.
    assert abs(0.3914 - share_abs_cos_exact(4)) < 5 * _share_se(0.391) + 5e-5  # + printed rounding
    assert abs(0.5002 - 0.5) < 5 * _std_se(4) + 5e-5
    assert 0.0025 < PAIRS * share_abs_cos_exact(64, 0.6269) / 2 < 6


def test_printed_shares_round_like_the_chapter(chapter_rows):
    assert f"{100 * chapter_rows[64]['share_abs_gt_0_5']:.2f}" == "0.00"
    assert f"{100 * chapter_rows[256]['share_abs_gt_0_5']:.2f}" == "0.00"
    assert f"{chapter_rows[4]['max']:.4f}" == "1.0000"


@pytest.mark.parametrize("chunk", [1, 5, 37, 512])
def test_chunked_stats_equal_brute_force_over_distinct_pairs(chunk):
    x = torch.randn(37, 3, generator=torch.Generator().manual_seed(1))
    u = x / x.norm(dim=1, keepdim=True)
    i, j = torch.triu_indices(37, 37, offset=1)
    c = (u @ u.T)[i, j].double()
    s = cosine_pair_stats(x, chunk=chunk)
    assert s["pairs"] == 37 * 36 // 2 == c.numel()
    assert s["std"] == pytest.approx(c.std(unbiased=False).item(), abs=1e-6)
    assert s["max"] == pytest.approx(c.max().item(), abs=1e-6)
    assert s["share_abs_gt_0_5"] == pytest.approx((c.abs() > 0.5).double().mean().item(), abs=1e-12)


def test_seed_fixes_the_draw_and_other_widths_do_not_change_it():
    a = random_cosine_stats(200, [8], seed=3)
    assert a == random_cosine_stats(200, [4, 8], seed=3)[1:]
    assert a != random_cosine_stats(200, [8], seed=4)


def test_jl_bound_reproduces_chapter():
    assert round(jl_dimension(4096, 0.5), 1) == 399.3
    assert round(jl_dimension(4096, 0.1), 1) == 7129.5
    assert jl_dimension(4096, 0.5) == pytest.approx(24 * math.log(4096) / 0.5)


def test_fourth_root_of_4096_is_8():
    assert fourth_root_width(4096) == 8.0
    assert fourth_root_width(16) == 2.0


@pytest.mark.parametrize("n, eps", [(4096, 0.0), (4096, 1.0), (4096, -0.1), (4096, 1.5),
                                    (4096, float("nan")), (1, 0.5), (0, 0.5)])
def test_jl_rejects_bad_values(n, eps):
    with pytest.raises(UserError):
        jl_dimension(n, eps)


@pytest.mark.parametrize("n, dims", [(1, [4]), (100, []), (100, [4, 0]), (100, [-3]), (10**6, [10**4])])
def test_random_cosine_rejects_bad_values(n, dims):
    with pytest.raises(UserError):
        random_cosine_stats(n, dims)


def test_fourth_root_rejects_fewer_than_two():
    with pytest.raises(UserError):
        fourth_root_width(1)
