"""The paired tests against values computed by hand (each derivation is in the comment), and
against scipy where it happens to be installed (it is not a dependency)."""

from __future__ import annotations

import math

import pytest

from accord.tasks.suites.compare.stats import (
    McNemarPower,
    mcnemar_critical,
    mcnemar_exact,
    wilcoxon_signed_rank,
)


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        # n = 5 discordant, min(b, c) = 0: 2 * C(5,0) / 2^5 = 2/32
        (0, 5, 0.0625),
        (5, 0, 0.0625),
        # n = 10, min = 1: 2 * (C(10,0) + C(10,1)) / 2^10 = 2 * 11 / 1024
        (1, 9, 22 / 1024),
        # n = 6, min = 0: 2/64, the smallest all-one-way split significant at 0.05
        (6, 0, 2 / 64),
        # n = 4, min = 2: 2 * (1 + 4 + 6) / 16 > 1, capped at 1
        (2, 2, 1.0),
        # n = 20, min = 5: 2 * (1 + 20 + 190 + 1140 + 4845 + 15504) / 2^20 = 43400 / 1048576
        (15, 5, 43400 / 1048576),
        (0, 0, 1.0),  # no discordant pair: nothing changed
    ],
)
def test_exact_mcnemar_matches_the_binomial_sums(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c).p_value == pytest.approx(p, rel=1e-12)
    assert mcnemar_exact(b, c).n == b + c


@pytest.mark.parametrize(
    ("differences", "w_plus", "p"),
    [
        # all 5 positive, ranks 1..5: W+ = 15, only 1 of the 2^5 sign patterns reaches it,
        # two-sided 2/32
        ([0.1, 0.2, 0.3, 0.4, 0.5], 15.0, 2 / 32),
        # rank 1 negative: W+ = 14; patterns with W+ >= 14: {1..5} and {2..5}: 2 * 2/32
        ([-0.1, 0.2, 0.3, 0.4, 0.5], 14.0, 4 / 32),
        # zeros are dropped; |d| = 0.5, 0.5, 0.5 tie at rank 2, 1.0 is rank 4; W+ = 2 + 2 + 4
        # = 8 of a maximum 10; doubled ranks 4,4,4,8: patterns with doubled W+ <= 16
        # (lower tail) are 14 of 16, >= 16 are 4 of 16: p = 2 * 4/16 = 0.5
        ([0.5, 0.5, -0.5, 1.0, 0.0], 8.0, 0.5),
        ([0.0, 0.0], 0.0, 1.0),
    ],
)
def test_wilcoxon_signed_rank_exact(differences: list[float], w_plus: float, p: float) -> None:
    result = wilcoxon_signed_rank(differences)
    assert result.statistic == w_plus
    assert result.p_value == pytest.approx(p, rel=1e-12)


def test_wilcoxon_large_samples_use_the_normal_approximation() -> None:
    # 60 differences 1..60 with the 10 smallest negative: W+ = sum(11..60) = 1775;
    # mean 60*61/4 = 915, variance 60*61*121/24 = 18452.5, z = 860 / sqrt(18452.5)
    differences = [float(-d) if d <= 10 else float(d) for d in range(1, 61)]
    result = wilcoxon_signed_rank(differences)
    z = 860 / math.sqrt(18452.5)
    assert result.statistic == 1775.0
    assert result.p_value == pytest.approx(math.erfc(z / math.sqrt(2)), rel=1e-9)


@pytest.mark.reference
def test_against_scipy_when_installed() -> None:
    stats = pytest.importorskip("scipy.stats")
    for b, c in ((3, 12), (7, 2), (20, 35)):
        expected = stats.binomtest(min(b, c), b + c, 0.5).pvalue
        assert mcnemar_exact(b, c).p_value == pytest.approx(expected, rel=1e-9)
    data = [0.3, -0.1, 0.25, 0.4, 0.05, -0.2, 0.6, 0.35]
    expected = stats.wilcoxon(data, method="exact").pvalue
    assert wilcoxon_signed_rank(data).p_value == pytest.approx(expected, rel=1e-9)


def test_critical_counts_and_power() -> None:
    # 6 of 6 discordant one way is the least significant split (p = 2/64); with 9, 8 of 9
    # (p = 2 * 10/512 = 0.039); 5 discordant never reach 0.05 (2/32 = 0.0625)
    assert [mcnemar_critical(m, 0.05) for m in (5, 6, 9, 10)] == [None, 6, 8, 9]
    # no improvements: flagged when at least 6 cases regress (p = 2/64), so the power at n
    # cases with a regression rate of 0.5 is P(Binomial(n, 0.5) >= 6); n = 6: 1/64
    power = McNemarPower(worse=0.5, better=0.0)
    assert power.power(6) == pytest.approx(1 / 64, rel=1e-9)
    # n = 7: P(X >= 6) = (7 + 1) / 128
    assert power.power(7) == pytest.approx(8 / 128, rel=1e-9)


def _grid() -> list[tuple[int, int]]:
    """(n, k) pairs over small and large n, k from the far tail to just below the middle."""
    sizes = [*range(1, 40), 100, 501, 1999, 2000, 2001, 5000, 20_001]
    out = []
    for n in sizes:
        root = math.isqrt(n)
        for k in {0, 1, 2, n // 3, n // 2 - 3 * root, n // 2 - root, (n - 1) // 2}:
            if k >= 0 and 2 * k < n:
                out.append((n, k))
    return out


def test_the_floating_point_tail_equals_the_integer_sum() -> None:
    """Past MCNEMAR_EXACT_LIMIT the tail is summed in floating point from Loader's binomial
    probability; wherever the integer sum also runs, the two agree to 1e-9 relative (and to
    the last subnormal when the tail underflows)."""
    from accord.tasks.suites.compare.stats import exact_lower_tail, lower_tail

    for n, k in _grid():
        exact, fast = exact_lower_tail(n, k), lower_tail(n, k)
        if exact < 1e-300:
            assert fast < 1e-300, (n, k, exact, fast)
        else:
            assert fast == pytest.approx(exact, rel=1e-9, abs=0.0), (n, k)


def test_the_p_value_is_continuous_across_the_exact_limit() -> None:
    from accord.tasks.suites.compare.stats import MCNEMAR_EXACT_LIMIT, exact_lower_tail

    n = MCNEMAR_EXACT_LIMIT + 1  # the first size summed in floating point
    for k in (n // 2 - 40, n // 2 - 20, n // 2 - 5):
        assert mcnemar_exact(k, n - k).p_value == pytest.approx(
            min(1.0, 2 * exact_lower_tail(n, k)), rel=1e-9
        )


def test_a_hundred_thousand_flipped_cases_take_well_under_a_second() -> None:
    """The integer sum over every binomial coefficient took cubic time (20,000 flipped cases:
    36 s); the tail now costs about the square root of the cases."""
    import time

    started = time.perf_counter()
    for n in (10_000, 100_000, 1_000_000):
        for b in (0, n // 3, n // 2 - 50, n // 2):
            result = mcnemar_exact(b, n - b)
            assert 0.0 <= result.p_value <= 1.0 and result.n == n
    assert time.perf_counter() - started < 0.5
    # 100,000 flipped cases split 49,950 / 50,050: about 0.75 (the normal approximation
    # with continuity correction gives 0.7542 as well)
    assert mcnemar_exact(49_950, 50_050).p_value == pytest.approx(0.7542, abs=1e-3)
