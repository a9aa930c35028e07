"""The paired tests on the values as stored, so that equal changes tie, and the order changed
cases are listed in."""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import pytest

from accord.tasks.suites.compare.comparison import compare_runs
from accord.tasks.suites.compare.records import RunRecord, Sample


def run(scores: dict[str, float | list[str]], source: str = "store") -> RunRecord:
    """A run of suite `s`: a case's score, or its statuses (one sample each)."""
    record = RunRecord(label=source, source=source)
    suite = record.suite("s")
    for case_id, value in scores.items():
        if isinstance(value, list):
            for status in value:
                suite.add(case_id, Sample(status, None))
        else:
            suite.add(case_id, Sample("passed" if value >= 0.5 else "failed", value))
    return record


def exact_two_sided(ranks: list[Fraction], w_plus: Fraction) -> Fraction:
    """The exact p-value by enumerating every sign pattern: the definition, for checking."""
    sums = [sum((r for r, s in zip(ranks, signs, strict=True) if s), Fraction(0))
            for signs in product((0, 1), repeat=len(ranks))]  # fmt: skip
    lower = Fraction(sum(w <= w_plus for w in sums), len(sums))
    upper = Fraction(sum(w >= w_plus for w in sums), len(sums))
    return min(Fraction(1), 2 * min(lower, upper))


def test_four_equal_changes_of_a_third_tie() -> None:
    # 1 -> 2/3, 2/3 -> 1/3, 1/3 -> 0, 0 -> 1/3: four changes of 1/3, which share the mean
    # rank 2.5; W+ = 2.5 (the one rise). P(W+ <= 2.5) = (1 + 4) / 16, so p = 10/16 = 0.625.
    # Taken as floats the drops differed in their last bit, got ranks 1.5, 1.5, 3, 4 and
    # p = 0.375.
    third, two = 1 / 3, 2 / 3
    before = run({"a": 1.0, "b": two, "c": third, "d": 0.0})
    after = run({"a": two, "b": third, "c": 0.0, "d": third})
    figure = compare_runs(before, after).suites[0].score
    assert figure is not None
    assert figure.test.n == 4
    assert figure.test.statistic == 2.5
    assert figure.test.p_value == 0.625
    assert exact_two_sided([Fraction(5, 2)] * 4, Fraction(5, 2)) == Fraction(10, 16)


def test_ties_and_zeros_by_hand() -> None:
    # differences: +0.5 twice, +0.25 three times (0.75 - 0.5, 0.5 - 0.25, 1 - 0.75), -1/7
    # three times (each a different float), and two zeros, which are dropped: n = 8.
    # Mid-ranks: the three 1/7 share 2, the three 0.25 share 5, the two 0.5 share 7.5.
    # W+ = 3 x 5 + 2 x 7.5 = 30 of 36; 11 of the 256 sign patterns reach W+ >= 30, so
    # p = 2 x 11/256 = 11/128 = 0.0859375 (the floats' own ranks gave 0.109375).
    before = run({"a": 0.1, "b": 0.4, "c": 0.5, "d": 0.25, "e": 0.75, "f": 1.0, "g": 6 / 7,
                  "h": 3 / 7, "i": 0.0, "j": 0.3})  # fmt: skip
    after = run({"a": 0.6, "b": 0.9, "c": 0.75, "d": 0.5, "e": 1.0, "f": 6 / 7, "g": 5 / 7,
                 "h": 2 / 7, "i": 0.0, "j": 0.3})  # fmt: skip
    figure = compare_runs(before, after).suites[0].score
    assert figure is not None
    assert (figure.test.n, figure.test.statistic) == (8, 30.0)
    assert figure.test.p_value == pytest.approx(11 / 128, rel=1e-12)
    ranks = [Fraction(2)] * 3 + [Fraction(5)] * 3 + [Fraction(15, 2)] * 2
    assert exact_two_sided(ranks, Fraction(30)) == Fraction(11, 128)


def test_a_results_file_is_compared_at_its_four_decimals() -> None:
    # a file keeps 0.6667 and 0.3333: its drops are 0.3333, 0.3334 and 0.3333, exactly,
    # with no float noise (0.6667 - 1 is -0.33330000000000004 as a float). Ranks: the three
    # 0.3333 share 2, 0.3334 is 4; W+ = 2 (d's rise). Doubled ranks 4, 4, 4, 8: 4 of the 16
    # sign patterns have W+ <= 2, so p = 2 x 4/16 = 0.5.
    before = run({"a": 1.0, "b": 0.6667, "c": 0.3333, "d": 0.0}, source="file")
    after = run({"a": 2 / 3, "b": 1 / 3, "c": 0.0, "d": 1 / 3})
    figure = compare_runs(before, after).suites[0].score
    assert figure is not None
    assert (figure.test.statistic, figure.test.p_value) == (2.0, 0.5)
    # and a stored run against its own results file: no change at all
    same = compare_runs(run({"a": 2 / 3, "b": 0.1}), run({"a": 0.6667, "b": 0.1}, "file"))
    assert same.suites[0].changes == []
    assert same.suites[0].score is not None and same.suites[0].score.test.n == 0


def test_changed_cases_are_listed_regressions_first_then_errors_improvements_scores() -> None:
    before = run({
        "c10": ["passed"], "c2": ["passed"], "c17": 0.9, "c3": ["failed"], "c18": ["passed"],
        "c21": ["failed"], "c19": 0.2, "c1": ["passed"], "c4": ["error"],
    })  # fmt: skip
    after = run({
        "c10": ["failed"], "c2": ["failed"], "c17": 0.7, "c3": ["passed"], "c18": ["error"],
        "c21": ["error"], "c19": 0.3, "c1": ["passed"], "c4": ["passed"],
    })  # fmt: skip
    changes = compare_runs(before, after).suites[0].changes
    assert [c.id for c in changes] == ["c2", "c10", "c18", "c21", "c3", "c4", "c17", "c19"]
