"""The arithmetic the sweep's tables, findings and judges share."""

from __future__ import annotations

from collections.abc import Iterable


def mean_or_none(values: Iterable[object]) -> float | None:
    """The mean of the numbers among `values`; None when there is none (so nothing measured says so)."""
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    return sum(numbers) / len(numbers) if numbers else None


def lsq_slope(xs: list[float], ys: list[float]) -> float:
    """The least-squares slope of `ys` against `xs` (0 where the xs do not vary)."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx if sxx else 0.0
