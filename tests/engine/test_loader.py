"""Loading files: YAML syntax errors, schema errors with positions, Oxy-only keys."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from accord.engine.errors import AccordError, LoadError, ValidationError
from accord.engine.loader import load_config, load_workflow
from accord.engine.project import load_project
from accord.engine.runner import compile_workflow
from accord.engine.yamlmarks import parse_yaml

WriteFile = Callable[[str, str], Path]


def problems(path: Path) -> ValidationError:
    """The ValidationError that compiling `path` raises."""
    with pytest.raises(ValidationError) as info:
        compile_workflow(path)
    return info.value


def test_yaml_syntax_error_names_file_line_column_with_numbered_excerpt(write: WriteFile) -> None:
    path = write(
        "bad.workflow.yml",
        """
        tasks:
          - name: a
            type: formatter
            template: "hello
          - name: b
        """,
    )
    with pytest.raises(LoadError) as info:
        load_workflow(path)
    message = info.value.message
    first = message.splitlines()[0]
    assert first.startswith(f"{path}:")
    line, column = first[len(str(path)) + 1 :].split(":")[:2]
    assert line.isdigit() and column.isdigit()
    assert "YAML syntax error" in first
    # numbered lines around the fault, the faulty one marked
    assert f"> {line} |" in message or f">  {line} |" in message
    assert "template:" in message


def test_yaml_tab_indentation_gets_a_fix_hint(write: WriteFile) -> None:
    path = write("tab.workflow.yml", "tasks:\n\t- name: a\n")
    with pytest.raises(LoadError) as info:
        load_workflow(path)
    assert f"{path}:2:" in info.value.message
    assert "tabs" in info.value.message


def test_misspelt_key_is_reported_with_did_you_mean_and_position(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: a
            type: formatter
            template: hi
            depend_on: [b]
          - name: b
            type: formatter
            template: there
        """,
    )
    error = problems(path)
    assert len(error.issues) == 1
    issue = error.issues[0]
    assert (issue.file, issue.line, issue.column) == (path, 5, 5)
    assert issue.path == "tasks[0].depend_on"
    assert "unknown key 'depend_on'" in issue.message
    assert "did you mean 'depends_on'?" in issue.message
    assert f"{path}:5:5 tasks[0].depend_on: unknown key" in str(error)


def test_misspelt_top_level_key(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        descripton: typo
        tasks:
          - {name: a, type: formatter, template: hi}
        """,
    )
    error = problems(path)
    assert error.issues[0].line == 1
    assert "did you mean 'description'?" in error.issues[0].message


def test_unknown_task_type_lists_known_types_and_suggests(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: a
            type: formater
            template: hi
        """,
    )
    error = problems(path)
    (issue,) = error.issues
    assert issue.line in (2, 3)
    assert "unknown type 'formater'" in issue.message
    assert "did you mean 'formatter'?" in issue.message
    assert "execute_sql" in issue.message and "loop_sequential" in issue.message


def test_missing_required_key_says_add_it(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: a
            type: formatter
        """,
    )
    (issue,) = problems(path).issues
    assert issue.path == "tasks[0].template"
    assert "required key 'template' is missing" in issue.message
    assert issue.line == 2


def test_missing_tasks_key(write: WriteFile) -> None:
    path = write("w.workflow.yml", "name: x\n")
    error = problems(path)
    assert any("required key 'tasks' is missing" in i.message for i in error.issues)


def test_wrong_type_names_the_value(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: a
            type: formatter
            template: hi
            timeout: soon
        """,
    )
    (issue,) = problems(path).issues
    assert issue.path == "tasks[0].timeout"
    assert (issue.line, issue.column) == (5, 14)
    assert "'soon'" in issue.message
    assert "number" in issue.message


def test_invalid_task_name_is_explained(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: 2nd-task
            type: formatter
            template: hi
        """,
    )
    (issue,) = problems(path).issues
    assert "'2nd-task' is not a valid name" in issue.message
    assert issue.line == 2


def test_duplicate_yaml_key(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: a
            type: formatter
            template: one
            template: two
        """,
    )
    with pytest.raises(ValidationError) as info:
        load_workflow(path)
    (issue,) = info.value.issues
    assert (issue.line, issue.column) == (5, 5)
    assert "duplicate key 'template'" in issue.message


def test_a_merged_key_the_mapping_overrides_is_no_duplicate(write: WriteFile) -> None:
    # `<<: *anchor` brings the anchor's keys in; the mapping's own key of a name wins (YAML's
    # merge), and that is not a duplicate
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - &base {name: a, type: formatter, template: one}
          - <<: *base
            name: b
            template: two
        """,
    )
    tasks = load_workflow(path).spec.tasks
    assert [(t.name, t.template) for t in tasks] == [("a", "one"), ("b", "two")]


def test_duplicate_task_name(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: a
            type: formatter
            template: one
          - name: a
            type: formatter
            template: two
        """,
    )
    (issue,) = problems(path).issues
    assert issue.line == 5
    assert "duplicate task name 'a'" in issue.message
    assert "tasks[0]" in issue.message


def test_every_problem_of_a_file_is_reported_together(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: a
            type: formatter
            templat: x
          - name: b
            type: formatterr
            template: y
          - name: c
            type: formatter
            template: "{{ nowhere }}"
          - name: c
            type: formatter
            template: z
        """,
    )
    error = problems(path)
    messages = "\n".join(i.message for i in error.issues)
    assert "unknown key 'templat'" in messages
    assert "unknown type 'formatterr'" in messages
    assert "unknown name 'nowhere'" in messages
    assert "duplicate task name 'c'" in messages
    assert len(error.issues) >= 4
    assert str(error).startswith(f"{len(error.issues)} problems found:")
    lines = [i.line or 0 for i in error.issues]
    assert lines == sorted(lines)


def test_top_level_must_be_a_mapping(write: WriteFile) -> None:
    path = write("w.workflow.yml", "- just\n- a list\n")
    with pytest.raises(ValidationError, match="expected a mapping"):
        load_workflow(path)


def test_empty_file_asks_for_tasks(write: WriteFile) -> None:
    path = write("w.workflow.yml", "")
    assert "required key 'tasks' is missing" in str(problems(path))


def test_missing_file_is_a_load_error(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="file not found"):
        compile_workflow(tmp_path / "nope.workflow.yml")


def test_non_workflow_suffix_is_rejected(write: WriteFile) -> None:
    path = write("w.yml", "tasks: []\n")
    with pytest.raises(LoadError, match=r"\.workflow\.yml"):
        compile_workflow(path)


@pytest.mark.parametrize("suffix", [".procedure.yml", ".automation.yml"])
def test_oxy_file_names_are_workflows(write: WriteFile, suffix: str) -> None:
    path = write(f"w{suffix}", "tasks:\n  - {name: a, type: formatter, template: hi}\n")
    _project, plan = compile_workflow(path)
    assert plan.name == "w"


def test_oxy_only_keys_are_accepted(write: WriteFile) -> None:
    write(
        "config.yml",
        """
        databases:
          - name: warehouse
            type: duckdb
            dataset: data
          - name: bq
            type: bigquery
            key_path: secrets/key.json
            dataset: analytics
          - name: snow
            type: snowflake
            account: xy123
            warehouse: compute_wh
        builder_agent: agents/builder.agent.yml
        mcp:
          servers: []
        a2a:
          agents: []
        defaults:
          database: warehouse
          agent: agents/default.agent.yml
        """,
    )
    (Path(write("data/sales.csv", "region,amount\nEU,1\n")).parent).mkdir(exist_ok=True)
    path = write(
        "w.workflow.yml",
        """
        name: oxy
        retrieval:
          include: ["*"]
        tasks:
          - name: q
            type: execute_sql
            database: warehouse
            warehouse: compute_wh
            sql_query: SELECT 1 AS one
        """,
    )
    project, plan = compile_workflow(path)
    assert set(project.databases) == {"warehouse", "bq", "snow"}
    assert project.config.builder_agent == "agents/builder.agent.yml"
    assert [t.name for t in plan.tasks] == ["q"]


def test_config_misspelt_key_names_config_file(write: WriteFile) -> None:
    config = write(
        "config.yml",
        """
        databases:
          - name: warehouse
            type: duckdb
            datset: data
        """,
    )
    with pytest.raises(ValidationError) as info:
        load_config(config)
    messages = str(info.value)
    assert f"{config}:4:5" in messages
    assert "did you mean 'dataset'?" in messages


def test_yaml_booleans_and_numbers_where_text_is_expected_say_to_quote(
    write: WriteFile,
) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: yes
            type: formatter
            template: 2024
        """,
    )
    issues = {i.path: i.message for i in problems(path).issues}
    assert issues["tasks[0].name"].endswith(
        "(YAML read this value as True): put it in quotes to make it text"
    )
    assert "(YAML read this value as 2024)" in issues["tasks[0].template"]


def test_config_unknown_database_type(write: WriteFile) -> None:
    config = write(
        "config.yml",
        """
        databases:
          - name: x
            type: oracle
        """,
    )
    with pytest.raises(ValidationError) as info:
        load_config(config)
    assert "unknown type 'oracle'" in str(info.value)
    assert "duckdb" in str(info.value)


def test_config_default_database_must_exist(write: WriteFile) -> None:
    write(
        "config.yml",
        """
        databases:
          - {name: warehouse, type: duckdb, dataset: data}
        defaults:
          database: warehous
        """,
    )
    path = write("w.workflow.yml", "tasks:\n  - {name: a, type: formatter, template: hi}\n")
    with pytest.raises(ValidationError, match="unknown database 'warehous'"):
        load_project(path)


def test_parse_yaml_marks_positions() -> None:
    data, marks = parse_yaml("a:\n  b: [1, 2]\n", None)
    assert data == {"a": {"b": [1, 2]}}
    assert marks.find(("a", "b", 1)) == (2, 10)
    assert marks.find(("a", "b"), key=True) == (2, 3)


def test_errors_are_accord_errors_with_exit_code_2(write: WriteFile) -> None:
    path = write("w.workflow.yml", "tasks: [\n")
    with pytest.raises(AccordError) as info:
        compile_workflow(path)
    assert info.value.exit_code == 2


def test_misspelt_keys_in_nested_objects_get_suggestions(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: l
            type: loop_sequential
            values: [1]
            tasks:
              - name: inner
                type: formatter
                templat: x
          - name: r
            type: formatter
            template: z
            retry: {attempt: 3}
        """,
    )
    issues = {i.path: i for i in problems(path).issues}
    assert issues["tasks[0].tasks[0].templat"].line == 8
    assert "did you mean 'template'" in issues["tasks[0].tasks[0].templat"].message
    assert issues["tasks[1].retry.attempt"].line == 12
    assert "did you mean 'attempts'" in issues["tasks[1].retry.attempt"].message


def test_root_is_nearest_folder_with_config(write: WriteFile, tmp_path: Path) -> None:
    write("config.yml", "databases:\n  - {name: warehouse, type: duckdb, dataset: data}\n")
    write("data/sales.csv", "region,amount\nEU,1\n")
    write("queries/q.sql", "SELECT * FROM sales\n")
    path = write(
        "flows/monthly/m.workflow.yml",
        """
        tasks:
          - {name: q, type: execute_sql, sql_file: queries/q.sql}
        """,
    )
    project, plan = compile_workflow(path)
    assert project.root == tmp_path.resolve()
    assert project.default_database == "warehouse"
    assert plan.root == tmp_path.resolve()


def test_without_config_a_db_folder_is_the_local_database(write: WriteFile, tmp_path: Path) -> None:
    write(".db/sales.csv", "region,amount\nEU,1\n")
    path = write(
        "w.workflow.yml", "tasks:\n  - {name: q, type: execute_sql, sql_query: SELECT 1}\n"
    )
    project, _plan = compile_workflow(path)
    assert project.config_path is None
    assert project.default_database == "local"


def test_duplicate_database_names_in_config(write: WriteFile) -> None:
    write(
        "config.yml",
        """
        databases:
          - {name: db, type: duckdb, dataset: a}
          - {name: db, type: sqlite, path: b.sqlite}
        """,
    )
    path = write("w.workflow.yml", "tasks:\n  - {name: a, type: formatter, template: x}\n")
    with pytest.raises(ValidationError) as info:
        load_project(path)
    (issue,) = info.value.issues
    assert issue.line == 3
    assert "duplicate database name 'db'" in issue.message


def test_misspelt_required_key_is_one_problem_not_two(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: a
            type: formatter
            templat: x
        """,
    )
    (issue,) = problems(path).issues
    assert issue.path == "tasks[0].templat"
    assert "did you mean 'template'?" in issue.message


def test_wrong_variable_type_keyword_is_one_clear_problem(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        variables:
          month:
            type: integr
        tasks:
          - {name: a, type: formatter, template: "{{ month }}"}
        """,
    )
    (issue,) = problems(path).issues
    assert (issue.line, issue.path) == (3, "variables.month.type")
    assert "(got 'integr')" in issue.message
    assert "did you mean 'integer'?" in issue.message


def test_config_database_problem_is_located_inside_the_entry(write: WriteFile) -> None:
    config = write(
        "config.yml",
        """
        databases:
          - name: warehouse
            type: duckdb
            dataset: data
            read_only: maybe
          - name: both
            type: duckdb
        """,
    )
    with pytest.raises(ValidationError) as info:
        load_config(config)
    first, second = info.value.issues
    assert (first.line, first.path) == (5, "databases[0].read_only")
    assert "'maybe'" in first.message
    assert second.line == 6 and "exactly one of 'dataset'" in second.message


def test_top_level_typo_does_not_hide_reference_errors(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        descripton: typo
        tasks:
          - {name: a, type: formatter, template: "{{ nope }}"}
        """,
    )
    issues = problems(path).issues
    assert [i.line for i in issues] == [1, 3]
    assert "did you mean 'description'" in issues[0].message
    assert "unknown name 'nope'" in issues[1].message
