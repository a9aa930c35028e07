"""config.yml mistakes that `accord validate` and `accord run` refuse (exit 2) before anything
runs, naming config.yml and the line of the entry: unknown default models, duplicate model
names, missing dataset folders and SQLite files. A missing read-only DuckDB file is only a
warning when a run starts (Oxy's examples name one)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from accord.cli import main
from accord.engine.errors import ValidationError
from accord.engine.project import load_project

WriteFile = Callable[[str, str], Path]

WORKFLOW = "tasks:\n  - {name: q, type: execute_sql, sql_query: SELECT 1 AS one}\n"
NO_SQL = "tasks:\n  - {name: t, type: formatter, template: hi}\n"


def accord(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def refused(write: WriteFile, config: str, *needles: str, line: int) -> None:
    """validate and run both exit 2, naming config.yml:line and every needle."""
    config_path = write("config.yml", config)
    workflow = write("flows/monthly/w.workflow.yml", WORKFLOW)
    for command in ("validate", "run"):
        result = accord(command, workflow)
        assert result.exit_code == 2, (command, result.output)
        assert f"{config_path.resolve()}:{line}:" in result.stderr, result.stderr
        for needle in needles:
            assert needle in result.stderr, result.stderr
        assert "Traceback" not in result.output


def test_unknown_default_model(write: WriteFile) -> None:
    config = """
        models:
          - {name: gpt, model: openai/gpt-4o-mini}
        defaults:
          model: gtp
        """
    refused(write, config, "defaults.model: unknown model 'gtp'", "did you mean 'gpt'?", line=4)


def test_unknown_default_judge_model(write: WriteFile) -> None:
    config = """
        models:
          - {name: judge, model: openai/gpt-4o-mini}
        defaults:
          judge_model: jugde
        """
    refused(write, config, "defaults.judge_model: unknown model 'jugde'", line=4)


@pytest.mark.parametrize("name", ["local", "openai/gpt-4o-mini", "gpt"])
def test_known_default_models_pass(write: WriteFile, name: str) -> None:
    write(
        "config.yml",
        f"models:\n  - {{name: gpt, model: openai/gpt-4o}}\ndefaults: {{model: {name}}}\n",
    )
    result = accord("validate", write("w.workflow.yml", NO_SQL))
    assert result.exit_code == 0, result.output


def test_duplicate_model_names(write: WriteFile) -> None:
    config = """
        models:
          - {name: gpt, model: openai/gpt-4o-mini}
          - {name: claude, model: anthropic/claude-sonnet-4-6}
          - {name: gpt, model: openai/gpt-4o}
        """
    refused(write, config, "models[2].name: duplicate model name 'gpt'", "models[0]", line=4)


def test_missing_dataset_folder_is_relative_to_the_project_root(write: WriteFile) -> None:
    # the workflow is two folders down: the message names the path as written in
    # config.yml and the project root, not the workflow's folder
    config = """
        databases:
          - name: sales
            type: duckdb
            dataset: data
        """
    refused(
        write,
        config,
        "databases[0].dataset: database 'sales': dataset folder 'data' not found under the "
        "project root",
        "create the folder",
        line=4,
    )


def test_dataset_that_is_a_file(write: WriteFile) -> None:
    write("data", "not a folder\n")
    config = "databases:\n  - {name: sales, type: duckdb, dataset: data}\n"
    refused(write, config, "dataset folder 'data' is a file, not a folder", line=2)


def test_missing_sqlite_file(write: WriteFile) -> None:
    config = """
        databases:
          - name: app
            type: sqlite
            path: db/app.sqlite
            read_only: false
        """
    refused(write, config, "databases[0].path: database 'app': SQLite file 'db/app.sqlite'", line=4)


def test_every_missing_file_is_reported_at_once(write: WriteFile) -> None:
    write(
        "config.yml",
        """
        databases:
          - {name: sales, type: duckdb, dataset: data}
          - {name: app, type: sqlite, path: app.sqlite}
        """,
    )
    with pytest.raises(ValidationError) as info:
        load_project(write("w.workflow.yml", WORKFLOW))
    assert [(i.line, i.path) for i in info.value.issues] == [
        (2, "databases[0].dataset"),
        (3, "databases[1].path"),
    ]


def test_names_are_checked_before_files(write: WriteFile) -> None:
    # once the names are consistent, the files are checked
    write(
        "config.yml",
        """
        databases:
          - {name: db, type: duckdb, dataset: a}
          - {name: db, type: sqlite, path: b.sqlite}
        """,
    )
    with pytest.raises(ValidationError) as info:
        load_project(write("w.workflow.yml", WORKFLOW))
    assert [i.path for i in info.value.issues] == ["databases[1].name"]


def test_remote_and_server_databases_are_not_checked(write: WriteFile) -> None:
    write(
        "config.yml",
        """
        databases:
          - {name: bq, type: bigquery, key_path: missing.json, dataset: nowhere}
          - {name: snow, type: snowflake, account: xy}
          - {name: pg, type: postgres, host: localhost}
        """,
    )
    result = accord("validate", write("w.workflow.yml", NO_SQL))
    assert result.exit_code == 0, result.output


def test_missing_read_only_duckdb_file_is_a_warning_when_a_run_starts(
    write: WriteFile,
) -> None:
    config_path = write(
        "config.yml",
        """
        databases:
          - {name: other, type: duckdb, dataset: data}
          - {name: persistent, type: duckdb, path: db.duckdb}
          - {name: scratch, type: duckdb, path: scratch.duckdb, read_only: false}
        defaults:
          database: other
        """,
    )
    write("data/sales.csv", "region,amount\nEU,1\n")
    workflow = write("w.workflow.yml", WORKFLOW)
    validated = accord("validate", workflow)
    assert validated.exit_code == 0, validated.output
    assert "db.duckdb" not in validated.stderr
    ran = accord("run", workflow)
    assert ran.exit_code == 0, ran.output
    assert f"{config_path.resolve()}:3:" in ran.stderr
    assert "databases[1].path: database 'persistent': file 'db.duckdb' not found" in ran.stderr
    assert "scratch" not in ran.stderr  # read_only: false creates the file
