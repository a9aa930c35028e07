"""Compiling workflows: edges from templates, ordering, reference and cycle errors, priorities."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from accord.engine.compile import compile_file
from accord.engine.errors import CycleError, ValidationError
from accord.engine.plan import Plan
from accord.engine.runner import compile_workflow

WriteFile = Callable[[str, str], Path]


def plan_of(write: WriteFile, text: str, name: str = "w.workflow.yml") -> Plan:
    path = write(name, text)
    _project, plan = compile_workflow(path)
    return plan


def deps(plan: Plan) -> dict[str, tuple[str, ...]]:
    return {t.name: t.deps for t in plan.tasks}


def test_edges_come_from_template_references(write: WriteFile) -> None:
    plan = plan_of(
        write,
        """
        tasks:
          - name: report
            type: formatter
            template: "{{ first }} and {% for r in second %}{{ r }}{% endfor %}"
          - name: first
            type: formatter
            template: one
          - name: second
            type: formatter
            template: "{{ first | upper }}"
          - name: unrelated
            type: formatter
            template: "{% set first = 'shadow' %}{{ first }}"
        """,
    )
    assert deps(plan) == {
        "report": ("first", "second"),
        "first": (),
        "second": ("first",),
        "unrelated": (),
    }


def test_attribute_and_item_access_make_edges(write: WriteFile) -> None:
    plan = plan_of(
        write,
        """
        tasks:
          - name: a
            type: formatter
            template: x
          - name: b
            type: formatter
            template: "{{ a.upper() }} {{ a[0] }}"
        """,
    )
    assert plan.by_name["b"].deps == ("a",)


def test_depends_on_adds_edges(write: WriteFile) -> None:
    plan = plan_of(
        write,
        """
        tasks:
          - name: a
            type: formatter
            template: x
          - name: b
            type: formatter
            template: y
            depends_on: [a]
        """,
    )
    assert deps(plan) == {"a": (), "b": ("a",)}


def test_depends_on_unknown_task_is_an_error_with_hint(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: alpha
            type: formatter
            template: x
          - name: b
            type: formatter
            template: y
            depends_on: [alpah]
        """,
    )
    with pytest.raises(ValidationError) as info:
        compile_workflow(path)
    (issue,) = info.value.issues
    assert issue.line == 8
    assert "unknown task 'alpah'" in issue.message and "did you mean 'alpha'" in issue.message


def test_sequential_execution_chains_tasks_in_yaml_order(write: WriteFile) -> None:
    plan = plan_of(
        write,
        """
        execution: sequential
        tasks:
          - {name: c, type: formatter, template: x}
          - {name: a, type: formatter, template: x}
          - {name: b, type: formatter, template: x}
        """,
    )
    assert deps(plan) == {"c": (), "a": ("c",), "b": ("a",)}
    assert [t.priority for t in plan.tasks] == [3, 2, 1]


def test_unknown_reference_is_rejected_with_line(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: sales
            type: formatter
            template: x
          - name: summary
            type: formatter
            template: "Total: {{ sales_total }}"
        """,
    )
    with pytest.raises(ValidationError) as info:
        compile_workflow(path)
    (issue,) = info.value.issues
    assert (issue.file, issue.line) == (path, 7)
    assert issue.path == "tasks[1].template"
    assert "unknown name 'sales_total'" in issue.message
    assert "did you mean 'sales'" in issue.message


def test_template_syntax_error_is_reported(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: a
            type: formatter
            template: "{{ x "
        """,
    )
    with pytest.raises(ValidationError) as info:
        compile_workflow(path)
    (issue,) = info.value.issues
    assert issue.line == 4
    assert "template syntax error" in issue.message


def test_cycle_error_prints_the_cycle_with_lines(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: a
            type: formatter
            template: "{{ b }}"
          - name: b
            type: formatter
            template: "{{ a }}"
          - name: c
            type: formatter
            template: "{{ a }}"
        """,
    )
    with pytest.raises(CycleError) as info:
        compile_workflow(path)
    text = str(info.value)
    assert "a -> b -> a" in text or "b -> a -> b" in text
    assert "a at line 2" in text and "b at line 5" in text
    assert str(path) in text
    assert info.value.exit_code == 2


def test_cycle_through_depends_on(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - {name: a, type: formatter, template: x, depends_on: [c]}
          - {name: b, type: formatter, template: "{{ a }}"}
          - {name: c, type: formatter, template: "{{ b }}"}
        """,
    )
    with pytest.raises(CycleError) as info:
        compile_workflow(path)
    cycle = str(info.value).split("cycle: ")[1].split(" (")[0]
    names = cycle.split(" -> ")
    assert names[0] == names[-1] and set(names) == {"a", "b", "c"} and len(names) == 4


def test_self_reference_is_an_error(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - {name: a, type: formatter, template: "{{ a }}"}
        """,
    )
    with pytest.raises(ValidationError, match="refers to its own output"):
        compile_workflow(path)


def test_loop_body_reference_to_outer_task_makes_loop_depend_on_it(write: WriteFile) -> None:
    plan = plan_of(
        write,
        """
        tasks:
          - name: regions
            type: formatter
            template: x
          - name: header
            type: formatter
            template: y
          - name: per_region
            type: loop_sequential
            values: [EU, US]
            tasks:
              - name: line
                type: formatter
                template: "{{ header }} {{ value }} {{ per_region.value }}"
          - name: nested
            type: loop_sequential
            values: [1, 2]
            tasks:
              - name: inner
                type: loop_sequential
                values: [a, b]
                tasks:
                  - name: deepest
                    type: formatter
                    template: "{{ regions }} {{ nested.value }} {{ value }}"
        """,
    )
    assert plan.by_name["per_region"].deps == ("header",)
    assert plan.by_name["nested"].deps == ("regions",)
    body = plan.by_name["per_region"].children["body"]
    assert [t.name for t in body.tasks] == ["line"]
    assert body.by_name["line"].deps == ()


def test_loop_body_reference_to_unknown_name_is_an_error(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: per_region
            type: loop_sequential
            values: [EU, US]
            tasks:
              - name: line
                type: formatter
                template: "{{ valeu }}"
        """,
    )
    with pytest.raises(ValidationError) as info:
        compile_workflow(path)
    (issue,) = info.value.issues
    assert issue.line == 8
    assert issue.path == "tasks[0].tasks[0].template"
    assert "did you mean 'value'" in issue.message


def test_outer_task_cannot_see_loop_body_tasks(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: loop
            type: loop_sequential
            values: [1]
            tasks:
              - {name: inner, type: formatter, template: x}
          - {name: after, type: formatter, template: "{{ inner }}"}
        """,
    )
    with pytest.raises(ValidationError, match="unknown name 'inner'"):
        compile_workflow(path)


def test_subworkflow_recursion_is_an_error(write: WriteFile) -> None:
    write(
        "b.workflow.yml",
        """
        tasks:
          - {name: back, type: workflow, src: a.workflow.yml}
        """,
    )
    path = write(
        "a.workflow.yml",
        """
        tasks:
          - {name: go, type: workflow, src: b.workflow.yml}
        """,
    )
    with pytest.raises(ValidationError) as info:
        compile_workflow(path)
    text = str(info.value)
    assert "a.workflow.yml -> b.workflow.yml -> a.workflow.yml" in text
    assert "sub-workflows include each other" in text


def test_subworkflow_including_itself_is_an_error(write: WriteFile) -> None:
    path = write(
        "a.workflow.yml",
        """
        tasks:
          - {name: again, type: workflow, src: a.workflow.yml}
        """,
    )
    with pytest.raises(ValidationError, match="include each other"):
        compile_workflow(path)


def test_missing_subworkflow_src(write: WriteFile) -> None:
    path = write(
        "a.workflow.yml",
        """
        tasks:
          - name: child
            type: workflow
            src: sub/missing.workflow.yml
        """,
    )
    with pytest.raises(ValidationError) as info:
        compile_workflow(path)
    (issue,) = info.value.issues
    assert issue.line == 4
    assert "file 'sub/missing.workflow.yml' not found" in issue.message


def test_errors_in_subworkflow_are_reported_from_parent(write: WriteFile) -> None:
    write(
        "child.workflow.yml",
        """
        tasks:
          - {name: x, type: formatter, template: "{{ nope }}"}
        """,
    )
    path = write(
        "parent.workflow.yml",
        """
        tasks:
          - {name: c, type: workflow, src: child.workflow.yml}
        """,
    )
    with pytest.raises(ValidationError) as info:
        compile_workflow(path)
    text = str(info.value)
    assert "in sub-workflow 'child.workflow.yml'" in text
    assert "child.workflow.yml:2" in text and "unknown name 'nope'" in text


def test_unknown_database_at_validate_time(write: WriteFile, duckdb_project: Path) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: q
            type: execute_sql
            database: warehose
            sql_query: SELECT 1
        """,
    )
    with pytest.raises(ValidationError) as info:
        compile_workflow(path)
    (issue,) = info.value.issues
    assert (issue.line, issue.path) == (4, "tasks[0].database")
    assert "unknown database 'warehose'" in issue.message
    assert "did you mean 'warehouse'" in issue.message


def test_no_database_and_no_config_is_an_error(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - {name: q, type: execute_sql, sql_query: SELECT 1}
        """,
    )
    with pytest.raises(ValidationError, match="the project has no database: put CSV or Parquet"):
        compile_workflow(path)


def test_missing_sql_file_at_validate_time(write: WriteFile, duckdb_project: Path) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: q
            type: execute_sql
            database: warehouse
            sql_file: queries/missing.sql
        """,
    )
    with pytest.raises(ValidationError) as info:
        compile_workflow(path)
    (issue,) = info.value.issues
    assert (issue.line, issue.path) == (5, "tasks[0].sql_file")
    assert "file 'queries/missing.sql' not found" in issue.message


def test_sql_file_references_make_edges(write: WriteFile, duckdb_project: Path) -> None:
    write("queries/by_region.sql", "SELECT * FROM sales WHERE region = {{ pick | sqlquote }}\n")
    plan = plan_of(
        write,
        """
        tasks:
          - {name: pick, type: formatter, template: EU}
          - name: q
            type: execute_sql
            database: warehouse
            sql_file: queries/by_region.sql
        """,
    )
    assert plan.by_name["q"].deps == ("pick",)


def test_unknown_name_in_sql_file_is_reported(write: WriteFile, duckdb_project: Path) -> None:
    write("queries/q.sql", "SELECT {{ missing_name }}\n")
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - {name: q, type: execute_sql, database: warehouse, sql_file: queries/q.sql}
        """,
    )
    with pytest.raises(ValidationError, match="unknown name 'missing_name'"):
        compile_workflow(path)


def test_priorities_are_longest_remaining_path(write: WriteFile) -> None:
    plan = plan_of(
        write,
        """
        tasks:
          - {name: a, type: formatter, template: x}
          - {name: b, type: formatter, template: "{{ a }}"}
          - {name: c, type: formatter, template: "{{ b }}"}
          - {name: d, type: formatter, template: x}
          - {name: e, type: formatter, template: "{{ a }}{{ d }}"}
        """,
    )
    assert {t.name: t.priority for t in plan.tasks} == {"a": 3, "b": 2, "c": 1, "d": 2, "e": 1}
    assert [t.order for t in plan.tasks] == [0, 1, 2, 3, 4]


def test_variables_are_names_not_edges(write: WriteFile) -> None:
    plan = plan_of(
        write,
        """
        variables:
          month: 3
        tasks:
          - {name: a, type: formatter, template: "{{ month }} {{ now() }}"}
        """,
    )
    assert plan.by_name["a"].deps == ()


def test_task_named_like_a_variable_is_an_error(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        variables:
          month: 3
        tasks:
          - {name: month, type: formatter, template: x}
        """,
    )
    with pytest.raises(ValidationError, match="also a variable name"):
        compile_workflow(path)


def test_test_task_ref_must_exist(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - {name: answer, type: formatter, template: x}
        tests:
          - {type: consistency, task_ref: answr}
        """,
    )
    with pytest.raises(ValidationError, match="did you mean 'answer'"):
        compile_workflow(path)


def test_enum_default_outside_enum(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        variables:
          region: {type: string, enum: [EU, US], default: XX}
        tasks:
          - {name: a, type: formatter, template: "{{ region }}"}
        """,
    )
    with pytest.raises(ValidationError) as info:
        compile_workflow(path)
    assert info.value.issues[0].line == 2
    assert "not one of" in info.value.issues[0].message


def test_compile_file_without_project_skips_database_checks(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - {name: q, type: execute_sql, database: anything, sql_query: SELECT 1}
        """,
    )
    plan = compile_file(path, path.parent)
    assert plan.name == "w"
