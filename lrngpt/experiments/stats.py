"""The arithmetic the sweep's tables, findings and judges share."""

from __future__ import annotations

import statistics
from collections.abc import Iterable


def mean_or_none(values: Iterable[object]) -> float | None:
    """The mean of the numbers among `values`; None when there is none (so nothing measured says so)."""
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    return sum(numbers) / len(numbers) if numbers else None


def lsq_slope(xs: list[float], ys: list[float]) -> float:
    """The least-squares slope of `ys` against `xs` (0 where the xs do not vary)."""
    return statistics.linear_regression(xs, ys).slope if len(set(xs)) > 1 else 0.0
