"""The arithmetic the sweep's tables, findings and judges share."""

from __future__ import annotations

from collections.abc import Iterable


def mean_or_none(values: Iterable[object]) -> float | None:
    """The mean of the numbers among `values`; None when there is none (so nothing measured says so)."""
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    return sum(numbers) / len(numbers) if numbers else None
