"""`export:` on any task: csv, json, sql, txt, md and a real Word document."""

from __future__ import annotations

import csv
import json
from typing import TYPE_CHECKING

import docx

if TYPE_CHECKING:
    from conftest import Project

QUERY = """
  - name: totals
    type: execute_sql
    sql_query: |
      SELECT region, SUM(units) AS units, ROUND(SUM(units * price), 2) AS revenue
      FROM sales GROUP BY region ORDER BY region
"""


def test_table_exports_csv_json_and_sql(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: totals
            type: execute_sql
            sql_query: |
              SELECT region, SUM(units) AS units, ROUND(SUM(units * price), 2) AS revenue
              FROM sales GROUP BY region ORDER BY region
            export:
              path: out/totals.csv
              format: csv
          - name: as_json
            type: execute_sql
            sql_query: SELECT region, manager FROM regions ORDER BY region
            export:
              path: out/regions.json
              format: json
          - name: as_sql
            type: execute_sql
            sql_query: SELECT COUNT(*) AS n FROM sales WHERE region = 'East'
            export:
              path: out/count.sql
              format: sql
        """
    )
    assert run.exit_code == 0, run.stderr
    with (project.root / "out/totals.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows == [
        ["region", "units", "revenue"],
        ["East", "11", "27.5"],
        ["North", "4", "6.5"],
        ["South", "7", "13.5"],
        ["West", "2", "4.0"],
    ]
    assert json.loads((project.root / "out/regions.json").read_text(encoding="utf-8")) == [
        {"region": "East", "manager": "Chloe"},
        {"region": "North", "manager": "Ada"},
        {"region": "South", "manager": "Ben"},
        {"region": "West", "manager": "Dev"},
    ]
    assert (project.root / "out/count.sql").read_text(encoding="utf-8") == (
        "SELECT COUNT(*) AS n FROM sales WHERE region = 'East'\n"
    )


def test_text_exports_txt_md_and_json(project: Project) -> None:
    run = project.run(
        "tasks:"
        + QUERY
        + """
  - name: note
    type: formatter
    template: "{{ totals | length }} regions"
    export:
      path: out/note.txt
      format: txt
  - name: page
    type: formatter
    template: |
      # Totals
      {{ totals }}
    export:
      path: "out/{{ totals.region[0] | lower }}.md"
      format: md
  - name: note_json
    type: formatter
    template: "quoted \\"text\\""
    export:
      path: out/note.json
      format: json
"""
    )
    assert run.exit_code == 0, run.stderr
    assert (project.root / "out/note.txt").read_text(encoding="utf-8") == "4 regions\n"
    page = (project.root / "out/east.md").read_text(encoding="utf-8")
    assert page.startswith("# Totals\n| region | units | revenue |\n|---|---|---|\n")
    assert "| East | 11 | 27.5 |" in page
    assert json.loads((project.root / "out/note.json").read_text(encoding="utf-8")) == (
        'quoted "text"'
    )


def test_docx_is_a_real_word_document(project: Project) -> None:
    run = project.run(
        "tasks:"
        + QUERY
        + """
  - name: report
    type: formatter
    template: |
      # Sales report
      Regions with **strong** sales:
      {% for row in totals if row.units > 5 -%}
      - {{ row.region }}
      {% endfor %}
      {{ totals }}
    export:
      path: out/report.docx
      format: docx
  - name: table_doc
    type: execute_sql
    sql_query: SELECT region, manager FROM regions ORDER BY region LIMIT 2
    export:
      path: out/table.docx
      format: docx
"""
    )
    assert run.exit_code == 0, run.stderr
    document = docx.Document(str(project.root / "out/report.docx"))
    paragraphs = [(p.style.name, p.text) for p in document.paragraphs]
    assert ("Heading 1", "Sales report") in paragraphs
    assert ("List Bullet", "East") in paragraphs
    assert ("List Bullet", "South") in paragraphs
    bold = [r.text for p in document.paragraphs for r in p.runs if r.bold]
    assert bold == ["strong"]
    [table] = document.tables
    cells = [[cell.text for cell in row.cells] for row in table.rows]
    assert cells[0] == ["region", "units", "revenue"]
    assert cells[1] == ["East", "11", "27.5"]
    assert len(cells) == 5

    [table] = docx.Document(str(project.root / "out/table.docx")).tables
    assert [[c.text for c in row.cells] for row in table.rows] == [
        ["region", "manager"],
        ["East", "Chloe"],
        ["North", "Ada"],
    ]


def test_exports_inside_a_loop_render_their_path_per_value(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: loop
            type: loop_sequential
            values: [North, West]
            tasks:
              - name: rows
                type: execute_sql
                sql_query: SELECT product FROM sales WHERE region = {{ value | sqlquote }}
                export:
                  path: "out/{{ loop.value }}.csv"
                  format: csv
        """
    )
    assert run.exit_code == 0, run.stderr
    assert (project.root / "out/North.csv").read_text(encoding="utf-8").split() == [
        "product",
        "apple",
        "pear",
    ]
    assert (project.root / "out/West.csv").read_text(encoding="utf-8").split() == [
        "product",
        "pear",
    ]


def test_csv_export_of_text_fails_the_task(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: note
            type: formatter
            template: "just text"
            export:
              path: out/note.csv
              format: csv
          - name: later
            type: formatter
            template: "{{ note }}"
        """
    )
    assert run.exit_code == 1
    assert "task 'note'" in run.stderr
    assert "export format 'csv' needs a table" in run.stderr
    assert run.status("note") == "failed"
    assert "later" not in run.doc["outputs"]
    assert not (project.root / "out/note.csv").exists()


def test_unwritable_export_path_fails_the_task(project: Project) -> None:
    project.write("out", "a file where a folder is expected\n")
    run = project.run(
        "tasks:"
        + QUERY
        + """
    export:
      path: out/totals.csv
      format: csv
"""
    )
    assert run.exit_code == 1
    assert "task 'totals'" in run.stderr
    assert "export to" in run.stderr
    assert "out/totals.csv" in run.stderr


def test_csv_export_of_a_loop_says_what_it_got(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: loop
            type: loop_sequential
            values: [1, 2]
            tasks:
              - name: t
                type: formatter
                template: "{{ value }}"
            export:
              path: out/loop.csv
              format: csv
        """
    )
    assert run.exit_code == 1
    assert "export format 'csv' needs a table; this task produced a list" in run.stderr
    assert "(export it as json)" in run.stderr


def test_docx_table_keeps_a_pipe_inside_a_cell(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: choices
            type: execute_sql
            sql_query: SELECT 'yes|no' AS answer, 2 AS n
          - name: page
            type: formatter
            template: |
              # Choices
              {{ choices }}
            export:
              path: out/choices.docx
              format: docx
        """
    )
    assert run.exit_code == 0, run.stderr
    [table] = docx.Document(str(project.root / "out/choices.docx")).tables
    assert [[c.text for c in row.cells] for row in table.rows] == [
        ["answer", "n"],
        ["yes|no", "2"],
    ]
