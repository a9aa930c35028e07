"""`formatter`: templates over task outputs, variables and the built-in filters."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import Project


def test_tables_render_as_markdown_and_expose_columns_and_rows(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: totals
            type: execute_sql
            sql_query: |
              SELECT region, SUM(units) AS units FROM sales GROUP BY region ORDER BY units DESC
          - name: text
            type: formatter
            template: |
              {{ totals }}
              top={{ totals.region[0] }} rows={{ totals | length }} sum={{ totals.units | sum }}
              {% for row in totals %}{{ row.region }}:{{ row.units }} {% endfor %}
        """
    )
    assert run.outputs["text"] == (
        "| region | units |\n"
        "|---|---|\n"
        "| East | 11 |\n"
        "| South | 7 |\n"
        "| North | 4 |\n"
        "| West | 2 |\n"
        "top=East rows=4 sum=24\n"
        "East:11 South:7 North:4 West:2 \n"
    )


def test_variables_filters_and_builtins(project: Project) -> None:
    run = project.run(
        """
        variables:
          customer: "O'Brien"
          limits:
            type: array
            default: [1, 2]
        tasks:
          - name: text
            type: formatter
            template: "{{ customer | sqlquote }}|{{ limits | tojson }}|{{ current_date }}"
        """
    )
    quoted, limits, date = run.outputs["text"].split("|")
    assert quoted == "'O''Brien'"
    assert json.loads(limits) == [1, 2]
    assert len(date) == 10 and date[4] == "-"


def test_command_line_variable_is_converted_to_its_type(project: Project) -> None:
    workflow = """
        variables:
          n:
            type: integer
            default: 1
        tasks:
          - name: text
            type: formatter
            template: "{{ n + 1 }}"
        """
    assert project.run(workflow).outputs["text"] == "2"
    assert project.run(workflow, "-v", "n=41").outputs["text"] == "42"
    bad = project.run(workflow, "-v", "n=many")
    assert bad.exit_code == 2
    assert "variable 'n': 'many' is not of type integer" in bad.stderr


def test_formatter_sees_text_output_of_another_formatter(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: second
            type: formatter
            template: "[{{ first }}]"
          - name: first
            type: formatter
            template: "hello"
        """
    )
    assert run.outputs["second"] == "[hello]"


def test_unknown_name_is_a_validation_error_with_its_position(project: Project) -> None:
    run = project.validate(
        """
        tasks:
          - name: totals
            type: execute_sql
            sql_query: SELECT 1 AS one
          - name: text
            type: formatter
            template: "{{ total.one }}"
        """
    )
    assert run.exit_code == 2
    assert "main.workflow.yml:7:15 tasks[1].template: unknown name 'total'" in run.stderr
    assert "did you mean 'totals'?" in run.stderr


def test_missing_column_fails_at_run_time_naming_the_columns(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: totals
            type: execute_sql
            sql_query: SELECT 1 AS one
          - name: text
            type: formatter
            template: "{{ totals.two }}"
        """
    )
    assert run.exit_code == 1
    assert "task 'text'" in run.stderr
    assert "two" in run.stderr
