"""`conditional`: the first branch whose `if` holds runs, else `else`, else nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Project

WORKFLOW = """
variables:
  threshold:
    type: integer
    default: 10
tasks:
  - name: total
    type: execute_sql
    sql_query: SELECT SUM(units) AS units FROM sales
  - name: check
    type: conditional
    conditions:
      - if: total.units[0] > threshold * 2
        tasks:
          - name: verdict
            type: formatter
            template: "high {{ total.units[0] }}"
      - if: "{{ total.units[0] > threshold }}"
        tasks:
          - name: verdict
            type: formatter
            template: "medium"
          - name: extra
            type: formatter
            template: "{{ verdict }}+"
    else:
      - name: verdict
        type: formatter
        template: "low"
  - name: after
    type: formatter
    template: "[{{ check.verdict }}]"
"""


@pytest.mark.parametrize(
    ("threshold", "expected"),
    [
        ("5", {"verdict": "high 24"}),
        ("20", {"verdict": "medium", "extra": "medium+"}),
        ("30", {"verdict": "low"}),
    ],
)
def test_first_true_branch_else_runs(
    project: Project, threshold: str, expected: dict[str, str]
) -> None:
    run = project.run(WORKFLOW, "-v", f"threshold={threshold}")
    assert run.outputs["check"] == expected
    assert run.outputs["after"] == f"[{expected['verdict']}]"


def test_branches_not_taken_do_not_run(project: Project) -> None:
    run = project.run(WORKFLOW, "-v", "threshold=30")
    keys = [key for key in run.finish_order() if key.startswith("check")]
    assert keys == ["check.else.verdict", "check"]


def test_no_branch_taken_and_no_else_gives_an_empty_map(project: Project) -> None:
    run = project.run(
        """
        tasks:
          - name: check
            type: conditional
            conditions:
              - if: 1 > 2
                tasks:
                  - name: never
                    type: execute_sql
                    sql_query: SELECT error('must not run')
          - name: after
            type: formatter
            template: "{{ check | length }} {{ 'never' in check }}"
        """
    )
    assert run.outputs["check"] == {}
    assert run.outputs["after"] == "0 False"


def test_condition_with_an_unknown_name_is_a_validation_error(project: Project) -> None:
    run = project.validate(
        """
        tasks:
          - name: check
            type: conditional
            conditions:
              - if: totl > 1
                tasks:
                  - name: t
                    type: formatter
                    template: "x"
        """
    )
    assert run.exit_code == 2
    assert "tasks[0].conditions[0].if: unknown name 'totl'" in run.stderr
