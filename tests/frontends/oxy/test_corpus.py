"""The Oxy corpus (shared/oxy-corpus): real Oxy projects that must load and run unchanged.

- demo_project: the store deep dive runs as it is; its exported CSVs are compared with DuckDB
  run directly on `.db/oxymart.csv` for the same SQL.
- examples: with a config.yml of ours mapping `primary_database` and `local` to a DuckDB
  dataset over `.db/`, every procedure without a model runs as it is;
  every procedure validates with Oxy's own config.yml, except the ones accord rejects on
  purpose, whose exact errors are asserted.

The corpus is copied to `tmp_path` first (its files are read-only, and outputs must not land
in it).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import docx
import duckdb
import jinja2
import pytest
import yaml

from tests.frontends.oxy.harness import (
    CORPUS,
    OUR_EXAMPLES_CONFIG,
    Run,
    accord,
    copy_writable,
    needs_corpus,
)

pytestmark = needs_corpus

# Procedures that run without a model (the semantic ones are compared in tests/semantic).
RUNNABLE = {
    "table_values.automation.yml",
    "enum_retrieval.procedure.yml",
    "sales_analytics.procedure.yml",
    "semantic_variables.procedure.yml",
}

# Files accord rejects on purpose, with the exact message (after `<file>:`).
# export.procedure.yml's unknown {{table}} is named ("unsupported:") without failing, as
# Oxy's validate passes over every example
REJECTED: dict[str, str] = {}


def procedures() -> list[Path]:
    return sorted(p for p in (CORPUS / "examples" / "procedures").glob("*.yml"))


def read_rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def cell(value: Any) -> str:
    """A value as the csv export writes it."""
    return "" if value is None else str(value)


# --- demo_project: the store deep dive ----------------------------------------------------

DEEP_DIVE = "workflows/store-deep-dive-analysis.procedure.yml"


@pytest.fixture(scope="module")
def deep_dive(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Run]:
    """The deep dive, run as it is."""
    project = copy_writable(CORPUS / "demo_project", tmp_path_factory.mktemp("oxy") / "demo")
    return project, accord("run", project / DEEP_DIVE, "--format", "json")


def test_store_deep_dive_runs_unchanged(deep_dive: tuple[Path, Run]) -> None:
    project, run = deep_dive
    assert run.exit_code == 0, run.stderr
    document = run.document
    assert document["status"] == "succeeded"
    assert {t["status"] for t in document["tasks"]} == {"succeeded"}
    stores = [item["value"] for item in document["outputs"]["analyze_each_store"]]
    assert stores == [20, 4, 14, 13, 2, 10, 27, 6, 1, 39]
    for store in stores:
        report = (project / f"results/store_{store}_report.txt").read_text(encoding="utf-8")
        assert report.startswith(f"# Store {store} - Detailed Performance Report")
        assert f"**Store ID**: {store}" in report


def _sql_tasks(spec: dict[str, Any]) -> dict[str, str]:
    return {t["name"]: t["sql_query"] for t in spec["tasks"] if t["type"] == "execute_sql"}


@pytest.mark.slow
def test_store_deep_dive_exports_match_duckdb(deep_dive: tuple[Path, Run]) -> None:
    project, _run = deep_dive
    spec = yaml.safe_load((project / DEEP_DIVE).read_text(encoding="utf-8"))
    conn = duckdb.connect()
    conn.execute(f"SET file_search_path = '{project / '.db'}'")

    def expected(sql: str) -> list[list[str]]:
        cursor = conn.execute(sql)
        header = [d[0] for d in cursor.description]
        return [header, *([cell(v) for v in row] for row in cursor.fetchall())]

    top = _sql_tasks(spec)
    assert read_rows(project / "results/top_stores_list.csv") == expected(
        top["identify_top_stores"]
    )
    assert read_rows(project / "results/aggregate_store_insights.csv") == expected(
        top["aggregate_store_insights"]
    )

    loop = next(t for t in spec["tasks"] if t["name"] == "analyze_each_store")
    nested = {t["name"]: t for t in loop["tasks"] if t["type"] == "execute_sql"}
    stores = loop["values"]
    assert len(stores) == 10 and len(nested) == 4
    compared = 0
    for store in stores:
        for task in nested.values():
            sql = jinja2.Template(task["sql_query"]).render(analyze_each_store={"value": store})
            path = jinja2.Template(task["export"]["path"]).render(
                analyze_each_store={"value": store}
            )
            # store_seasonal_patterns has no ORDER BY: compare its rows in any order.
            header, *rows = read_rows(project / path)
            want_header, *want_rows = expected(sql)
            assert header == want_header, path
            assert sorted(rows) == sorted(want_rows), path
            compared += 1
    assert compared == 40

    # Oxy's hard-coded store list is the top-10 query's answer.
    top_stores = [row[0] for row in read_rows(project / "results/top_stores_list.csv")[1:]]
    assert top_stores == [str(s) for s in stores]


def test_store_deep_dive_executive_summary(deep_dive: tuple[Path, Run]) -> None:
    project, _run = deep_dive
    summary = (project / "results/deep_dive_executive_summary.txt").read_text(encoding="utf-8")
    rows = read_rows(project / "results/aggregate_store_insights.csv")
    header, first = rows[0], rows[1]
    record = dict(zip(header, first, strict=True))
    assert f"**#1: Store {record['Store']}**" in summary
    assert f"- Total Sales: ${record['total_sales']}" in summary
    for row in rows[1:]:
        assert f"- Store {row[0]}: results/store_{row[0]}_report.txt" in summary


# --- examples: runnable procedures ---------------------------------------------------------


def _task_types(tasks: list[dict[str, Any]], root: Path) -> set[str]:
    """Every task type used, nested tasks and sub-workflows included."""
    found: set[str] = set()
    for task in tasks:
        found.add(task.get("type", ""))
        for key in ("tasks", "else"):
            found |= _task_types(task.get(key) or [], root)
        for condition in task.get("conditions") or []:
            found |= _task_types(condition.get("tasks") or [], root)
        if task.get("type") == "workflow":
            child = yaml.safe_load((root / task["src"]).read_text(encoding="utf-8"))
            found |= _task_types(child.get("tasks") or [], root)
    return found


def test_runnable_procedures_are_the_ones_without_models() -> None:
    root = CORPUS / "examples"
    runnable = {
        p.name
        for p in procedures()
        if not _task_types(yaml.safe_load(p.read_text(encoding="utf-8"))["tasks"], root) & {"agent"}
    }
    assert runnable == RUNNABLE


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    """A copy of examples/ whose config.yml is ours."""
    project = copy_writable(CORPUS / "examples", tmp_path / "examples")
    (project / "config.yml").write_text(OUR_EXAMPLES_CONFIG, encoding="utf-8")
    return project


def _docx_text(path: Path) -> str:
    return "\n".join(p.text for p in docx.Document(str(path)).paragraphs)


def test_table_values_runs_unchanged(examples: Path) -> None:
    run = accord("run", examples / "procedures/table_values.automation.yml", "--format", "json")
    assert run.exit_code == 0, run.stderr
    outputs = run.document["outputs"]
    sql = (examples / "data/example_intervals.sql").read_text(encoding="utf-8")
    direct = duckdb.connect().execute(sql).fetchall()
    assert outputs["intervals"] == [{"intervals": v} for (v,) in direct]
    assert [item["value"] for item in outputs["schedules"]] == ["monthly", "weekly"]
    formatter = outputs["formatter"]
    assert "| intervals |\n|---|\n| monthly |\n| weekly |" in formatter
    assert "['monthly', 'weekly']" in formatter
    assert formatter.index("Interval: monthly") < formatter.index("Interval: weekly")
    report = _docx_text(examples / "output/formatter.docx")
    assert "Schedule by Interval: monthly" in report
    assert "Schedule by Interval: weekly" in report
    # Both iterations export to the same file (as in Oxy, the last one written wins).
    loop_doc = _docx_text(examples / "output/loop_sequential_formatter.docx")
    assert loop_doc.strip() in {
        "---\nSchedule by Interval: monthly\n---",
        "---\nSchedule by Interval: weekly\n---",
    }


def test_enum_retrieval_runs_unchanged(examples: Path) -> None:
    workflow = examples / "procedures/enum_retrieval.procedure.yml"
    run = accord("run", workflow, "--format", "json")
    assert run.exit_code == 0, run.stderr
    assert run.document["outputs"] == {
        "test_task": "This is a test for Bitcoin high-risk analysis (top 5)"
    }
    # Unlike Oxy, accord takes variables from the command line, typed and validated.
    given = accord("run", workflow, "--format", "json", "-v", "asset=XRP", "-v", "top_n=3")
    assert given.document["outputs"]["test_task"] == (
        "This is a test for XRP high-risk analysis (top 3)"
    )
    wrong = accord("run", workflow, "-v", "asset=Dogecoin")
    assert wrong.exit_code == 2
    assert "variable 'asset': 'Dogecoin' is not one of" in wrong.stderr


# --- examples: validation --------------------------------------------------------------------


@pytest.fixture(scope="module")
def examples_with_oxy_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of examples/ with Oxy's own config.yml."""
    return copy_writable(CORPUS / "examples", tmp_path_factory.mktemp("oxy") / "examples")


def _validation_cases() -> list[Any]:
    return [pytest.param(p, id=p.name) for p in procedures()]


@pytest.mark.parametrize("procedure", _validation_cases())
def test_procedure_validates_with_oxys_config(
    examples_with_oxy_config: Path, procedure: Path
) -> None:
    run = accord("validate", examples_with_oxy_config / "procedures" / procedure.name)
    if procedure.name in REJECTED:
        assert run.exit_code == 2
        [line] = run.stderr.splitlines()
        prefix = f"error: {examples_with_oxy_config / 'procedures' / procedure.name}:"
        assert line.startswith(prefix)
        assert line[len(prefix) :].startswith(REJECTED[procedure.name])
        if "known types" in line:
            assert "execute_sql" in line.rsplit("known types: ", 1)[1]
    else:
        assert run.exit_code == 0, run.stderr
        assert run.stdout.startswith("ok: ")


def test_demo_project_validates_with_its_config(tmp_path: Path) -> None:
    project = copy_writable(CORPUS / "demo_project", tmp_path / "demo")
    run = accord("validate", project / DEEP_DIVE)
    assert run.exit_code == 0, run.stderr
    assert run.stdout.startswith("ok: ")
