"""Every example in workflows/ validates and runs, and produces the figures DuckDB computes.

Each project folder is copied to a temporary folder first, so no output lands in the repo.
"""

from __future__ import annotations

import csv
import json
import runpy
import shutil
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docx
import duckdb
import jinja2
import pytest
import yaml
from click.testing import CliRunner

from accord.cli import main
from tests.fakes import FakeOpenAI, Reply

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / "workflows"
EXAMPLES = sorted(WORKFLOWS.rglob("*.workflow.yml"))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def outputs(self) -> dict[str, Any]:
        assert self.exit_code == 0, f"exit {self.exit_code}\n{self.stderr}"
        return json.loads(self.stdout)["outputs"]  # type: ignore[no-any-return]


def accord(*args: str | Path) -> Run:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)


def project_root(workflow: Path) -> Path:
    """The folder holding the example's config.yml."""
    for folder in workflow.parents:
        if (folder / "config.yml").is_file():
            return folder
    raise AssertionError(f"{workflow} has no config.yml above it")


@pytest.fixture(scope="module")
def fake_model() -> Iterator[FakeOpenAI]:
    """A scripted model for the examples' agent tasks (the real local model is slow)."""
    server = FakeOpenAI()
    server.responder = lambda body: Reply(text="Revenue is up; the South leads.")
    yield server
    server.close()


def copy_project(workflow: Path, target: Path, model: FakeOpenAI | None = None) -> Path:
    """Copy the example's project folder under `target`; return the copied workflow.

    With `model`, the copy's config.yml makes that fake server the default model.
    """
    root = project_root(workflow)
    copy = target / root.name
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("output", ".accord", "__pycache__"))
    if model is not None:
        config_path = copy / "config.yml"
        config = yaml.safe_load(config_path.read_text()) or {}
        config["models"] = [
            {"name": "fake", "model": "openai/fake", "api_base": model.url, "api_key": "test"}
        ]
        config.setdefault("defaults", {})["model"] = "fake"
        config_path.write_text(yaml.safe_dump(config))
    return copy / workflow.relative_to(root)


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_three_examples_are_there() -> None:
    names = {p.relative_to(WORKFLOWS).as_posix() for p in EXAMPLES}
    assert {
        "sales_review/sales_review.workflow.yml",
        "loop_report/loop_report.workflow.yml",
        "subworkflow/parent.workflow.yml",
        "subworkflow/region_summary.workflow.yml",
    } <= names


@pytest.mark.slow
@pytest.mark.parametrize(
    "workflow", EXAMPLES, ids=[p.relative_to(WORKFLOWS).as_posix() for p in EXAMPLES]
)
def test_example_validates_and_runs(workflow: Path, tmp_path: Path) -> None:
    copied = copy_project(workflow, tmp_path)
    checked = accord("validate", copied)
    assert checked.exit_code == 0, checked.stderr
    run = accord("run", copied, "--format", "json")
    assert run.exit_code == 0, run.stderr
    document = json.loads(run.stdout)
    assert document["status"] == "succeeded"
    assert all(task["status"] == "succeeded" for task in document["tasks"])


# --- sales_review ------------------------------------------------------------------------

SALES = WORKFLOWS / "sales_review"


def sales_connection(data: Path) -> duckdb.DuckDBPyConnection:
    """DuckDB set up the way the dataset database is, for computing the expected figures."""
    conn = duckdb.connect()
    conn.execute(f"SET file_search_path = '{data}'")
    for name in ("sales", "regions"):
        conn.execute(f"CREATE VIEW {name} AS SELECT * FROM read_csv_auto('{data / name}.csv')")
    return conn


@pytest.fixture(scope="module")
def sales_run(
    tmp_path_factory: pytest.TempPathFactory, fake_model: FakeOpenAI
) -> tuple[Path, dict[str, Any]]:
    workflow = copy_project(
        SALES / "sales_review.workflow.yml", tmp_path_factory.mktemp("sr"), fake_model
    )
    run = accord("run", workflow, "--format", "json")
    return workflow.parent, run.outputs


def test_sales_data_is_generated_deterministically(tmp_path: Path) -> None:
    copy = tmp_path / "sales_review"
    shutil.copytree(SALES, copy, ignore=shutil.ignore_patterns("output", ".accord"))
    (copy / "data" / "sales.csv").unlink()
    runpy.run_path(str(copy / "generate_data.py"), run_name="__main__")
    for name in ("sales.csv", "regions.csv"):
        assert (copy / "data" / name).read_bytes() == (SALES / "data" / name).read_bytes()
    rows = read_csv(copy / "data" / "sales.csv")
    assert len(rows) == 2000
    assert set(rows[0]) >= {"order_date", "region", "product", "units", "revenue"}


def test_sales_exported_csv_equals_duckdb(sales_run: tuple[Path, dict[str, Any]]) -> None:
    root, outputs = sales_run
    template = (root / "queries" / "revenue_by_region.sql").read_text(encoding="utf-8")
    sql = jinja2.Template(template).render(year=2024)
    conn = sales_connection(root / "data")
    cursor = conn.execute(sql)
    columns = [d[0] for d in cursor.description]
    expected = [[str(v) for v in row] for row in cursor.fetchall()]
    with (root / "output" / "revenue_by_region.csv").open(newline="", encoding="utf-8") as f:
        exported = list(csv.reader(f))
    assert exported[0] == columns
    assert exported[1:] == expected
    assert outputs["by_region"] == [
        dict(zip(columns, r, strict=True)) for r in conn.execute(sql).fetchall()
    ]


def test_sales_revenue_matches_the_raw_csv(sales_run: tuple[Path, dict[str, Any]]) -> None:
    # An oracle independent of SQL: sum the generated CSV in Python.
    root, outputs = sales_run
    revenue: dict[str, float] = defaultdict(float)
    orders: dict[str, int] = defaultdict(int)
    for row in read_csv(root / "data" / "sales.csv"):
        if row["order_date"].startswith("2024-"):
            revenue[row["region"]] += float(row["revenue"])
            orders[row["region"]] += 1
    exported = read_csv(root / "output" / "revenue_by_region.csv")
    assert {r["region"]: float(r["revenue"]) for r in exported} == pytest.approx(
        {region: round(total, 2) for region, total in revenue.items()}
    )
    assert {r["region"]: int(r["orders"]) for r in exported} == orders
    assert [r["region"] for r in exported] == sorted(revenue, key=revenue.__getitem__, reverse=True)
    totals = outputs["totals"][0]
    assert totals["orders"] == sum(orders.values())
    assert totals["revenue"] == pytest.approx(round(sum(revenue.values()), 2))


def test_sales_loop_follows_the_region_order(sales_run: tuple[Path, dict[str, Any]]) -> None:
    root, outputs = sales_run
    regions = [row["region"] for row in outputs["by_region"]]
    details = outputs["region_details"]
    assert [item["value"] for item in details] == regions
    conn = sales_connection(root / "data")
    for item in details:
        assert len(item["top_products"]) == 3
        best = conn.execute(
            "SELECT product FROM sales WHERE region = ? AND year(order_date) = 2024 "
            "GROUP BY product ORDER BY SUM(revenue) DESC, product LIMIT 1",
            [item["value"]],
        ).fetchone()
        assert best is not None
        assert item["top_products"][0]["product"] == best[0]
        assert f"Best seller: **{best[0]}**" in item["region_summary"]
        page = (root / "output" / "regions" / f"{item['value']}.md").read_text(encoding="utf-8")
        assert page == item["region_summary"]


def test_sales_charts_and_word_report(sales_run: tuple[Path, dict[str, Any]]) -> None:
    root, outputs = sales_run
    svg = root / outputs["region_chart"]
    assert ET.parse(svg).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    assert (root / outputs["monthly_chart"]).read_bytes()[:8] == PNG_MAGIC
    assert outputs["growth_check"] == {
        "verdict": "Revenue grew 19.7% over 2023, meeting the 10% growth goal."
    }
    document = docx.Document(str(root / "output" / "sales_review.docx"))
    headings = [p.text for p in document.paragraphs if p.style.name.startswith("Heading")]
    assert headings[:4] == ["Sales review 2024", "Commentary", "Headline figures", "Regions"]
    assert "Revenue is up; the South leads." in "\n".join(p.text for p in document.paragraphs)
    assert set(headings) >= {f"{row['region']}" for row in outputs["by_region"]}
    text = "\n".join(p.text for p in document.paragraphs)
    assert outputs["growth_check"]["verdict"] in text
    assert "Revenue: 763,888.75 (average order 684.49)" in text  # the `number` filter
    assert len(document.inline_shapes) == 2  # both charts, the SVG one by its PNG twin
    region_table = document.tables[0]
    assert [c.text for c in region_table.rows[0].cells][:2] == ["region", "manager"]
    assert len(region_table.rows) == 1 + len(outputs["by_region"])


def test_sales_variables_from_the_command_line(tmp_path: Path, fake_model: FakeOpenAI) -> None:
    workflow = copy_project(SALES / "sales_review.workflow.yml", tmp_path, fake_model)
    earlier = accord("run", workflow, "--format", "json", "-v", "year=2023", "-v", "top_n=2")
    outputs = earlier.outputs
    assert outputs["growth_check"] == {"verdict": "No orders in 2022 to compare with."}
    assert all(len(item["top_products"]) == 2 for item in outputs["region_details"])
    conn = sales_connection(workflow.parent / "data")
    (orders,) = conn.execute("SELECT COUNT(*) FROM sales WHERE year(order_date) = 2023").fetchone()
    assert outputs["totals"][0]["orders"] == orders

    ambitious = accord("run", workflow, "--format", "json", "-v", "growth_goal=25")
    assert ambitious.outputs["growth_check"]["verdict"].startswith("Revenue changed 19.7%")

    invalid = accord("run", workflow, "-v", "year=2031")
    assert invalid.exit_code == 2
    assert "variable 'year'" in invalid.stderr


# --- loop_report -------------------------------------------------------------------------


def test_loop_report_nested_values(tmp_path: Path) -> None:
    workflow = copy_project(WORKFLOWS / "loop_report" / "loop_report.workflow.yml", tmp_path)
    outputs = accord("run", workflow, "--format", "json").outputs
    conn = duckdb.connect()
    tickets = workflow.parent / "data" / "tickets.csv"
    conn.execute(f"CREATE VIEW tickets AS SELECT * FROM read_csv_auto('{tickets}')")
    teams = [
        r[0]
        for r in conn.execute(
            "SELECT team FROM tickets GROUP BY team ORDER BY SUM(opened) DESC, team"
        ).fetchall()
    ]
    assert [item["value"] for item in outputs["per_team"]] == teams
    for team in outputs["per_team"]:
        assert [p["value"] for p in team["per_priority"]] == ["high", "medium", "low"]
        for priority in team["per_priority"]:
            (opened,) = conn.execute(
                "SELECT SUM(opened) FROM tickets WHERE team = ? AND priority = ?",
                [team["value"], priority["value"]],
            ).fetchone()
            assert priority["line"].startswith(f"{priority['value']}: {opened} opened")
            assert [r["month"] for r in priority["trend"]] == ["2024-01", "2024-02", "2024-03"]
    report = (workflow.parent / "output" / "loop_report.md").read_text(encoding="utf-8")
    assert [line for line in report.splitlines() if line.startswith("## ")] == [
        *(f"## {team}" for team in teams),
        "## By month",
    ]

    one_month = accord("run", workflow, "--format", "json", "-v", 'months=["2024-02"]').outputs
    opened, resolved = conn.execute(
        "SELECT SUM(opened), SUM(resolved) FROM tickets WHERE month = '2024-02'"
    ).fetchone()
    assert one_month["monthly"] == [
        {"value": "2024-02", "month_total": [{"opened": opened, "resolved": resolved}]}
    ]


# --- subworkflow -------------------------------------------------------------------------


def test_subworkflow_passes_typed_variables(tmp_path: Path) -> None:
    workflow = copy_project(WORKFLOWS / "subworkflow" / "parent.workflow.yml", tmp_path)
    outputs = accord("run", workflow, "--format", "json").outputs
    conn = duckdb.connect()
    orders = workflow.parent / "data" / "orders.csv"
    conn.execute(f"CREATE VIEW orders AS SELECT * FROM read_csv_auto('{orders}')")
    expected = conn.execute(
        "SELECT product, COUNT(*), SUM(units), SUM(units * price) FROM orders "
        "WHERE region = 'East' AND units >= 2 AND product <> 'Cable' "
        "GROUP BY product ORDER BY 4 DESC, product"
    ).fetchall()
    focus = outputs["focus_region"]["orders"]
    assert [tuple(row.values()) for row in focus] == [tuple(r) for r in expected]
    assert "(orders of at least 2 units)" in outputs["focus_region"]["summary"]
    assert [item["value"] for item in outputs["every_region"]] == [
        "North",
        "South",
        "East",
        "West",
    ]
    for item in outputs["every_region"]:
        (revenue,) = conn.execute(
            "SELECT SUM(units * price) FROM orders WHERE region = ?", [item["value"]]
        ).fetchone()
        assert item["region"]["summary"].startswith(f"{item['value']}: {revenue} in revenue")

    west = accord("run", workflow, "--format", "json", "-v", "focus=West").outputs
    assert west["focus_region"]["summary"].startswith("West: ")
    wrong = accord("run", workflow, "-v", "focus=Central")
    assert wrong.exit_code == 2
    assert "variable 'focus': 'Central' is not one of" in wrong.stderr
