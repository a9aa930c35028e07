"""`loop_sequential`: values from a list or an expression, order, nesting, `value` names."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import Project


def test_list_values_keep_their_types(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: numbers
            type: loop_sequential
            values: [1, 2, 3]
            tasks:
              - name: doubled
                type: formatter
                template: "{{ value * 2 }}"
        """
    )
    assert run.outputs["numbers"] == [
        {"doubled": "2", "value": 1},
        {"doubled": "4", "value": 2},
        {"doubled": "6", "value": 3},
    ]


def test_values_from_an_expression_over_a_query_column(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: regions
            type: execute_sql
            sql_query: SELECT DISTINCT region FROM sales ORDER BY region DESC
          - name: per_region
            type: loop_sequential
            values: "{{ regions.region }}"
            tasks:
              - name: units
                type: execute_sql
                sql_query: |
                  SELECT SUM(units) AS units FROM sales WHERE region = {{ value | sqlquote }}
        """
    )
    loop = run.outputs["per_region"]
    assert [item["value"] for item in loop] == ["West", "South", "North", "East"]
    assert [item["units"][0]["units"] for item in loop] == [2, 7, 4, 11]


def test_values_from_a_computed_expression(project: Project) -> None:
    run = project.run(
        """
        variables:
          n:
            type: integer
            default: 3
        tasks:
          - name: squares
            type: loop_sequential
            values: "{{ range(1, n + 1) | list }}"
            tasks:
              - name: square
                type: formatter
                template: "{{ value ** 2 }}"
        """,
        "-v",
        "n=4",
    )
    assert [item["square"] for item in run.outputs["squares"]] == ["1", "4", "9", "16"]


def test_output_order_is_the_order_of_values_whatever_finishes_first(project: Project) -> None:
    # The first iteration scans far more rows than the others, so with concurrency 3 it
    # finishes last; the loop's output still follows `values`.
    run = project.run(
        """
        tasks:
          - name: work
            type: loop_sequential
            values: [60000000, 10, 1]
            concurrency: 3
            tasks:
              - name: total
                type: execute_sql
                sql_query: SELECT SUM(i) AS total FROM range({{ value }}) AS t(i)
        """
    )
    loop = run.outputs["work"]
    assert [item["value"] for item in loop] == [60000000, 10, 1]
    assert [item["total"][0]["total"] for item in loop] == [
        60000000 * 59999999 // 2,
        45,
        0,
    ]
    finished = [key for key in run.finish_order() if key.startswith("work[")]
    assert finished.index("work[0].total") > finished.index("work[2].total")


def test_nested_loops_see_value_and_each_loop_by_name(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: outer
            type: loop_sequential
            values: [a, b]
            concurrency: 2
            tasks:
              - name: inner
                type: loop_sequential
                values: [1, 2]
                tasks:
                  - name: cell
                    type: formatter
                    template: "{{ outer.value }}{{ inner.value }}={{ value }}"
              - name: row
                type: formatter
                template: "{{ value }}:{% for c in inner %}{{ c.cell }};{% endfor %}"
          - name: table
            type: formatter
            template: "{% for r in outer %}{{ r.row }}|{% endfor %}"
        """
    )
    assert run.outputs["table"] == "a:a1=1;a2=2;|b:b1=1;b2=2;|"
    assert run.outputs["outer"][1]["inner"][0] == {"cell": "b1=1", "value": 1}


def test_iteration_sees_sibling_outputs_and_outer_tasks(project: Project) -> None:
    run = project.run(
        """
        variables:
          suffix: "!"
        tasks:
          - name: base
            type: formatter
            template: "base"
          - name: loop
            type: loop_sequential
            values: [x, y]
            tasks:
              - name: first
                type: formatter
                template: "{{ base }}-{{ loop.value }}"
              - name: second
                type: formatter
                template: "{{ first }}{{ suffix }}"
        """
    )
    assert [item["second"] for item in run.outputs["loop"]] == ["base-x!", "base-y!"]


def test_failed_iteration_fails_the_loop_naming_it(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: loop
            type: loop_sequential
            values: [1, 0, 2]
            tasks:
              - name: ratio
                type: execute_sql
                sql_query: SELECT 10 // {{ value }} AS r
        """
    )
    assert run.exit_code == 1
    assert "task 'loop[1].ratio'" in run.stderr
    assert "Division by zero" in run.stderr
    assert run.status("loop[1].ratio") == "failed"
    assert run.status("loop") in ("failed", "cancelled")


def test_expression_that_is_not_a_list_is_an_error(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: loop
            type: loop_sequential
            values: "{{ 42 }}"
            tasks:
              - name: t
                type: formatter
                template: "{{ value }}"
        """
    )
    assert run.exit_code == 1
    assert "values must yield a list, got int" in run.stderr


def test_values_from_a_whole_table_are_row_mappings(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: regions
            type: execute_sql
            sql_query: SELECT region, manager FROM regions ORDER BY region LIMIT 2
          - name: loop
            type: loop_sequential
            values: "{{ regions }}"
            tasks:
              - name: line
                type: formatter
                template: "{{ value.manager }} runs {{ loop.value.region }}"
        """
    )
    assert [item["line"] for item in run.outputs["loop"]] == ["Chloe runs East", "Ada runs North"]


def test_values_from_json_text_and_an_empty_list(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: generated
            type: formatter
            template: '["b", "a"]'
          - name: from_text
            type: loop_sequential
            values: "{{ generated }}"
            tasks:
              - name: upper
                type: formatter
                template: "{{ value | upper }}"
          - name: empty
            type: loop_sequential
            values: []
            tasks:
              - name: never
                type: formatter
                template: "{{ value }}"
          - name: after
            type: formatter
            template: "{{ empty | length }}"
        """
    )
    assert [item["upper"] for item in run.outputs["from_text"]] == ["B", "A"]
    assert run.outputs["empty"] == []
    assert run.outputs["after"] == "0"
