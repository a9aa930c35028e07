"""`visualize`: real SVG and PNG chart files under the run's output folder."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Project

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

TOTALS = """
  - name: totals
    type: execute_sql
    sql_query: |
      SELECT region, SUM(units) AS units, SUM(units * price) AS revenue
      FROM sales GROUP BY region ORDER BY region
"""


def test_svg_bar_chart_is_valid_xml_with_the_title(project: Project) -> None:
    run = project.run(
        "tasks:"
        + TOTALS
        + """
  - name: chart
    type: visualize
    data: totals
    chart: bar
    x: region
    y: [units, revenue]
    title: "Units by region ({{ totals | length }} regions)"
"""
    )
    relative = run.outputs["chart"]
    assert relative.startswith(".accord/runs/")
    assert relative.endswith("/charts/chart.svg")
    path = project.root / relative
    root = ET.parse(path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "Units by region (4 regions)" in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("chart", ["bar", "line", "scatter", "pie"])
def test_png_charts_are_real_png_files(project: Project, chart: str) -> None:
    run = project.run(
        "tasks:"
        + TOTALS
        + f"""
  - name: chart
    type: visualize
    data: "{{{{ totals }}}}"
    chart: {chart}
    x: region
    y: units
    format: png
"""
    )
    path = project.root / run.outputs["chart"]
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert len(data) > 1000


def test_charts_in_a_loop_get_one_file_per_iteration(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: loop
            type: loop_sequential
            values: [North, East]
            concurrency: 2
            tasks:
              - name: per_product
                type: execute_sql
                sql_query: |
                  SELECT product, units FROM sales WHERE region = {{ value | sqlquote }}
              - name: chart
                type: visualize
                data: per_product
                x: product
                y: units
                title: "{{ value }}"
        """
    )
    paths = [item["chart"] for item in run.outputs["loop"]]
    assert len(set(paths)) == 2
    for relative, region in zip(paths, ["North", "East"], strict=True):
        text = (project.root / relative).read_text(encoding="utf-8")
        ET.fromstring(text)
        assert region in text


def test_unknown_column_fails_naming_the_columns(project: Project) -> None:
    run = project.run(
        "tasks:"
        + TOTALS
        + """
  - name: chart
    type: visualize
    data: totals
    x: region
    y: profit
"""
    )
    assert run.exit_code == 1
    assert "no column 'profit' in the data (columns: region, units, revenue)" in run.stderr


def test_data_must_name_a_task(project: Project) -> None:
    run = project.validate(
        """
        tasks:
          - name: chart
            type: visualize
            data: totls
            x: a
            y: b
        """
    )
    assert run.exit_code == 2
    assert "tasks[0].data: unknown name 'totls'" in run.stderr


def test_pie_of_negative_values_is_a_clear_error(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: change
            type: execute_sql
            sql_query: SELECT * FROM (VALUES ('up', 3), ('down', -2)) AS t(move, amount)
          - name: chart
            type: visualize
            data: change
            chart: pie
            x: move
            y: amount
        """
    )
    assert run.exit_code == 1
    assert "a pie chart needs values of 0 or more; column 'amount' has -2" in run.stderr
    assert "internal error" not in run.stderr
