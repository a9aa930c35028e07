"""Oxy's routing agents (`type: routing`): the model picks a route by a forced
`choose_route` call, and the route answers (an agent, a workflow, an SQL file, the fallback).
Routes accord cannot run are validation errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from accord.cli import main
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply

ROUTER = """\
model: fake
type: routing
routes:
  - agents/sales.agent.yml
  - workflows/*.workflow.yml
  - queries/*.sql
route_fallback: agents/default.agent.yml
"""


def with_route(route: str) -> str:
    return ROUTER.replace("  - queries/*.sql\n", f"  - queries/*.sql\n  - {route}\n")


def accord(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def project(tmp_path: Path, fake_llm: FakeOpenAI) -> Iterator[Path]:
    files = {
        "config.yml": "databases:\n  - name: local\n    type: duckdb\n    dataset: .db\n"
        "defaults:\n  database: local\n" + fake_model_config(fake_llm),
        ".db/sales.csv": "region,amount\nEU,10\nUS,50\n",
        "agents/sales.agent.yml": "model: fake\ndescription: Answers sales questions\n"
        "system_instructions: You are the sales analyst.\n",
        "agents/default.agent.yml": "model: fake\nsystem_instructions: You are the fallback.\n",
        "workflows/report.workflow.yml": "description: The regional report\ntasks:\n"
        "  - name: totals\n    type: execute_sql\n"
        "    sql_query: SELECT region, amount FROM sales ORDER BY region\n",
        "queries/total.sql": "SELECT SUM(amount) AS total FROM sales",
        "router.agent.yml": ROUTER,
        "ask.workflow.yml": "tasks:\n  - name: answer\n    type: agent\n"
        "    agent_ref: router.agent.yml\n    prompt: What were total sales?\n",
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    yield tmp_path


def script(fake: FakeOpenAI, route: str) -> list[dict[str, Any]]:
    """The router picks `route`; agents answer from their instructions."""
    seen: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> Reply:
        seen.append(body)
        system = str(body["messages"][0].get("content", ""))
        last = str(body["messages"][-1].get("content", ""))
        if body.get("tool_choice"):
            return Reply.tool("choose_route", {"reason": "it fits", "route": route})
        if "sales analyst" in system:
            return Reply(text="Sales were 60.")
        if "fallback" in system:
            return Reply(text="The fallback answers.")
        if "Its outputs" in last:
            return Reply(text="Summary: EU 10, US 50.")
        return Reply(text="unexpected")

    fake.responder = respond
    return seen


def answer(project: Path) -> Any:
    run = accord("run", project / "ask.workflow.yml", "--format", "json")
    assert run.exit_code == 0, run.output
    return json.loads(run.stdout)["outputs"]["answer"]


def test_agent_route_answers(project: Path, fake_llm: FakeOpenAI) -> None:
    seen = script(fake_llm, "sales_agent")
    assert "Sales were 60." in str(answer(project))
    choice = seen[0]
    assert choice["tool_choice"]["function"]["name"] == "choose_route"
    enum = choice["tools"][0]["function"]["parameters"]["properties"]["route"]["enum"]
    assert enum == ["sales_agent", "report_workflow", "total", "none"]
    assert "Answers sales questions" in choice["tools"][0]["function"]["description"]


def test_sql_route_returns_its_table(project: Path, fake_llm: FakeOpenAI) -> None:
    script(fake_llm, "total")
    assert "60" in str(answer(project))
    assert len(fake_llm.requests) == 1  # the choice only: the table is the answer


def test_workflow_route_is_summarised(project: Path, fake_llm: FakeOpenAI) -> None:
    seen = script(fake_llm, "report_workflow")
    assert "Summary: EU 10, US 50." in str(answer(project))
    assert "EU" in str(seen[-1]["messages"][-1]["content"])  # the outputs reached the model


def test_workflow_route_outputs_returned_without_synthesis(
    project: Path, fake_llm: FakeOpenAI
) -> None:
    (project / "router.agent.yml").write_text(ROUTER + "synthesize_results: false\n")
    script(fake_llm, "report_workflow")
    text = str(answer(project))
    assert "US" in text and "50" in text
    assert len(fake_llm.requests) == 1


def test_no_route_takes_the_fallback(project: Path, fake_llm: FakeOpenAI) -> None:
    script(fake_llm, "none")
    assert "The fallback answers." in str(answer(project))


def test_no_route_without_fallback_gives_the_reason(project: Path, fake_llm: FakeOpenAI) -> None:
    (project / "router.agent.yml").write_text(ROUTER.replace("route_fallback", "# x"))
    script(fake_llm, "none")
    assert "it fits" in str(answer(project))


def test_a_choice_outside_the_routes_is_asked_again_then_fails(
    project: Path, fake_llm: FakeOpenAI
) -> None:
    script(fake_llm, "weather_agent")
    run = accord("run", project / "ask.workflow.yml")
    assert run.exit_code == 1
    assert "did not choose a route" in run.output and "weather_agent" in run.output
    assert len(fake_llm.requests) == 2


def test_a_reply_naming_no_route_is_asked_again_then_fails(
    project: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.responder = lambda body: Reply(text="I am not sure.")
    run = accord("run", project / "ask.workflow.yml")
    assert run.exit_code == 1
    assert "model 'fake' did not choose a route: no choice (reply: 'I am not sure.')" in run.output
    assert len(fake_llm.requests) == 2
    assert [r["tool_choice"]["function"]["name"] for r in fake_llm.requests] == ["choose_route"] * 2


def test_routing_agent_validates(project: Path) -> None:
    run = accord("validate", project / "router.agent.yml")
    assert run.exit_code == 0, run.output
    assert "routing agent" in run.output


@pytest.mark.parametrize(
    ("route", "message"),
    [
        ("semantics/users.topic.yml", "route 'semantics/users.topic.yml': the topic does not load"),
        ("notes/readme.md", "not an agent, workflow, procedure, SQL or topic file"),
    ],
)
def test_unsupported_routes_are_reported(project: Path, route: str, message: str) -> None:
    (project / "semantics").mkdir()
    (project / "semantics/users.topic.yml").write_text("name: users\n")
    (project / "notes").mkdir()
    (project / "notes/readme.md").write_text("hi\n")
    (project / "router.agent.yml").write_text(with_route(json.dumps(route)))
    run = accord("validate", project / "router.agent.yml")
    assert run.exit_code == 2
    assert message in run.output
    assert "router.agent.yml:7:5 route" in run.output  # the line of the route
    assert "Traceback" not in run.output


@pytest.mark.parametrize(
    ("route", "message"),
    [
        ("oxy_omni::Hire", "route 'oxy_omni::Hire': Oxy's integration routes"),
        ("agents/missing.agent.yml", "route 'agents/missing.agent.yml': file not found"),
        ("nothing/*.sql", "route 'nothing/*.sql': no file matches it"),
    ],
)
def test_routes_oxy_leaves_out_are_named_at_their_line_without_failing(
    project: Path, route: str, message: str
) -> None:
    """Oxy's validate passes over these (examples/agents/_routing.agent.yml has two): the
    route is named at its line and not offered to the model."""
    (project / "router.agent.yml").write_text(with_route(json.dumps(route)))
    run = accord("validate", project / "router.agent.yml")
    assert run.exit_code == 0, run.output
    assert f"line 7: {message}" in run.stdout and "; not offered to the model" in run.stdout
    assert accord("validate", project / "ask.workflow.yml").exit_code == 0


def test_routing_agent_needs_routes(project: Path) -> None:
    (project / "router.agent.yml").write_text("model: fake\ntype: routing\n")
    run = accord("validate", project / "router.agent.yml")
    assert run.exit_code == 2
    assert "router.agent.yml:" in run.output and "needs 'routes'" in run.output


def test_routing_agent_in_a_workflow_validates_its_routes(project: Path) -> None:
    (project / "notes").mkdir()
    (project / "notes/readme.md").write_text("hi\n")
    (project / "router.agent.yml").write_text(with_route("notes/readme.md"))
    run = accord("validate", project / "ask.workflow.yml")
    assert run.exit_code == 2
    assert "ask.workflow.yml:" in run.output and "notes/readme.md" in run.output


def test_a_topic_route_queries_the_semantic_layer(project: Path, fake_llm: FakeOpenAI) -> None:
    (project / "semantics").mkdir()
    (project / "semantics/sales.view.yml").write_text(
        "name: sales\ndatasource: local\ntable: sales.csv\n"
        "entities:\n  - {name: sale, type: primary, key: region}\n"
        "dimensions:\n  - {name: region, type: string, expr: region}\n"
        "measures:\n  - {name: total, type: sum, expr: amount}\n"
    )
    (project / "semantics/shop.topic.yml").write_text("name: shop\nviews: [sales]\n")
    (project / "router.agent.yml").write_text(with_route("semantics/shop.topic.yml"))
    seen: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> Reply:
        seen.append(body)
        if body.get("tool_choice"):
            return Reply.tool("choose_route", {"reason": "data", "route": "shop_topic"})
        tools = [m for m in body["messages"] if m["role"] == "tool"]
        if not tools:
            return Reply.tool("shop_topic", {"measures": ["sales.total"]})
        return Reply(text=f"From the topic: {tools[-1]['content'].strip()[-20:]}")

    fake_llm.responder = respond
    run = accord("run", project / "ask.workflow.yml", "--format", "json")
    assert run.exit_code == 0, run.output
    answer = json.loads(run.stdout)["outputs"]["answer"]
    assert "60" in answer  # SUM(amount) over the view's table, by the semantic query
    assert any(t["function"]["name"] == "shop_topic" for b in seen for t in b.get("tools") or [])


def test_a_workflow_route_that_needs_a_variable_is_reported(project: Path) -> None:
    (project / "workflows/monthly.workflow.yml").write_text(
        "variables:\n  month: {type: integer}\ntasks:\n"
        "  - {name: m, type: formatter, template: '{{ month }}'}\n"
    )
    run = accord("validate", project / "router.agent.yml")
    assert run.exit_code == 2
    assert "the workflow needs variable 'month' (it has no default)" in run.output
