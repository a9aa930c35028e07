"""Scores of tests: proportions with Wilson intervals, and means."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal


def wilson_interval(successes: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default); (0, 1) with no trials.

    Unlike the normal approximation it stays inside [0, 1] and is sensible for small n
    and for proportions near 0 or 1, which is where consistency scores live.
    """
    if total <= 0:
        return 0.0, 1.0
    p = successes / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    margin = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - margin)
    high = 1.0 if successes == total else min(1.0, centre + margin)
    return low, high


@dataclass(frozen=True)
class Metric:
    """One metric of a test.

    `n` is what it was computed over: judged pairs (consistency), judged answers
    (similarity, correctness) or cases (recall). Proportions carry a 95% Wilson interval.
    """

    name: str
    value: float
    n: int
    unit: str
    successes: int | None = None

    @property
    def interval(self) -> tuple[float, float] | None:
        if self.successes is None:
            return None
        return wilson_interval(self.successes, self.n)

    def __float__(self) -> float:
        return self.value

    def __str__(self) -> str:
        """The value: `print(run.pass_rate())` shows a number, as a script expects."""
        return str(self.value)

    @property
    def lower_bound(self) -> float:
        interval = self.interval
        return interval[0] if interval is not None else self.value


def proportion(name: str, successes: int, total: int, unit: str) -> Metric | None:
    """A proportion metric, or None when nothing was judged."""
    if total <= 0:
        return None
    return Metric(name, successes / total, total, unit, successes)


def mean_metric(name: str, values: Sequence[float], unit: str) -> Metric | None:
    """The mean of per-case values, or None when there are none."""
    if not values:
        return None
    return Metric(name, sum(values) / len(values), len(values), unit)
