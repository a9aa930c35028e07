"""workflows/ci_checks: its workflow, agent and case-file tests, run against a scripted model.

The example itself uses the offline `local` model; the copy made here gets a config.yml
whose default model is the fake server, so the figures are known.
"""

from __future__ import annotations

import re
import shlex
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import duckdb
import pytest
import yaml

from tests.commands.conftest import accord_test, numbers
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply

EXAMPLE = Path(__file__).resolve().parents[2] / "workflows" / "ci_checks"
DATABASE = "databases:\n  - name: shop\n    type: duckdb\n    dataset: data\n"


def figures() -> dict[str, float]:
    conn = duckdb.connect()
    conn.execute(f"CREATE VIEW orders AS SELECT * FROM read_csv_auto('{EXAMPLE}/data/orders.csv')")
    by_region = dict(conn.execute("SELECT region, SUM(amount) FROM orders GROUP BY 1").fetchall())
    (total,) = conn.execute("SELECT SUM(amount) FROM orders").fetchone()  # type: ignore[misc]
    (east,) = conn.execute("SELECT COUNT(*) FROM orders WHERE region = 'East'").fetchone()  # type: ignore[misc]
    return {**by_region, "total": total, "east_orders": east}


def responder(body: dict[str, object]) -> Reply:
    """Answers from the data, and both judges comparing the numbers of two texts."""
    messages = body["messages"]
    assert isinstance(messages, list)
    users = [m for m in messages if m.get("role") == "user"]
    text = str(users[-1]["content"])
    facts = figures()
    judged = re.search(r"Answer 1:\n(.*?)\n\nAnswer 2:\n(.*?)\n\nTreat these", text, re.S)
    if judged:
        same = numbers(judged.group(1)) == numbers(judged.group(2))
        return Reply(text=f"Same figures: {same}.\n{'A' if same else 'B'}")
    graded = re.search(r"Expected answer:\n(.*?)\n\nAnswer given:\n(.*?)\n\nThe answer", text, re.S)
    if graded:
        same = numbers(graded.group(1)) == numbers(graded.group(2))
        return Reply(text=f"Same figures: {same}.\n{'PASS' if same else 'FAIL'}")
    if "most revenue" in text:
        return Reply(text=f"East had the most revenue: {facts['East']:.0f}.")
    if "least revenue" in text:
        return Reply(text=f"West had the least revenue, {facts['West']:.0f}.")
    if "total revenue" in text:
        if messages[-1].get("role") == "user":  # type: ignore[union-attr]
            return Reply.tool("execute_sql", {"sql": "SELECT SUM(amount) FROM orders"})
        return Reply(text=f"The total revenue was {facts['total']:.0f}.")
    if "East region" in text:
        return Reply(text=f"{facts['east_orders']} orders came from the East.")
    return Reply(text="unexpected prompt")


@pytest.fixture
def example(tmp_path: Path, fake_llm: FakeOpenAI) -> Path:
    copy = tmp_path / "ci_checks"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns(".accord", "output"))
    config = fake_model_config(fake_llm) + "defaults:\n  model: fake\n" + DATABASE
    (copy / "config.yml").write_text(config, encoding="utf-8")
    fake_llm.responder = responder
    return copy


def test_workflow_tests(example: Path, fake_llm: FakeOpenAI) -> None:
    workflow = example / "ci_checks.workflow.yml"
    args = ("--format", "json", "--min-accuracy", "0.8", "--report", example / "report.html")
    run = accord_test(workflow, *args)
    assert run.exit_code == 0, run.stderr
    doc = run.doc
    assert doc["accuracy"] == [1.0, 1.0, 1.0]
    assert doc["accuracy_n"] == [3, 10, 2]
    assert doc["recall"] == [1.0]  # the workflow ran the reference SQL
    assert doc["summary"]["judge_calls"] == 0  # identical or pre-judged answers only
    agent_calls = [r for r in fake_llm.requests if "Answer in one sentence" in str(r)]
    assert len(agent_calls) == 5 + 2  # the headline test called no model at all
    html = (example / "report.html").read_text(encoding="utf-8")
    assert "questions about revenue" in html and "lowest_region" in html


def test_agent_and_case_file_tests(example: Path) -> None:
    agent = accord_test(example / "analyst.agent.yml", "--format", "json")
    assert agent.exit_code == 0, agent.stderr
    assert agent.doc["accuracy"] == 1.0 and agent.doc["accuracy_n"] == 10
    cases = accord_test(example / "revenue.test.yml", "--format", "junit")
    assert cases.exit_code == 0, cases.stderr
    assert cases.stdout.count("<testcase") == 3 and "<failure" not in cases.stdout
    smoke = accord_test(example / "revenue.test.yml", "--tag", "smoke", "--quiet")
    assert "Accuracy: 100.00% (1 answers" in smoke.stdout


def docs_commands(name: str = "docs/testing.md") -> list[list[str]]:
    """The `accord test` command lines of the GitHub Actions snippet in a document."""
    docs = (Path(__file__).resolve().parents[2] / name).read_text()
    blocks = [b.split("```", 1)[0] for b in docs.split("```yaml")[1:]]
    (workflow,) = [yaml.safe_load(b) for b in blocks if "jobs:" in b]
    steps = next(iter(workflow["jobs"].values()))["steps"]
    commands = []
    for step in steps:
        for line in str(step.get("run", "")).replace("\\\n", " ").splitlines():
            if line.strip().startswith("accord test"):
                commands.append(shlex.split(line.split(">", 1)[0])[2:])
    return commands


def test_the_docs_github_actions_commands_work(example: Path) -> None:
    commands = docs_commands()
    assert len(commands) == 2
    for args in commands:
        local = [a.replace("workflows/ci_checks/", f"{example}/") for a in args]
        local = [str(example / a) if a.endswith((".html", ".xml")) else a for a in local]
        run = accord_test(*local)
        assert run.exit_code == 0, (args, run.stderr)
    assert (example / "accord-report.html").is_file()
    assert ET.parse(example / "junit.xml").getroot().tag == "testsuites"


def test_the_readme_github_actions_command_passes_on_a_good_model(example: Path) -> None:
    (args,) = docs_commands("README.md")
    local = [a.replace("workflows/ci_checks/", f"{example}/") for a in args]
    local = [str(example / a) if a.endswith((".html", ".xml")) else a for a in local]
    run = accord_test(*local)
    assert run.exit_code == 0, (args, run.stderr)
    assert ET.parse(example / "results.xml").getroot().tag == "testsuites"
    page = (example / "accord.html").read_text(encoding="utf-8")
    assert "Gate: --min-accuracy 0.8, threshold mode all, gate mean: passed" in page


def test_the_html_report_shows_a_failed_gate(example: Path) -> None:
    workflow = example / "ci_checks.workflow.yml"
    report = example / "gate.html"
    args = ("--min-accuracy", "0.8", "--gate", "lower-bound", "--report", report, "--quiet")
    run = accord_test(workflow, *args)
    assert run.exit_code == 1
    page = report.read_text(encoding="utf-8")
    rule = "--min-accuracy 0.8, threshold mode average, gate lower-bound"
    assert f'class="gate bad">Gate: {rule}: FAILED: Average accuracy lower bound' in page
    plain = example / "plain.html"
    accord_test(workflow, "--report", plain, "--quiet")
    assert "Gate: none (no --min-accuracy given)" in plain.read_text(encoding="utf-8")
