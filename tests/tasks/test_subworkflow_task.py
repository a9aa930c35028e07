"""`workflow`: a child workflow with typed variables; its task outputs become a map."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Project

CHILD = """
variables:
  region:
    type: string
    enum: [North, South, East, West]
    default: North
  min_units:
    type: integer
    minimum: 1
    default: 1
  products:
    type: array
    items:
      type: string
    default: [apple]
tasks:
  - name: units
    type: execute_sql
    sql_query: |
      SELECT COALESCE(SUM(units), 0) AS units FROM sales
      WHERE region = {{ region | sqlquote }} AND units >= {{ min_units }}
        AND product IN ({{ products | map("sqlquote") | join(", ") }})
  - name: summary
    type: formatter
    template: "{{ region }}/{{ min_units + 0 }}/{{ products | join('+') }}={{ units.units[0] }}"
"""


@pytest.fixture
def child(project: Project) -> Project:
    project.write("flows/child.workflow.yml", CHILD)
    return project


def test_typed_variables_are_converted_and_passed(child: Project) -> None:
    run = child.run(
        """
        tasks:
          - name: products
            type: execute_sql
            sql_query: SELECT DISTINCT product FROM sales ORDER BY product
          - name: east
            type: workflow
            src: flows/child.workflow.yml
            variables:
              region: East
              min_units: "2"
              products: "{{ products.product }}"
          - name: report
            type: formatter
            template: "{{ east.summary }} ({{ east.units.units[0] }})"
        """
    )
    assert run.outputs["east"]["summary"] == "East/2/apple+kiwi+pear=10"
    assert run.outputs["east"]["units"] == [{"units": 10}]
    assert run.outputs["report"] == "East/2/apple+kiwi+pear=10 (10)"


def test_defaults_apply_to_variables_not_given(child: Project) -> None:
    run = child.run(
        """
        tasks:
          - name: sub
            type: workflow
            src: flows/child.workflow.yml
        """
    )
    assert run.outputs["sub"]["summary"] == "North/1/apple=3"


def test_child_in_a_loop(child: Project) -> None:
    run = child.run(
        """
        tasks:
          - name: regions
            type: loop_sequential
            values: [South, West]
            concurrency: 2
            tasks:
              - name: sub
                type: workflow
                src: flows/child.workflow.yml
                variables:
                  region: "{{ value }}"
                  products: [apple, pear]
        """
    )
    assert [item["sub"]["summary"] for item in run.outputs["regions"]] == [
        "South/1/apple+pear=5",
        "West/1/apple+pear=2",
    ]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("region: Central", "variable 'region': 'Central' is not one of"),
        ('min_units: "0"', "variable 'min_units': 0 is less than the minimum of 1"),
        ("min_units: lots", "variable 'min_units': 'lots' is not of type integer"),
        ("products: [1, 2]", "variable 'products': 1 is not of type 'string'"),
    ],
)
def test_invalid_values_are_errors_naming_the_variable(
    child: Project, given: str, message: str
) -> None:
    run = child.run(
        f"""
        tasks:
          - name: sub
            type: workflow
            src: flows/child.workflow.yml
            variables:
              {given}
        """
    )
    assert run.exit_code == 1
    assert "task 'sub'" in run.stderr
    assert "flows/child.workflow.yml" in run.stderr
    assert message in run.stderr


def test_missing_required_child_variable_is_a_clear_error(project: Project) -> None:
    project.write(
        "flows/needs.workflow.yml",
        """
        variables:
          customer:
            type: string
            description: No default, so a caller must give it.
        tasks:
          - name: hello
            type: formatter
            template: "hello {{ customer }}"
        """,
    )
    run = project.run(
        """
        tasks:
          - name: sub
            type: workflow
            src: flows/needs.workflow.yml
        """
    )
    assert run.exit_code == 2  # caught when the file is compiled, before anything runs
    assert "requires variable 'customer' (it has no default)" in run.stderr
    assert "flows/needs.workflow.yml" in run.stderr and "main.workflow.yml:2:5" in run.stderr
    given = project.run(
        """
        tasks:
          - name: sub
            type: workflow
            src: flows/needs.workflow.yml
            variables:
              customer: Ada
        """
    )
    assert given.outputs["sub"] == {"hello": "hello Ada"}


def test_unknown_child_variable_is_an_error(child: Project) -> None:
    run = child.run(
        """
        tasks:
          - name: sub
            type: workflow
            src: flows/child.workflow.yml
            variables:
              regoin: East
        """
    )
    assert run.exit_code != 0
    assert "declares no variable 'regoin'; did you mean 'region'?" in run.stderr


def test_child_does_not_see_the_parent_scope(child: Project) -> None:
    child.write(
        "flows/peek.workflow.yml",
        """
        tasks:
          - name: peek
            type: formatter
            template: "{{ secret }}"
        """,
    )
    run = child.validate(
        """
        tasks:
          - name: secret
            type: formatter
            template: "s"
          - name: sub
            type: workflow
            src: flows/peek.workflow.yml
        """
    )
    assert run.exit_code == 2
    assert "unknown name 'secret'" in run.stderr


def test_missing_child_file_is_a_validation_error(project: Project) -> None:
    run = project.validate(
        """
        tasks:
          - name: sub
            type: workflow
            src: flows/nowhere.workflow.yml
        """
    )
    assert run.exit_code == 2
    assert "tasks[0].src: file 'flows/nowhere.workflow.yml' not found" in run.stderr
