"""The agent's validate_sql, workflow and agent tools, through the real tool-calling path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from accord.cli import main
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply

AGENT = """
model: fake
system_instructions: You answer with data.
tools:
  - {name: check, type: validate_sql, database: local}
  - name: regional
    type: workflow
    workflow_ref: regional.workflow.yml
    description: Total sales of one region.
    output_task_ref: total
  - {name: helper, type: agent, agent_ref: helper.agent.yml, description: Ask the helper.}
"""

HELPER = "model: fake\nsystem_instructions: You are the helper agent.\n"

REGIONAL = """
variables:
  region: {type: string, enum: [EU, US]}
tasks:
  - name: total
    type: execute_sql
    sql_query: SELECT SUM(amount) AS total FROM sales WHERE region = {{ region | sqlquote }}
"""

TASK = "tasks:\n  - name: ask\n    type: agent\n    agent_ref: main.agent.yml\n    prompt: go\n"


def setup(tmp_path: Path, fake: FakeOpenAI) -> Path:
    (tmp_path / ".db").mkdir()
    (tmp_path / ".db" / "sales.csv").write_text("region,amount\nEU,10\nUS,20\nEU,5\n")
    (tmp_path / "config.yml").write_text(
        fake_model_config(fake) + "databases:\n  - {name: local, type: duckdb, dataset: .db}\n"
    )
    (tmp_path / "main.agent.yml").write_text(AGENT)
    (tmp_path / "helper.agent.yml").write_text(HELPER)
    (tmp_path / "regional.workflow.yml").write_text(REGIONAL)
    path = tmp_path / "w.workflow.yml"
    path.write_text(TASK)
    return path


def tool_results(fake: FakeOpenAI) -> list[str]:
    out = []
    for request in fake.requests:
        last = request["messages"][-1]
        if last["role"] == "tool":
            out.append(last["content"])
    return out


def test_validate_workflow_and_agent_tools(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        system = body["messages"][0]["content"]
        if "helper agent" in system:
            return Reply(text="helper says hi")
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        script = [
            Reply.tool("check", {"sql": "SELECT region FROM sales"}),
            Reply.tool("check", {"sql": "SELEC nonsense"}),
            Reply.tool("regional", {"region": "EU"}),
            Reply.tool("regional", {"region": "Mars"}),
            Reply.tool("helper", {"prompt": "hello?"}),
        ]
        return script[done] if done < len(script) else Reply(text="all done")

    fake_llm.responder = respond
    path = setup(tmp_path, fake_llm)
    result = CliRunner().invoke(main, ["run", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["outputs"]["ask"] == "all done"
    results = tool_results(fake_llm)
    assert results[0] == "valid"
    assert results[1].startswith("error:") and "SELEC" in results[1]
    assert "15" in results[2]  # the sub-workflow's `total` output for EU
    assert results[3].startswith("error:") and "Mars" in results[3]
    assert results[4] == "helper says hi"
    schemas = {t["function"]["name"]: t["function"] for t in fake_llm.requests[0]["tools"]}
    assert set(schemas) == {"check", "regional", "helper"}
    assert schemas["regional"]["parameters"]["properties"]["region"]["enum"] == ["EU", "US"]
    assert schemas["regional"]["parameters"]["required"] == ["region"]


def test_oxy_only_names_render_empty_with_a_warning_others_fail(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    path = setup(tmp_path, fake_llm)
    (tmp_path / "main.agent.yml").write_text(
        "model: fake\nsystem_instructions: 'Tools: [{{ tools.retrieval }}] "
        "{{ databases.local.datasets.main.semantic_info.dim_users }}'\n"
    )
    fake_llm.script("fine")
    ok = CliRunner().invoke(main, ["run", str(path), "--format", "json"])
    assert ok.exit_code == 0, ok.output
    assert fake_llm.requests[0]["messages"][0]["content"] == "Tools: [] "
    assert "oxy_name_unavailable" in ok.stderr and "tools" in ok.stderr
    (tmp_path / "main.agent.yml").write_text("model: fake\nsystem_instructions: '{{ nope }}'\n")
    bad = CliRunner().invoke(main, ["validate", str(path)])
    assert bad.exit_code == 2 and "unknown name 'nope'" in bad.stderr
    assert "main.agent.yml" in bad.stderr


def test_sub_agent_calls_belong_to_the_caller_sample(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    # consistency_run: 2 asks the main agent twice; each sample's helper call is a call of
    # that sample, so the second is not answered from the first one's cache entry (one task
    # at a time: the first sample has written its entries when the second asks)
    def respond(body: dict[str, Any]) -> Reply:
        if "helper agent" in body["messages"][0]["content"]:
            return Reply(text="helper says hi")
        if any(m["role"] == "tool" for m in body["messages"]):
            return Reply(text="all done")
        return Reply.tool("helper", {"prompt": "hello?"})

    fake_llm.responder = respond
    path = setup(tmp_path, fake_llm)
    path.write_text(TASK + "    consistency_run: 2\n")
    args = ["run", str(path), "--format", "json", "--max-concurrency", "1"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    helper_calls = [r for r in fake_llm.requests if "helper agent" in r["messages"][0]["content"]]
    assert len(helper_calls) == 2


def test_anonymize_hides_words_from_the_model_and_restores_its_sql_and_answer(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    import re

    path = setup(tmp_path, fake_llm)
    (tmp_path / "main.agent.yml").write_text(
        "model: fake\nsystem_instructions: Answer about each region.\n"
        "tools:\n  - {name: query, type: execute_sql, database: local}\n"
        "anonymize:\n  type: flash_text\n  mapping_file: map.csv\n  keywords_file: words.txt\n"
        "  pluralize: true\n"
    )
    (tmp_path / "map.csv").write_text("region,zone\n")
    (tmp_path / "words.txt").write_text("EU\n")
    path.write_text(TASK.replace("prompt: go", "prompt: What did EU sell, by region?"))

    def respond(body: dict[str, Any]) -> Reply:
        results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
        if not results:
            sql = "SELECT zone, SUM(amount) AS total FROM sales WHERE zone = 'FLASH0' GROUP BY 1"
            return Reply.tool("query", {"sql": sql})
        total = results[-1].splitlines()[-1].split("|")[2].strip()
        return Reply(text=f"FLASH0 sold {total} across zones.")

    fake_llm.responder = respond
    result = CliRunner().invoke(main, ["run", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    outputs = json.loads(result.stdout)["outputs"]
    assert outputs["ask"] == "EU sold 15 across regions."
    sent = json.dumps(fake_llm.requests)
    assert not re.search(r"\bEU\b|region", sent), "a hidden word reached the model"
    first = fake_llm.requests[0]["messages"]
    assert first[0]["content"] == "Answer about each zone."
    assert first[1]["content"] == "What did FLASH0 sell, by zone?"
    assert tool_results(fake_llm) == ["| zone | total |\n|---|---|\n| FLASH0 | 15 |"]


def test_a_missing_anonymize_file_fails_validation(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    path = setup(tmp_path, fake_llm)
    (tmp_path / "main.agent.yml").write_text(
        "model: fake\nanonymize: {type: flash_text, mapping_file: data/nope.csv}\n"
    )
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 2
    assert "anonymize file 'data/nope.csv'" in result.stderr and "not found" in result.stderr


def test_agent_file_references_are_checked_by_validate(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    path = setup(tmp_path, fake_llm)
    (tmp_path / "main.agent.yml").write_text(
        "model: fake\n"
        "context:\n  - {name: notes, src: [docs/missing.md]}\n"
        "tools:\n"
        "  - {type: execute_sql, database: nope}\n"
        "  - {name: sub, type: workflow, workflow_ref: nope.workflow.yml}\n"
        "  - {type: agent, agent_ref: nope.agent.yml}\n"
    )
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 2
    err = result.stderr
    assert "agent file 'main.agent.yml': context[0] 'notes': no file matches" in err
    assert "docs/missing.md" in err
    assert "tools[0] (execute_sql): unknown database 'nope' (databases: local)" in err
    assert "tools[1] (sub): file 'nope.workflow.yml' not found" in err
    assert "tools[2] (agent): file 'nope.agent.yml' not found" in err
    # the run refuses the same way, before any model call
    ran = CliRunner().invoke(main, ["run", str(path)])
    assert ran.exit_code == 2 and fake_llm.requests == []


def test_reaching_max_tool_calls_names_the_limit(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    # it said "returned no text"
    path = setup(tmp_path, fake_llm)
    (tmp_path / "main.agent.yml").write_text(AGENT + "max_tool_calls: 2\n")
    fake_llm.responder = lambda body: Reply.tool("check", {"sql": "SELECT 1"})
    result = CliRunner().invoke(main, ["run", str(path), "--cache", "off"])
    assert result.exit_code == 1
    assert "reached max_tool_calls (2) without answering" in result.stderr


CHART_AGENT = """
model: fake
system_instructions: You answer with data.
tools:
  - {name: sql, type: execute_sql, database: local}
  - {name: chart, type: visualize}
"""


def test_visualize_tool_draws_the_last_query_and_lists_the_file(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    import xml.etree.ElementTree as ET

    def respond(body: dict[str, Any]) -> Reply:
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        script = [
            Reply.tool("chart", {"x": "region", "y": "total"}),  # nothing queried yet
            Reply.tool("sql", {"sql": "SELECT region, SUM(amount) AS total FROM sales GROUP BY 1"}),
            Reply.tool("chart", {"chart": "bar", "x": "region", "y": "total", "title": "Totals"}),
            Reply.tool("chart", {"x": "region", "y": "revenue"}),
            Reply.tool("chart", {"chart": "donut", "x": "region", "y": "total"}),
        ]
        return script[done] if done < len(script) else Reply(text="see the chart")

    fake_llm.responder = respond
    path = setup(tmp_path, fake_llm)
    (tmp_path / "main.agent.yml").write_text(CHART_AGENT)
    validated = CliRunner().invoke(main, ["validate", str(tmp_path / "main.agent.yml")])
    assert validated.exit_code == 0 and "not supported" not in validated.output
    result = CliRunner().invoke(main, ["run", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    results = tool_results(fake_llm)
    assert results[0].startswith("error: no table to draw yet")
    assert results[2].startswith("chart written to .accord/runs/")
    relative = results[2].split(" ")[3]
    assert relative.endswith("/charts/ask.chart.0.1.svg")
    svg = tmp_path / relative
    assert ET.parse(svg).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    assert "Totals" in svg.read_text(encoding="utf-8")
    assert results[3] == "error: no column 'revenue' in the data (columns: region, total)"
    assert results[4].startswith("error: chart: Input should be 'bar', 'line'")
    files = json.loads(result.stdout)["summary"]["files"]
    assert str(svg) in files
    schema = {t["function"]["name"]: t["function"] for t in fake_llm.requests[0]["tools"]}
    assert schema["chart"]["parameters"]["required"] == ["x", "y"]


# every test here runs through both paths of an `openai/` model (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("model_path")
