"""The semantic layer on a project of our own: filters, orders, time granularity; validate's
file:line messages for views, topics and queries; the Oxy files accord does not support; the
`semantic_query` agent tool with a scripted model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply
from tests.semantic.harness import accord, by_hand, project, workflow


def test_filters_orders_and_month_granularity_through_two_joins(tmp_path: Path) -> None:
    root = project(tmp_path)
    path = workflow(
        root,
        """    measures: [sales.revenue, sales.big_sales]
    dimensions: [regions.label]
    time_dimensions: [{dimension: sales.day, granularity: month}]
    filters:
      - {field: stores.store_name, op: contains, value: shop}
      - {field: sales.revenue, op: gte, value: "{{ 5 + 2 }}"}
    orders: [{field: sales.revenue, direction: desc}]
    limit: 3
""",
    )
    result = accord("run", path, "--format", "json")
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)["outputs"]["q"]
    assert list(rows[0]) == [
        "regions__label",
        "sales__day__month",
        "sales__revenue",
        "sales__big_sales",
    ]
    expected = by_hand(
        root,
        """
        SELECT r.label, date_trunc('month', s.day), SUM(s.amount),
               COUNT(CASE WHEN s.amount >= 10 THEN 1 END)
        FROM 'sales.csv' s LEFT JOIN 'stores.csv' t ON s.store_id = t.id
        LEFT JOIN 'regions.csv' r ON t.region_id = r.id
        WHERE t.name LIKE '%shop%' GROUP BY 1, 2 HAVING SUM(s.amount) >= 7
        ORDER BY 3 DESC LIMIT 3
        """,
    )
    assert [[r[c] for c in r] for r in rows] == [
        [a, b.isoformat(), c, d] for a, b, c, d in expected
    ]


def test_validate_reports_views_and_queries_with_file_and_line(tmp_path: Path) -> None:
    root = project(tmp_path)
    bad = root / "semantics" / "bad.view.yml"
    bad.write_text(
        """name: bad
table: sales.csv
entities:
  - {name: thing, type: primary, key: nothing}
dimensions:
  - {name: price, type: number}
  - {name: a, expr: "{{b}} + 1"}
  - {name: b, expr: "{{a}} + 1"}
measures:
  - {name: total, type: sum, expr: "{{missing}}"}
"""
    )
    query = workflow(root, "    measures: [sales.revenu]\n    dimensions: [stores.store_name]\n")
    result = accord("validate", bad, query, root / "semantics/shop.topic.yml")
    assert result.exit_code == 2
    err = result.stderr
    assert f"{bad}:4:" in err and "key 'nothing' is not a dimension of the view" in err
    assert f"{bad}:6:" in err and "column 'price' is not in sales.csv" in err
    assert "cycle" in err and f"{bad}:10:" in err and "{{missing}} names no dimension" in err
    assert f"{query}:5:" in err and "view 'sales' has no measure 'revenu'" in err
    assert "ok: " in result.stdout and "shop.topic.yml (topic, 3 views)" in result.stdout


def test_ambiguous_and_impossible_joins_are_named(tmp_path: Path) -> None:
    root = project(tmp_path)
    # sales -> stores -> regions, and now also sales -> depots -> regions: equally short
    (root / ".db" / "depots.csv").write_text("id,region_id\n1,1\n")
    (root / "semantics" / "depots.view.yml").write_text(
        "name: depots\ntable: depots.csv\nentities:\n  - {name: depot, type: primary, key: id}\n"
        "  - {name: region, type: foreign, key: region_id}\n"
        "dimensions:\n  - {name: id, type: number}\n  - {name: region_id, type: number}\n"
    )
    sales = (root / "semantics" / "sales.view.yml").read_text()
    (root / "semantics" / "sales.view.yml").write_text(
        sales.replace(
            "  - {name: store, type: foreign, key: store_id}\n",
            "  - {name: store, type: foreign, key: store_id}\n"
            "  - {name: depot, type: foreign, key: store_id}\n",
        )
    )
    (root / "semantics" / "lonely.view.yml").write_text(
        "name: lonely\ntable: regions.csv\ndimensions:\n  - {name: label}\n"
    )
    topic = root / "semantics" / "shop.topic.yml"
    topic.write_text("name: shop\nviews: [sales, stores, regions, depots, lonely]\n")
    result = accord("validate", topic)
    assert result.exit_code == 2
    assert f"{topic}:2:" in result.stderr
    assert "ambiguous join from view 'sales' to view 'regions'" in result.stderr
    assert "sales -> stores -> regions and sales -> depots -> regions" in result.stderr
    ambiguous = workflow(root, "    measures: [sales.revenue]\n    dimensions: [regions.label]\n")
    assert "ambiguous join" in accord("run", ambiguous).stderr
    lonely = workflow(root, "    measures: [sales.revenue]\n    dimensions: [lonely.label]\n")
    result = accord("run", lonely)
    assert result.exit_code != 0
    assert "view 'lonely' cannot be joined to view 'sales'" in result.stderr


def test_unsupported_oxy_files_are_named_and_the_others_still_validate(tmp_path: Path) -> None:
    root = project(tmp_path)
    flow = root / "flow.aw.yml"
    flow.write_text("start: x\n")
    result = accord("validate", flow, root / "semantics/sales.view.yml")
    assert result.exit_code == 0, result.stderr
    assert f"{flow}:1: Oxy agentic workflows (.aw.yml) are not supported" in result.stderr
    assert "ok: " in result.stdout and "sales.view.yml (view, 3 dimensions" in result.stdout


AGENT = """model: fake
system_instructions: You answer with data.
tools:
  - {name: shop_query, type: semantic_query, topic: shop}
  - {name: app, type: create_data_app}
"""


def test_agent_picks_measures_and_dimensions(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    root = project(tmp_path, fake_model_config(fake_llm))
    (root / "main.agent.yml").write_text(AGENT)
    path = root / "w.workflow.yml"
    path.write_text("tasks:\n  - {name: ask, type: agent, agent_ref: main.agent.yml, prompt: go}\n")
    script = [
        Reply.tool("shop_query", {"measures": ["sales.profit"]}),
        Reply.tool(
            "shop_query",
            {
                "measures": ["sales.revenue"],
                "dimensions": ["stores.store_name"],
                "orders": [{"field": "sales.revenue", "direction": "desc"}],
            },
        ),
    ]

    def respond(body: dict[str, Any]) -> Reply:
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        return script[done] if done < len(script) else Reply(text="North shop sells most.")

    fake_llm.responder = respond
    validated = accord("validate", root / "main.agent.yml")
    assert validated.exit_code == 0, validated.stderr
    assert "the data-app tool (create_data_app) is not supported" in validated.stdout
    result = accord("run", path, "--format", "json")
    assert result.exit_code == 0, result.stderr
    tools = fake_llm.requests[0]["tools"]
    offered = next(t["function"] for t in tools if t["function"]["name"] == "shop_query")
    measures = offered["parameters"]["properties"]["measures"]["items"]["enum"]
    assert measures == ["sales.revenue", "sales.sales_count", "sales.big_sales"]
    results = [
        r["messages"][-1]["content"]
        for r in fake_llm.requests
        if r["messages"][-1]["role"] == "tool"
    ]
    assert results[0].startswith("error: 'sales.profit': view 'sales' has no measure 'profit'")
    assert results[1].splitlines()[2:] == ["| North shop | 37 |", "| South shop | 45 |"][::-1]
    assert json.loads(result.stdout)["outputs"]["ask"] == "North shop sells most."


def test_unknown_topic_of_an_agent_tool_is_a_validate_error(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "a.agent.yml").write_text(
        "system_instructions: hi\ntools:\n  - {type: semantic_query, topic: shopp}\n"
    )
    result = accord("validate", root / "a.agent.yml")
    assert result.exit_code == 2
    assert f"{root / 'a.agent.yml'}:3:" in result.stderr
    assert "unknown topic 'shopp' (topics: shop)" in result.stderr


def test_oxy_tools_accord_does_not_have_are_named(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "a.agent.yml").write_text(
        "system_instructions: hi\ntools:\n  - {name: build, type: dbt_run}\n"
        "  - {name: app, type: create_data_app}\n  - {name: look, type: looker_query}\n"
    )
    result = accord("validate", root / "a.agent.yml")
    assert result.exit_code == 0, result.stderr
    said = result.stdout + result.stderr
    assert "line 3: the dbt tool (dbt_run) is not supported" in said
    assert "line 4: the data-app tool (create_data_app) is not supported" in said
    assert "line 5: the Looker tool (looker_query) is not supported" in said


def test_resume_runs_a_query_again_when_its_views_changed(tmp_path: Path) -> None:
    root = project(tmp_path)
    path = workflow(root, "    measures: [sales.revenue]\n")
    first = accord("run", path, "--format", "json")
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["outputs"]["q"][0]["sales__revenue"] == 82
    same = accord("run", path, "--format", "json", "--resume", "last")
    assert json.loads(same.stdout)["summary"]["stats"].get("reused") == 1  # unchanged: reused
    view = root / "semantics" / "sales.view.yml"
    view.write_text(view.read_text().replace("expr: amount}", "expr: amount * 2}"))
    edited = accord("run", path, "--format", "json", "--resume", "last")
    doc = json.loads(edited.stdout)
    assert doc["outputs"]["q"][0]["sales__revenue"] == 164  # the edited view, not the old rows
    assert not doc["summary"]["stats"].get("reused")
