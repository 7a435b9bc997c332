"""Theory of the embedding width (the book chapter on choosing it): random-vector cosines (std
1/sqrt(d)), the Johnson-Lindenstrauss bound (Dasgupta-Gupta constants) and the fourth-root rule.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from lrngpt.errors import UserError, option

if TYPE_CHECKING:
    import torch

# Rows of the Gram matrix computed at once: memory is CHUNK x N floats (fewer rows for huge N).
CHUNK = 512
MAX_VECTOR_FLOATS = 200_000_000  # the N x d draw itself must fit: 800 MB of float32
MAX_PAIR_WORK = 10**12  # pairs x width multiply-adds: minutes on a laptop, not days


def random_cosine_stats(n: int, dims: list[int], seed: int = 0, chunk: int = CHUNK) -> list[dict]:
    """Per width d: std (beside 1/sqrt(d)), max and share of |cos| > 0.5 of all n(n-1)/2 pairs of n
    Gaussian vectors; the Gram matrix is never held whole (`chunk` rows at a time, each pair once)."""
    # torch: `lrn theory fourth-root` loads this module
    import torch

    if n < 2:
        raise UserError(f"{option('n', n)}: need at least 2 vectors to form a pair")
    if not dims:
        raise UserError(f"{option('dims')} is empty: give widths like 4,8,16")
    if min(dims) < 1:
        raise UserError(f"{option('dims', min(dims))}: every width must be at least 1")
    if n * max(dims) > MAX_VECTOR_FLOATS:
        raise UserError(f"{option('n', n)} x {option('dims', max(dims))} is {n * max(dims):,} numbers, more than "
                        f"{MAX_VECTOR_FLOATS:,}; use fewer vectors or a smaller width")
    work = n * (n - 1) // 2 * sum(dims)
    if work > MAX_PAIR_WORK:
        raise UserError(f"{option('n', n)} gives {n * (n - 1) // 2:,} pairs; over all {option('dims')} that is {work:,} "
                        f"multiply-adds, more than {MAX_PAIR_WORK:,} (hours of work); use fewer vectors")
    rows = []
    for d in dims:
        # One generator per width, so the draw for d does not depend on which other widths were asked.
        # (mod 2**64: torch reads a seed that way, so every seed that fitted gives the same draw)
        gen = torch.Generator().manual_seed((seed * 1_000_003 + d) % 2**64)
        x = torch.randn(n, d, generator=gen)
        s = cosine_pair_stats(x, chunk)
        # inv_sqrt_d beside std: **s keeps the keys already placed where they are
        rows.append({"d": d, "std": s["std"], "inv_sqrt_d": 1.0 / math.sqrt(d), **s})
    return rows


def cosine_pair_stats(x: torch.Tensor, chunk: int = CHUNK) -> dict:
    """std, max and share of |cos| > 0.5 over the cosines of all distinct pairs of rows of x (n, d)."""
    # torch: `lrn theory fourth-root` loads this module
    import torch

    n = x.shape[0]
    chunk = max(1, min(chunk, 2**24 // n))
    pairs = n * (n - 1) // 2
    x = x.float()
    x = x / x.norm(dim=1, keepdim=True).clamp_min(1e-12)
    total = total_sq = 0.0
    biggest = -1.0
    above = 0
    for i0 in range(0, n - 1, chunk):
        # pairs (i, j > i) of these rows: the upper triangle of their cosines with every row from i0 on
        c = (x[i0:i0 + chunk] @ x[i0:].T).clamp(-1.0, 1.0)  # float32 rounding may step just past 1
        c = c[torch.ones_like(c, dtype=torch.bool).triu(1)]
        total += c.sum(dtype=torch.float64).item()
        total_sq += c.square().sum(dtype=torch.float64).item()
        biggest = max(biggest, c.max().item())
        above += int((c.abs() > 0.5).sum().item())
    mean = total / pairs
    return {"std": math.sqrt(max(total_sq / pairs - mean * mean, 0.0)), "max": biggest,
            "share_abs_gt_0_5": above / pairs, "count_abs_gt_0_5": int(above), "pairs": pairs}


def jl_dimension(n: int, eps: float) -> float:
    """Dasgupta-Gupta form of the Johnson-Lindenstrauss bound: k >= 24 ln N / (3 eps^2 - 2 eps^3)."""
    if n < 2:
        raise UserError(f"{option('n', n)}: the bound is about distances between at least 2 points")
    if not 0.0 < eps < 1.0:  # (NaN is not; lrngpt.api.checks has made it a number)
        raise UserError(f"{option('eps', eps)}: the distortion must lie strictly between 0 and 1, e.g. 0.1")
    # 3 eps^2 - 2 eps^3 = eps^2 (3 - 2 eps), divided out one factor at a time: eps^2 alone
    # underflows to 0 below eps ~ 1e-162
    k = 24.0 * math.log(n) / (3 - 2 * eps) / eps / eps
    if not math.isfinite(k):
        log10_k = math.log10(24.0 * math.log(n) / (3 - 2 * eps)) - 2 * math.log10(eps)
        raise UserError(f"{option('eps', f'{eps:g}')}: the bound is about 10^{log10_k:.0f} dimensions, beyond what a float "
                        f"holds (10^308); use {option('eps')} of 1e-150 or more")
    return k


def fourth_root_width(n: int) -> float:
    """The feature-column rule of thumb: embedding width = (number of categories) ** 0.25."""
    if n < 2:
        raise UserError(f"{option('n', n)}: need at least 2 categories")
    return float(n) ** 0.25  # (lrn takes integers of at most 100 digits: n fits in a float)
