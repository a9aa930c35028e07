"""Doubles print without the binary noise of arithmetic, on screen and in exported CSVs:
the shortest text of the value at 15 significant digits; DECIMAL columns stay exact."""

from __future__ import annotations

import csv
from pathlib import Path

from click.testing import CliRunner

from accord.cli import main

SQL = (
    "SELECT 1000.01::DOUBLE + 700.1::DOUBLE AS total, 0.1::DOUBLE + 0.2::DOUBLE AS small, "
    "0.1::DECIMAL(18,3) + 0.2::DECIMAL(18,3) AS exact, 123456789.123456789::DOUBLE AS long, "
    "2.5::DOUBLE AS plain, 1e300::DOUBLE * 10 AS huge"
)


def test_doubles_on_screen_and_in_csv_exports_have_no_binary_noise(tmp_path: Path) -> None:
    (tmp_path / "db").mkdir()
    (tmp_path / "config.yml").write_text(
        "databases:\n  - {name: local, type: duckdb, dataset: db}\n"
    )
    path = tmp_path / "f.workflow.yml"
    path.write_text(
        "tasks:\n  - name: q\n    type: execute_sql\n    database: local\n"
        f'    sql_query: "{SQL}"\n    export: {{format: csv, path: out/q.csv}}\n'
    )
    assert 1000.01 + 700.1 == 1700.1100000000001  # the noise this is about
    result = CliRunner().invoke(main, ["run", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    screen = result.output
    assert "1700.11 " in screen and "1700.110" not in screen
    assert "0.3 " in screen and "0.30000000000000004" not in screen
    assert "0.300 " in screen  # DECIMAL(18,3) as the database gives it
    assert "123456789.123457 " in screen and "1e+301" in screen and "2.5 " in screen
    with (tmp_path / "out" / "q.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows == [
        ["total", "small", "exact", "long", "plain", "huge"],
        ["1700.11", "0.3", "0.300", "123456789.123457", "2.5", "1e+301"],
    ]
