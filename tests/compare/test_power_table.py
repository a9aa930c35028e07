"""docs/regressions.md's table of cases needed: every cell recomputed from the exact McNemar
test's power (the document and the code cannot drift apart)."""

from __future__ import annotations

import re
from pathlib import Path

from accord.tasks.suites.compare.stats import McNemarPower

DOC = Path(__file__).resolve().parents[2] / "docs" / "regressions.md"


def test_every_cell_of_the_documented_table() -> None:
    rows = re.findall(r"^\| (\d+) points \| (\d+) \| (\d+) \| (\d+) \|$", DOC.read_text(), re.M)
    assert len(rows) == 4
    for drop, *cells in rows:
        for churn, cell in zip((0.0, 0.05, 0.10), cells, strict=True):
            worse = int(drop) / 100 + churn
            assert McNemarPower(worse, churn).cases_needed() == int(cell), (drop, churn)


def test_power_reaches_the_target_at_the_documented_size_and_not_before() -> None:
    power = McNemarPower(0.10, 0.0)  # 10 points, no churn: 78 cases
    assert power.power(78) >= 0.8 > max(power.power(n) for n in range(1, 78))
