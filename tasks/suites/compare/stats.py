"""Paired tests for two runs of the same cases, computed exactly with the standard library.

Pass/fail: the exact McNemar test. Of the cases whose verdict differs between the runs (the
discordant pairs), `b` went from passed to not passed and `c` the other way; under "no
change" each discordant case is equally likely to go either way, so b ~ Binomial(b + c, 1/2)
and the two-sided p-value is 2 * P(X <= min(b, c)), capped at 1 (McNemar 1947; the exact
form is the sign test on the discordant pairs). Up to `MCNEMAR_EXACT_LIMIT` discordant cases
the tail is summed in integers (exact); above it, in floating point from the binomial
probability at min(b, c), computed as R's `dbinom` does (Loader 2000: Stirling's error terms
and a deviance term `bd0`, accurate to a few ulps where `lgamma` differences would cancel),
then summed down the recurrence P(i - 1) = P(i) * i / (n - i + 1) until the terms no longer
change the sum. Its cost grows with the square root of the cases (the terms fall off like a
normal's tails), so a million flipped cases take milliseconds; the integer sum of all the
binomial coefficients took cubic time (20,000 flipped cases: 36 s). Both agree to 1e-12
relative where both run (tests/compare/test_stats.py).

Scores (and pass fractions of repeated cases): the Wilcoxon signed-rank test on the per-case
differences. Chosen over a bootstrap interval because it is deterministic (no seed to pick or
report), exact for the small suites evaluations have, and gives a p-value on the same footing
as McNemar's. Zero differences are dropped (Wilcoxon's own treatment); tied magnitudes share
their mean rank. Up to `EXACT_LIMIT` non-zero differences the p-value is exact: the
permutation distribution of W+ (every sign pattern of the observed ranks equally likely) is
counted by dynamic programming over doubled ranks, which stay integers under ties. Above it,
the normal approximation with the tie correction of the variance (no continuity correction),
as scipy.stats.wilcoxon does for large samples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

MCNEMAR_EXACT_LIMIT = 2000  # discordant cases summed in integers (a few ms at most)
EXACT_LIMIT = 50  # scipy.stats.wilcoxon switches to the normal approximation at the same size


@dataclass(frozen=True)
class TestResult:
    """A paired test: its name, its statistic, its two-sided p-value and the pairs it used."""

    __test__ = False  # not a pytest test class

    test: str
    statistic: float
    p_value: float
    n: int


def mcnemar_exact(b: int, c: int) -> TestResult:
    """Exact two-sided McNemar test: `b` cases went passed -> not passed, `c` the reverse."""
    if b < 0 or c < 0:
        raise ValueError("discordant counts cannot be negative")
    n = b + c
    if n == 0:
        return TestResult("mcnemar-exact", 0.0, 1.0, 0)
    k = min(b, c)
    tail = exact_lower_tail(n, k) if n <= MCNEMAR_EXACT_LIMIT else lower_tail(n, k)
    return TestResult("mcnemar-exact", float(k), min(1.0, 2 * tail), n)


def exact_lower_tail(n: int, k: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2), summed in integers (exact, then rounded once)."""
    tail, term = 0, 1  # term: C(n, i)
    for i in range(k + 1):
        tail += term
        term = term * (n - i) // (i + 1)
    return float(Fraction(tail, 2**n))


def lower_tail(n: int, k: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2) and k <= n / 2, in floating point: the probability
    at k (`_log_half_binomial`), then the terms below it by their ratio, until one no longer
    changes the sum (each is smaller than the one above it by at least k / (n - k + 1), so
    the rest sums below the last)."""
    if k >= n - k:  # the median's half or more: the two-sided p-value is capped at 1
        return 0.5 if k * 2 == n else 1.0
    if k == 0:
        return math.ldexp(1.0, -n)
    log_top = _log_half_binomial(n, k)
    total, term, i = 1.0, 1.0, k  # in units of the probability at k
    while i > 0:
        term *= i / (n - i + 1)
        if term < total * 2.0**-60:
            break
        total += term
        i -= 1
    return math.exp(log_top + math.log(total))


_LN_2PI = math.log(2 * math.pi)


def _log_half_binomial(n: int, k: int) -> float:
    """log P(X = k) for X ~ Binomial(n, 1/2), 0 < k < n (Loader's saddle-point form)."""
    half = n / 2
    log_c = _stirling_error(n) - _stirling_error(k) - _stirling_error(n - k)
    log_c -= _deviance(k, half) + _deviance(n - k, half)
    return log_c - 0.5 * (_LN_2PI + math.log(k) + math.log1p(-k / n))


def _stirling_error(n: int) -> float:
    """log(n!) - log(sqrt(2 pi n) (n / e)^n), by its asymptotic series above 15."""
    if n <= 15:
        return math.lgamma(n + 1) - (n + 0.5) * math.log(n) + n - 0.5 * _LN_2PI
    s0, s1, s2, s3, s4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
    nn = float(n) * n
    if n > 500:
        return (s0 - s1 / nn) / n
    if n > 80:
        return (s0 - (s1 - s2 / nn) / nn) / n
    if n > 35:
        return (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / n
    return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n


def _deviance(x: float, mean: float) -> float:
    """x log(x / mean) + mean - x, by its series when x is near `mean` (where the direct form
    cancels)."""
    if abs(x - mean) < 0.1 * (x + mean):
        v = (x - mean) / (x + mean)
        s = (x - mean) * v
        ej = 2 * x * v
        v *= v
        j = 1
        while True:
            ej *= v
            s1 = s + ej / (2 * j + 1)
            if s1 == s:
                return s1
            s, j = s1, j + 1
    return x * math.log(x / mean) + mean - x


def _ranks(values: list[float]) -> list[float]:
    """Ranks of `values` (1-based) in their order, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        shared = (start + end + 2) / 2
        for k in range(start, end + 1):
            ranks[order[k]] = shared
        start = end + 1
    return ranks


def wilcoxon_signed_rank(differences: list[float]) -> TestResult:
    """Two-sided Wilcoxon signed-rank test of paired differences (current - baseline)."""
    # below this a difference is float noise from averaging scores, not a change
    nonzero = [d for d in differences if abs(d) > 1e-12]
    n = len(nonzero)
    if n == 0:
        return TestResult("wilcoxon-signed-rank", 0.0, 1.0, 0)
    ranks = _ranks([abs(d) for d in nonzero])
    w_plus = sum(r for r, d in zip(ranks, nonzero, strict=True) if d > 0)
    p = _exact_p(ranks, w_plus) if n <= EXACT_LIMIT else _normal_p(ranks, w_plus)
    return TestResult("wilcoxon-signed-rank", w_plus, min(1.0, p), n)


def _exact_p(ranks: list[float], w_plus: float) -> float:
    doubled = [round(2 * r) for r in ranks]  # mean ranks are halves at worst
    total = sum(doubled)
    counts = [0] * (total + 1)  # counts[s]: sign patterns whose doubled W+ is s
    counts[0] = 1
    reached = 0
    for r in doubled:
        reached += r
        for s in range(reached, r - 1, -1):
            counts[s] += counts[s - r]
    observed = round(2 * w_plus)
    patterns = 2 ** len(ranks)
    lower = Fraction(sum(counts[: observed + 1]), patterns)
    upper = Fraction(sum(counts[observed:]), patterns)
    return float(min(Fraction(1), 2 * min(lower, upper)))


def _normal_p(ranks: list[float], w_plus: float) -> float:
    n = len(ranks)
    mean = n * (n + 1) / 4
    # tie correction: each group of t equal magnitudes lowers the variance by (t^3 - t) / 48
    groups: dict[float, int] = {}
    for r in ranks:
        groups[r] = groups.get(r, 0) + 1
    variance = n * (n + 1) * (2 * n + 1) / 24 - sum(t**3 - t for t in groups.values()) / 48
    if variance <= 0:
        return 1.0
    z = (w_plus - mean) / math.sqrt(variance)
    return math.erfc(abs(z) / math.sqrt(2))


def mcnemar_critical(m: int, alpha: float) -> int | None:
    """The least number of regressions among `m` discordant cases that the exact McNemar
    test calls significant at `alpha` (None: no split of `m` cases is)."""
    # p(b) = 2 * sum_{i <= m - b} C(m, i) / 2^m for b > m / 2: grow the lower tail while it
    # stays significant; its last index j gives the critical b = m - j
    limit = Fraction(alpha) * 2**m / 2
    tail, j, term = 0, -1, 1  # term: C(m, j + 1), updated as j grows
    while j + 1 < (m + 1) // 2 and tail + term <= limit:
        j += 1
        tail += term
        term = term * (m - j) // (j + 1)
    return None if j < 0 else m - j


def _binomial_pmf(k: int, n: int, p: float) -> float:
    if p <= 0.0:
        return 1.0 if k == 0 else 0.0
    if p >= 1.0:
        return 1.0 if k == n else 0.0
    log = (
        math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
        + k * math.log(p) + (n - k) * math.log1p(-p)
    )  # fmt: skip
    return math.exp(log)


class McNemarPower:
    """The power of the exact McNemar test to flag a regression.

    A change makes each case go passed -> failed with probability `worse` and failed ->
    passed with probability `better`, independently. With n cases the number m of discordant
    cases is Binomial(n, worse + better); given m, the regressions are Binomial(m, worse /
    (worse + better)); the test flags a regression when they reach the critical count of m.
    The power is that probability summed over m, exactly (up to floating point).
    """

    def __init__(self, worse: float, better: float, alpha: float = 0.05) -> None:
        if worse <= 0 or better < 0 or worse + better > 1:
            raise ValueError("need 0 < worse, 0 <= better and worse + better <= 1")
        self.worse, self.better, self.alpha = worse, better, alpha
        self._flagged: list[float] = []  # [m]: P(flagged | m discordant cases)

    def _flagged_given(self, m: int) -> float:
        share = self.worse / (self.worse + self.better)
        while len(self._flagged) <= m:
            size = len(self._flagged)
            critical = mcnemar_critical(size, self.alpha)
            self._flagged.append(
                0.0
                if critical is None
                else sum(_binomial_pmf(k, size, share) for k in range(critical, size + 1))
            )
        return self._flagged[m]

    def power(self, n: int) -> float:
        discordant = self.worse + self.better
        return sum(_binomial_pmf(m, n, discordant) * self._flagged_given(m) for m in range(n + 1))

    def cases_needed(self, target: float = 0.8, limit: int = 5000) -> int | None:
        """The least number of cases whose power reaches `target` (the exact test's power is
        not monotone in n, so this is the first n that reaches it); None above `limit`."""
        for n in range(1, limit + 1):
            if self.power(n) >= target:
                return n
        return None
