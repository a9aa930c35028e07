"""The telemetry tests' project (a workflow with a SQL task, a loop, an agent with a tool
and a consistency run, and an eval suite whose target is a program), its fake model's
replies, and what the tests read of a trace and of the run store."""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from tests.fakes import Reply
from tests.faults.helpers import Finished, accord, assert_no_traceback
from tests.telemetry.receiver import Span

SECRET = "sk-telemetry-secret-4242"

WORKFLOW = """\
tasks:
  - name: totals
    type: execute_sql
    database: shop
    sql_query: SELECT region, SUM(units) AS units FROM sales GROUP BY region ORDER BY region
  - name: each
    type: loop_sequential
    values: [East, West]
    tasks:
      - name: line
        type: formatter
        template: "region {{ value }}"
  - name: ask
    type: agent
    agent_ref: analyst.agent.yml
    prompt: "Which region sold most? My key is SECRET"
  - name: best
    type: agent
    model: fake
    prompt: "Pick the best region of {{ totals }}"
    consistency_run: 2
    consistency_prejudge: "off"
""".replace("SECRET", SECRET)
AGENT = "model: fake\ntools:\n  - {name: run_sql, type: execute_sql, database: shop}\n"
SUITE = """\
target: {type: command, command: [%s, answer.py]}
evaluators:
  - {type: contains, value: "42"}
  - {type: regex, pattern: "^answer"}
cases:
  - {id: six, input: what is six times seven}
  - {id: nine, input: and nine}
"""
ANSWER = (
    "import json, sys\ncase = json.load(sys.stdin)\n"
    "print('answer 42' if 'six' in case['input'] else 'answer 9')\n"
)


SAMPLES = itertools.count()


def respond(body: dict[str, Any]) -> Reply:
    messages = body["messages"]
    if body.get("tool_choice"):  # the consistency judge's forced choice
        return Reply.tool("select_answer", {"reason": "clearer", "answer": "A"})
    if body.get("tools") and not any(m["role"] == "tool" for m in messages):
        return Reply.tool("run_sql", {"sql": "SELECT SUM(units) AS total FROM sales"})
    if "Pick the best" in messages[-1]["content"]:
        # two samples that no clustering merges: the judge compares them
        return Reply(text="East, by far" if next(SAMPLES) % 2 else "West, clearly")
    return Reply(text="East sold the most")


def with_telemetry(root: Path, **fields: Any) -> None:
    lines = ["telemetry:"] + [f"  {k}: {json.dumps(v)}" for k, v in fields.items()]
    with (root / "config.yml").open("a") as config:
        config.write("\n".join(lines) + "\n")


def run(root: Path, *args: str, **env: str) -> Finished:
    """`accord ARGS` in `root`, with none of the caller's OTEL_* variables unless given."""
    clean = {k: "" for k in os.environ if k.startswith("OTEL_")}
    done = accord(*args, cwd=root, env={**clean, "SHOP_API_KEY": SECRET, **env})
    assert_no_traceback(done)
    return done


def stored(root: Path, run_id: str | None = None) -> tuple[str, dict[str, str]]:
    """(the run's id, its stored results' statuses by task key): the latest run's."""
    with sqlite3.connect(root / ".accord" / "runs.db") as db:
        if run_id is None:
            (run_id,) = db.execute("SELECT run_id FROM runs ORDER BY started DESC").fetchone()
        rows = db.execute("SELECT key, status FROM results WHERE run_id = ?", (run_id,))
        return run_id, dict(rows.fetchall())


def root_of(spans: list[Span]) -> Span:
    roots = [s for s in spans if not s.parent_id]
    assert len(roots) == 1, [s.name for s in roots]
    return roots[0]


def ended_run(spans: list[Span]) -> bool:
    return any(not s.parent_id for s in spans)


def children(spans: list[Span], parent: Span) -> list[Span]:
    return [s for s in spans if s.parent_id == parent.span_id]


def nodes(spans: list[Span]) -> dict[str, Span]:
    return {s["accord.task.key"]: s for s in spans if "accord.task.key" in s.attributes}
