"""Every aggregation of repeated runs in one place: the trial reducers and the intervals.

A reducer turns the runs of one case (each run's score and whether it passed) into one
`Reduced` result; reducers join the `REDUCERS` registry by name, the names a suite's
`trials` strategy and a report's pass@k/pass^k use:

- `pass_at_k`: the best run's score; the case passes when any run passed (AgentV's
  `aggregatePassAtK`).
- `pass_any`: the same, every run made (AgentV 4's `evaluate_options.repeat`).
- `pass_hat_k` (pass^k): the worst run's score; the case passes only when every run passed.
- `mean`: the mean score; it decides against the suite's pass score.
- `confidence_interval`: the lower bound of the mean's two-sided 95% Student's t interval
  (AgentV's `getTCritical` table, 1.96 from 30 degrees of freedom); it decides against the
  suite's pass score.

Beside them, the figures of a set of cases: proportions (`Metric`, `proportion`) with their
95% Wilson score interval, means (`mean_metric`) and the normal-approximation interval of a
mean (`mean_interval`). The paired tests of `accord compare` (McNemar, Wilcoxon) compare two
runs rather than reduce one, and stay in tasks/suites/compare/stats.py.
"""

from __future__ import annotations

import functools
import math
import operator
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ....engine.registry import Registry

Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal

# two-sided 95% critical values of Student's t for 1..29 degrees of freedom (standard table)
T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045,
)  # fmt: skip


def t_critical(df: int) -> float:
    return T95[df - 1] if 1 <= df <= len(T95) else 1.96


def js_sum(values: Sequence[float]) -> float:
    """Left to right, as AgentV's `reduce` adds (Python's `sum` compensates rounding, so a
    mean could differ from AgentV's in the last bit and cross the 0.8 line)."""
    return functools.reduce(operator.add, values, 0.0)


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


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float] | None:
    """A normal-approximation 95% interval of a mean (None under 2 values), kept in [0, 1]
    when the values are."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    half = z * statistics.stdev(values) / math.sqrt(len(values))
    low, high = mean - half, mean + half
    if all(0.0 <= v <= 1.0 for v in values):
        low, high = max(0.0, low), min(1.0, high)
    return low, high


def t_interval(scores: Sequence[float]) -> tuple[float, float, float]:
    """(mean, lower, upper) of the mean's two-sided 95% t interval, kept in [0, 1]; a single
    score is its own interval."""
    mean = js_sum(scores) / len(scores)
    if len(scores) < 2:
        return mean, mean, mean
    stddev = math.sqrt(js_sum([(s - mean) ** 2 for s in scores]) / (len(scores) - 1))
    half = t_critical(len(scores) - 1) * (stddev / math.sqrt(len(scores)))
    return mean, max(0.0, mean - half), min(1.0, mean + half)


@dataclass(frozen=True)
class Reduced:
    """One case's runs reduced: its `score`; `passed` when the reducer decides it (None: the
    suite's pass score decides); `details` say how (a report's `aggregation`)."""

    score: float
    passed: bool | None
    details: dict[str, Any] = field(default_factory=dict)


Reducer = Callable[[Sequence[float], Sequence[bool]], Reduced]

REDUCERS: Registry[Reducer] = Registry("trial strategy", plugins=False)


def reducer(name: str) -> Callable[[Reducer], Reducer]:
    """Register a reducer of (scores, passed) of one case's runs under `name`."""
    return REDUCERS.register(name)


@reducer("pass_at_k")
def pass_at_k(scores: Sequence[float], passed: Sequence[bool]) -> Reduced:
    details = {"strategy": "pass_at_k", "passed": sum(passed), "trials": len(scores)}
    return Reduced(max(scores), any(passed), details)


@reducer("pass_any")
def pass_any(scores: Sequence[float], passed: Sequence[bool]) -> Reduced:
    """AgentV 4's `evaluate_options.repeat` (trials.ts, aggregatePassAny): pass_at_k's
    result, every trial run (no stop at the first pass)."""
    details = {"strategy": "pass_any", "passed": sum(passed), "trials": len(scores)}
    return Reduced(max(scores), any(passed), details)


@reducer("pass_hat_k")
def pass_hat_k(scores: Sequence[float], passed: Sequence[bool]) -> Reduced:
    details = {"strategy": "pass_hat_k", "passed": sum(passed), "trials": len(scores)}
    return Reduced(min(scores), all(passed), details)


@reducer("mean")
def mean(scores: Sequence[float], passed: Sequence[bool]) -> Reduced:
    value = js_sum(scores) / len(scores)
    details = {"strategy": "mean", "mean": value, "min": min(scores), "max": max(scores)}
    return Reduced(value, None, details)


@reducer("confidence_interval")
def confidence_interval(scores: Sequence[float], passed: Sequence[bool]) -> Reduced:
    value, low, high = t_interval(scores)
    details = {"strategy": "confidence_interval", "mean": value, "lower": low, "upper": high}
    return Reduced(low, None, details)


def reduce_runs(strategy: str, scores: Sequence[float], passed: Sequence[bool]) -> Reduced:
    """One case's runs reduced under the registered `strategy`."""
    return REDUCERS.get(strategy)(scores, passed)


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
