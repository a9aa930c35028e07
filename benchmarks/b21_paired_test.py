"""B21: what the paired test of `accord runs compare` (and `accord view`'s /compare) costs.

(a) The exact McNemar test alone (compare/stats.mcnemar_exact) at 10,000, 100,000 and
    1,000,000 discordant cases, every case flipped, half each way plus a small drift: the
    smaller side is near n / 2, the costliest split (the integer sum over every binomial
    coefficient it replaced was cubic: 20,000 flipped cases took 36 s). Target: <= 10 ms at
    1,000,000 (median).
(b) The whole comparison (compare_runs over two records, then the JSON report, which lists
    every flip) at 10,000 and 100,000 cases, every case flipped by turns: linear in the cases.
    Targets: <= 5 s at 100,000 (median; most of it json.dumps' indented encoder over 100,000
    flips), and 100,000 cases cost at most 15 times 10,000.

    .venv/bin/python benchmarks/b21_paired_test.py
"""

from __future__ import annotations

import gc
import statistics
import sys
import time

from _synthetic import machine_note, summary, verdict

from accord.tasks.suites.compare.comparison import compare_runs
from accord.tasks.suites.compare.records import RunRecord, Sample
from accord.tasks.suites.compare.render import render
from accord.tasks.suites.compare.stats import mcnemar_exact

SIZES = (10_000, 100_000, 1_000_000)
WHOLE = (10_000, 100_000)
RUNS = 5
TARGET_TEST_MS = 10.0
TARGET_WHOLE_S = 5.0
TARGET_GROWTH = 15.0  # 10 times the cases: linear is 10


def timed_test(n: int) -> tuple[float, float]:
    """Seconds of one test at n discordant cases split n/2 - sqrt(n) / n/2 + sqrt(n), and its
    p-value."""
    drift = int(n**0.5)
    b, c = n // 2 - drift, n - (n // 2 - drift)
    gc.collect()
    start = time.perf_counter()
    result = mcnemar_exact(b, c)
    return time.perf_counter() - start, result.p_value


def record(n: int, first: str) -> RunRecord:
    other = {"passed": "failed", "failed": "passed"}
    made = RunRecord(label=first)
    suite = made.suite("s")
    for i in range(n):
        status = first if i % 2 == 0 else other[first]
        suite.add(f"c{i}", Sample(status, float(status == "passed")))
    return made


def timed_whole(n: int) -> float:
    before, after = record(n, "passed"), record(n, "failed")
    gc.collect()
    start = time.perf_counter()
    comparison = compare_runs(before, after)
    render(comparison, "json", 0.05)
    return time.perf_counter() - start


def main() -> int:
    print(f"B21 paired test: exact McNemar at {', '.join(f'{n:,}' for n in SIZES)} "
          f"discordant cases; the whole comparison at {', '.join(f'{n:,}' for n in WHOLE)} "
          f"cases; {RUNS} runs each")  # fmt: skip
    print(f"machine: {machine_note()}")
    tests: dict[int, list[float]] = {}
    for n in SIZES:
        samples = [timed_test(n) for _ in range(RUNS)]
        tests[n] = [s for s, _p in samples]
        print(f"(a) {n:>9,} flipped: {summary(tests[n], 1e3, ' ms')}, p = {samples[0][1]:.6g}")
    wholes: dict[int, list[float]] = {}
    for n in WHOLE:
        wholes[n] = [timed_whole(n) for _ in range(RUNS)]
        print(f"(b) {n:>9,} cases:   {summary(wholes[n], 1e3, ' ms')}")
    test_ms = statistics.median(tests[SIZES[-1]]) * 1e3
    whole_s = statistics.median(wholes[WHOLE[-1]])
    growth = whole_s / statistics.median(wholes[WHOLE[0]])
    print(f"target (a): McNemar at {SIZES[-1]:,} flipped cases <= {TARGET_TEST_MS:.0f} ms")
    print(f"target (b): the comparison of {WHOLE[-1]:,} cases <= {TARGET_WHOLE_S:.0f} s, and "
          f"<= {TARGET_GROWTH:.0f} times that of {WHOLE[0]:,}")  # fmt: skip
    print(f"(a) {test_ms:.2f} ms: {verdict(test_ms, TARGET_TEST_MS)}")
    print(f"(b) {whole_s:.2f} s: {verdict(whole_s, TARGET_WHOLE_S)}; {growth:.1f} times: "
          f"{verdict(growth, TARGET_GROWTH)}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
