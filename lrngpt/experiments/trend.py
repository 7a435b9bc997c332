"""The findings judge's arithmetic: an `Estimate` is a value and the coefficients that made it from
numbers measured once per width, each with the same independent noise sigma, so its noise is sigma x
the coefficients' length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from lrngpt.experiments.thresholds import Z


@dataclass(frozen=True)
class Estimate:
    value: float
    coeffs: tuple[float, ...]  # over the measured numbers, one per width

    @cached_property
    def norm(self) -> float:
        return math.sqrt(sum(c * c for c in self.coeffs))

    def noise(self, sigma: float) -> float:
        """Its standard deviation, from sigma per measured number."""
        return sigma * self.norm

    def above(self, sigma: float, z: float = Z) -> bool:
        """Above zero beyond the noise (z times it)."""
        return self.value > z * self.noise(sigma)

    def below(self, sigma: float, z: float = Z) -> bool:
        """Below zero beyond the noise (z times it)."""
        return self.value < -z * self.noise(sigma)

    def __sub__(self, other: Estimate) -> Estimate:
        return Estimate(self.value - other.value, tuple(a - b for a, b in zip(self.coeffs, other.coeffs, strict=True)))


def point(values: list[float], i: int) -> Estimate:
    return Estimate(values[i], tuple(float(k == i) for k in range(len(values))))


def difference(values: list[float], i: int, j: int) -> Estimate:
    """values[j] - values[i]."""
    return point(values, j) - point(values, i)


def octaves(widths: list[int]) -> list[float]:
    """log2 of each width: the chapter's axis, one unit per doubling."""
    return [math.log2(d) for d in widths]


def savings(widths: list[int], values: list[float]) -> list[Estimate]:
    """What each step between neighbouring widths saves, per doubling (16 -> 64 is two doublings)."""
    x, n = octaves(widths), len(values)
    out = []
    for i in range(n - 1):
        k = x[i + 1] - x[i]
        coeffs = [0.0] * n
        coeffs[i], coeffs[i + 1] = 1 / k, -1 / k
        out.append(Estimate((values[i] - values[i + 1]) / k, tuple(coeffs)))
    return out


def slope(xs: list[float], qs: list[Estimate]) -> Estimate:
    """The least-squares slope of the quantities `qs` against `xs` (at least two points)."""
    mean = sum(xs) / len(xs)
    sxx = sum((x - mean) ** 2 for x in xs)
    weights = [(x - mean) / sxx for x in xs]
    n = len(qs[0].coeffs)
    coeffs = [sum(w * q.coeffs[j] for w, q in zip(weights, qs, strict=True)) for j in range(n)]
    return Estimate(sum(w * q.value for w, q in zip(weights, qs, strict=True)), tuple(coeffs))


def fitted_last(xs: list[float], values: list[float]) -> Estimate:
    """The least-squares line through (xs, values) at the last x: less noisy than the last point alone."""
    n = len(xs)
    mean = sum(xs) / n
    sxx = sum((x - mean) ** 2 for x in xs)
    coeffs = [1 / n + (x - mean) * (xs[-1] - mean) / sxx for x in xs]
    return Estimate(sum(c * v for c, v in zip(coeffs, values, strict=True)), tuple(coeffs))


def midpoints(widths: list[int]) -> list[float]:
    """Where each saving sits on the log2 axis: halfway between its two widths."""
    x = octaves(widths)
    return [(a + b) / 2 for a, b in zip(x, x[1:], strict=False)]

