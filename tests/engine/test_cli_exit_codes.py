"""The command line in-process: exit codes, messages with file and line, output formats."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from accord.cli import main
from tests.bounds import PROCESS_SECONDS

WriteFile = Callable[[str, str], Path]


def accord(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def assert_user_error(result: Result, path: Path, line: int, *needles: str) -> None:
    """Exit 2, the file and line on stderr, the message, and no traceback anywhere."""
    assert result.exit_code == 2, result.output
    assert f"{path}:{line}" in result.stderr, result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    assert result.stdout == ""


INVALID_WORKFLOWS = {
    "yaml_syntax": (
        """
        tasks:
          - name: a
            type: formatter
            template: {{ x }}
        """,
        4,
        "YAML syntax error",
    ),
    "misspelt_key": (
        """
        tasks:
          - name: a
            type: formatter
            tempalte: x
        """,
        4,
        "did you mean 'template'",
    ),
    "unknown_type": (
        """
        tasks:
          - name: a
            type: sql
            sql_query: SELECT 1
        """,
        2,
        "unknown type 'sql'",
    ),
    "duplicate_name": (
        """
        tasks:
          - {name: a, type: formatter, template: x}
          - {name: a, type: formatter, template: y}
        """,
        3,
        "duplicate task name 'a'",
    ),
    "unknown_reference": (
        """
        tasks:
          - {name: a, type: formatter, template: x}
          - name: b
            type: formatter
            template: "{{ c }}"
        """,
        5,
        "unknown name 'c'",
    ),
    "cycle": (
        """
        tasks:
          - {name: a, type: formatter, template: "{{ b }}"}
          - {name: b, type: formatter, template: "{{ a }}"}
        """,
        2,
        " -> ",
    ),
    "missing_sql_file": (
        """
        tasks:
          - name: q
            type: execute_sql
            database: warehouse
            sql_file: nowhere.sql
        """,
        5,
        "file 'nowhere.sql' not found",
    ),
    "missing_subworkflow": (
        """
        tasks:
          - name: child
            type: workflow
            src: nowhere.workflow.yml
        """,
        4,
        "file 'nowhere.workflow.yml' not found",
    ),
    "unknown_database": (
        """
        tasks:
          - name: q
            type: execute_sql
            database: lake
            sql_query: SELECT 1
        """,
        4,
        "unknown database 'lake'",
    ),
}


@pytest.mark.parametrize("command", ["run", "validate"])
@pytest.mark.parametrize("case", sorted(INVALID_WORKFLOWS))
def test_invalid_input_exits_2_with_file_and_line(
    case: str, command: str, write: WriteFile, duckdb_project: Path
) -> None:
    text, line, needle = INVALID_WORKFLOWS[case]
    path = write(f"{case}.workflow.yml", text)
    assert_user_error(accord(command, path), path, line, needle)


def test_cycle_message_shows_the_cycle_with_lines(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - {name: a, type: formatter, template: "{{ b }}"}
          - {name: b, type: formatter, template: "{{ a }}"}
        """,
    )
    result = accord("validate", path)
    assert result.exit_code == 2
    assert "a -> b -> a" in result.stderr or "b -> a -> b" in result.stderr
    assert "a at line 2" in result.stderr and "b at line 3" in result.stderr


VARIABLES = """
    variables:
      month:
        type: integer
      region:
        type: string
        enum: [EU, US]
        default: EU
    tasks:
      - {name: a, type: formatter, template: "{{ month }} {{ region }}"}
    """


def test_missing_required_variable_exits_2_naming_it(write: WriteFile) -> None:
    path = write("v.workflow.yml", VARIABLES)
    assert_user_error(accord("run", path), path, 2, "variable 'month' is required")


def test_variable_of_the_wrong_type_exits_2(write: WriteFile) -> None:
    path = write("v.workflow.yml", VARIABLES)
    result = accord("run", path, "-v", "month=March")
    assert_user_error(result, path, 2, "variable 'month'", "'March'", "integer")


def test_variable_outside_enum_exits_2(write: WriteFile) -> None:
    path = write("v.workflow.yml", VARIABLES)
    result = accord("run", path, "-v", "month=3", "-v", "region=XX")
    assert_user_error(result, path, 4, "variable 'region'", "'XX' is not one of")


def test_variables_from_the_command_line_are_typed(write: WriteFile) -> None:
    path = write("v.workflow.yml", VARIABLES)
    result = accord("run", path, "-v", "month=3", "-v", "region=US", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["outputs"] == {"a": "3 US"}


def test_sql_error_exits_1_naming_task_and_database_message(
    write: WriteFile, duckdb_project: Path
) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: totals
            type: execute_sql
            database: warehouse
            sql_query: SELECT no_such_column FROM sales
        """,
    )
    result = accord("run", path)
    assert result.exit_code == 1, result.output
    output = result.stdout + result.stderr
    assert "totals" in output
    assert "no_such_column" in output and "Binder Error" in output
    assert "Traceback" not in output


def test_sql_error_in_json_format(write: WriteFile, duckdb_project: Path) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: ok
            type: formatter
            template: fine
          - name: totals
            type: execute_sql
            database: warehouse
            sql_query: SELEC 1
        """,
    )
    result = accord("run", path, "--format", "json")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["status"] == "failed"
    assert document["error"]["task"] == "totals"
    assert "syntax error" in document["error"]["message"].lower()
    assert "totals" in result.stderr


def test_json_run_prints_exactly_one_document(write: WriteFile, duckdb_project: Path) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: sales_by_region
            type: execute_sql
            database: warehouse
            sql_query: SELECT region, amount FROM sales ORDER BY amount DESC
          - name: top
            type: formatter
            template: "Top: {{ sales_by_region.region[0] }} of {{ sales_by_region | length }}"
        """,
    )
    result = accord("--log-level", "debug", "run", path, "--format", "json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["status"] == "succeeded"
    assert document["outputs"]["top"] == "Top: US of 3"
    assert document["outputs"]["sales_by_region"][0] == {"region": "US", "amount": 20}
    assert {t["task"] for t in document["tasks"]} == {"sales_by_region", "top"}


def test_pretty_run_shows_outputs(write: WriteFile, duckdb_project: Path) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: total
            type: execute_sql
            database: warehouse
            sql_query: SELECT sum(amount) AS total FROM sales
        """,
    )
    result = accord("run", path)
    assert result.exit_code == 0, result.output
    assert "35" in result.stdout


def test_keep_going_runs_independent_tasks(write: WriteFile, duckdb_project: Path) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - {name: bad, type: execute_sql, database: warehouse, sql_query: SELECT nope}
          - {name: after_bad, type: formatter, template: "{{ bad }}"}
          - {name: good, type: formatter, template: fine}
        """,
    )
    result = accord("run", path, "--keep-going", "--format", "json")
    assert result.exit_code == 1
    tasks = {t["task"]: t["status"] for t in json.loads(result.stdout)["tasks"]}
    assert tasks == {"bad": "failed", "after_bad": "skipped", "good": "succeeded"}


def test_validate_good_file_exits_0(write: WriteFile, duckdb_project: Path) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - {name: q, type: execute_sql, database: warehouse, sql_query: SELECT 1}
          - {name: f, type: formatter, template: "{{ q }}"}
        """,
    )
    result = accord("validate", path)
    assert result.exit_code == 0, result.stderr
    assert "ok:" in result.stdout and "2 tasks" in result.stdout


def test_validate_reports_every_file(write: WriteFile) -> None:
    good = write("good.workflow.yml", "tasks:\n  - {name: a, type: formatter, template: x}\n")
    bad = write("bad.workflow.yml", "tasks:\n  - {name: a, type: formatter}\n")
    result = accord("validate", bad, good)
    assert result.exit_code == 2
    assert f"ok: {good}" in result.stdout
    assert f"{bad}:2" in result.stderr


GRAPH = """
    tasks:
      - {name: extract, type: formatter, template: x}
      - {name: report, type: formatter, template: "{{ extract }}"}
    """


def test_graph_text(write: WriteFile) -> None:
    path = write("g.workflow.yml", GRAPH)
    result = accord("graph", path)
    assert result.exit_code == 0
    assert "- report [formatter]  <- extract" in result.stdout


def test_graph_dot(write: WriteFile) -> None:
    path = write("g.workflow.yml", GRAPH)
    result = accord("graph", path, "--format", "dot")
    assert result.exit_code == 0
    assert result.stdout.startswith("digraph")
    assert re.search(r"\b\w*extract -> \w*report;", result.stdout)
    assert re.search(r'label="extract', result.stdout)


def test_graph_mermaid(write: WriteFile) -> None:
    path = write("g.workflow.yml", GRAPH)
    result = accord("graph", path, "--format", "mermaid")
    assert result.exit_code == 0
    assert result.stdout.split()[0] in {"flowchart", "graph"}
    assert "extract" in result.stdout and "-->" in result.stdout


def test_graph_of_invalid_file_exits_2(write: WriteFile) -> None:
    path = write("g.workflow.yml", "tasks:\n  - {name: a, type: formatter, template: '{{ b }}'}\n")
    assert_user_error(accord("graph", path), path, 2, "unknown name 'b'")


def test_schema_workflow_is_json_with_task_types() -> None:
    result = accord("schema", "workflow")
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    text = json.dumps(schema)
    for task_type in ("execute_sql", "formatter", "loop_sequential", "workflow", "agent"):
        assert f'"{task_type}"' in text
    assert "tasks" in schema["properties"]


def test_schema_all_kinds() -> None:
    result = accord("schema")
    assert result.exit_code == 0
    assert {"workflow", "config"} <= set(json.loads(result.stdout))


def test_missing_file_exits_2(tmp_path: Path) -> None:
    result = accord("run", tmp_path / "nothing.workflow.yml")
    assert result.exit_code == 2
    assert "file not found" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_assignment_exits_2(write: WriteFile) -> None:
    path = write("w.workflow.yml", "tasks:\n  - {name: a, type: formatter, template: x}\n")
    result = accord("run", path, "-v", "oops")
    assert result.exit_code == 2
    assert "name=value" in result.stderr


def test_json_format_errors_print_only_an_error_document(write: WriteFile) -> None:
    import json

    path = write("v.workflow.yml", VARIABLES)
    result = accord("run", path, "--format", "json")
    assert result.exit_code == 2
    assert f"{path}:2" in result.stderr and "variable 'month' is required" in result.stderr
    document = json.loads(result.stdout)  # stdout holds this one JSON document and nothing else
    assert document["exit_code"] == 2 and "variable 'month' is required" in document["error"]
    assert "Traceback" not in result.output


def test_validate_does_not_import_litellm(write: WriteFile) -> None:
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - {name: ask, type: agent, model: openai/gpt-4o-mini, prompt: "Hi"}
          - {name: show, type: formatter, template: "{{ ask }}"}
        """,
    )
    script = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from accord.cli import main\n"
        f"result = CliRunner().invoke(main, ['validate', {str(path)!r}])\n"
        "print(result.exit_code, 'litellm' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=PROCESS_SECONDS,
        check=False,
    )
    assert done.stdout.split() == ["0", "False"], done.stderr


def test_json_format_prints_an_error_document_for_invalid_input(tmp_path: Path) -> None:
    # stdout was empty: a CI parser could not see why
    import json

    from click.testing import CliRunner

    from accord.cli import main

    path = tmp_path / "bad.workflow.yml"
    path.write_text("tasks:\n  - name: a\n    type: formatter\n    templat: x\n")
    for command in ("run", "test"):
        result = CliRunner().invoke(main, [command, str(path), "--format", "json"])
        assert result.exit_code == 2
        document = json.loads(result.stdout)
        assert document["status"] == "invalid" and document["exit_code"] == 2
        (problem,) = document["problems"]
        assert (problem["line"], problem["field"]) == (4, "tasks[0].templat")
        assert "did you mean 'template'" in problem["message"]


def test_without_a_database_the_message_says_how_to_make_one(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from accord.cli import main

    path = tmp_path / "w.workflow.yml"
    path.write_text("tasks:\n  - name: a\n    type: execute_sql\n    sql_query: SELECT 1\n")
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 2
    assert "the project has no database: put CSV or Parquet files in a '.db/' folder" in (
        result.stderr
    )
    assert "declare one in config.yml" in result.stderr


def test_a_named_database_in_a_project_without_any_says_how_to_declare_it(
    tmp_path: Path,
) -> None:
    from click.testing import CliRunner

    from accord.cli import main

    path = tmp_path / "w.workflow.yml"
    path.write_text(
        "tasks:\n  - name: a\n    type: execute_sql\n    database: sales\n    sql_query: SELECT 1\n"
    )
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 2
    assert "unknown database 'sales': the project has none; declare it in config.yml" in (
        result.stderr
    )
    assert "'databases: [{name: sales, type: duckdb, dataset: data}]'" in result.stderr
    assert "none configured" not in result.stderr


def test_a_failure_is_shown_once_and_logs_are_json_only_when_asked(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    (tmp_path / ".db").mkdir()
    (tmp_path / ".db" / "t.csv").write_text("a\n1\n")
    path = tmp_path / "w.workflow.yml"
    path.write_text("tasks:\n  - name: broken\n    type: execute_sql\n    sql_query: SELEC 1\n")

    def accord_process(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "accord.cli", *args]
        return subprocess.run(
            command, capture_output=True, text=True, timeout=PROCESS_SECONDS, check=False
        )

    pretty = accord_process("run", str(path))
    assert pretty.returncode == 1
    assert pretty.stderr.count("syntax error") == 1, pretty.stderr  # once, formatted
    assert "✗ broken" in pretty.stderr and '"event"' not in pretty.stderr
    logged = accord_process("--log-format", "json", "--log-level", "info", "run", str(path))
    events = [json.loads(line) for line in logged.stderr.splitlines() if line.startswith("{")]
    assert [e["event"] for e in events if e["event"] == "task_failed"] == ["task_failed"]


def test_the_summary_lists_the_files_written_and_runs_list_says_where_runs_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from click.testing import CliRunner

    from accord.cli import main

    project = tmp_path / "proj"
    (project / ".db").mkdir(parents=True)
    (project / ".db" / "t.csv").write_text("a\n1\n2\n")
    path = project / "w.workflow.yml"
    path.write_text(
        "tasks:\n  - name: rows\n    type: execute_sql\n    sql_query: SELECT * FROM t\n"
        "    export: {path: out/rows.csv, format: csv}\n"
    )
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    pretty = runner.invoke(main, ["run", "proj/w.workflow.yml", "--quiet"])
    assert pretty.exit_code == 0, pretty.output
    assert "files written:\n  proj/out/rows.csv\n" in pretty.stdout
    assert Path("proj/out/rows.csv").read_text().splitlines() == ["a", "1", "2"]
    doc = json.loads(runner.invoke(main, ["run", "proj/w.workflow.yml", "--format", "json"]).stdout)
    assert doc["summary"]["files"] == ["proj/out/rows.csv"]
    listed = runner.invoke(main, ["runs", "list"])
    assert "no runs recorded yet" in listed.stdout
    assert "runs recorded under proj: `accord runs list --project <folder>`" in listed.stderr


def test_run_and_validate_count_tasks_alike(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from accord.cli import main

    path = tmp_path / "w.workflow.yml"
    path.write_text(
        "tasks:\n  - name: each\n    type: loop_sequential\n    values: [a, b, c]\n"
        "    tasks:\n      - name: say\n        type: formatter\n        template: '{{ value }}'\n"
    )
    runner = CliRunner()
    assert "(2 tasks)" in runner.invoke(main, ["validate", str(path)]).stdout
    run = runner.invoke(main, ["run", str(path), "--quiet"])
    assert run.exit_code == 0, run.output
    # the loop and its task; run adds the loop's three iterations as nodes
    assert re.search(r"w: 2 tasks, \d+ nodes \(\d+ succeeded\)", run.stdout), run.stdout


@pytest.mark.slow
def test_init_makes_a_project_that_runs_tests_and_evaluates_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    from click.testing import CliRunner

    from accord.cli import main

    runner = CliRunner()
    made = runner.invoke(main, ["init", str(tmp_path / "p")])
    assert made.exit_code == 0, made.output
    assert "created" in made.stdout and "accord run revenue.workflow.yml" in made.stdout
    monkeypatch.chdir(tmp_path / "p")
    assert runner.invoke(main, ["validate", "revenue.workflow.yml", "config.yml"]).exit_code == 0
    tested = runner.invoke(main, ["test", "revenue.workflow.yml", "--min-accuracy", "1"])
    assert tested.exit_code == 0, tested.output  # the headline test needs no model
    evaluated = runner.invoke(main, ["eval", "checks.eval.yml", "--min-pass-rate", "1"])
    assert evaluated.exit_code == 0, evaluated.output
    if importlib.util.find_spec("llama_cpp") is not None:  # make test installs it
        ran = runner.invoke(main, ["run", "revenue.workflow.yml", "--quiet"])
        assert ran.exit_code == 0, ran.output
    again = runner.invoke(main, ["init", "."])
    assert again.exit_code == 2 and "overwrites nothing" in again.stderr
    assert (tmp_path / "p" / "config.yml").read_text().startswith("# One DuckDB")


def test_narrow_tables_keep_their_titles_and_task_names_whole(tmp_path: Path) -> None:
    from rich.console import Console

    from accord.cli import main
    from accord.engine.report.pretty import usage_table
    from accord.engine.usage import Usage

    (tmp_path / ".db").mkdir()
    (tmp_path / ".db" / "t.csv").write_text("a\n1\n2\n")
    path = tmp_path / "w.workflow.yml"
    path.write_text("tasks:\n  - name: revenue_by_region_and_channel\n    type: execute_sql\n"
                    "    sql_query: SELECT a FROM t\n")  # fmt: skip
    from click.testing import CliRunner

    run = CliRunner(env={"COLUMNS": "40"}).invoke(main, ["run", str(path)])
    assert run.exit_code == 0, run.output
    assert "revenue_by_region_and_channel (2 rows)\n" in run.stdout  # one line, not folded
    console = Console(width=60, record=True)
    console.print(usage_table({"top_country.rows_by_region_and_month": Usage()}))
    text = console.export_text()
    cells = [line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│")]
    assert "".join(cells) == "top_country.rows_by_region_and_month"  # folded, not cut
