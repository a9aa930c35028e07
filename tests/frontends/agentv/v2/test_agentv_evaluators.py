"""AgentV's `execution_metrics` and `agent_judge` evaluators, scored as AgentV 4a86b769
scores them (the numbers come from the AgentV source named beside each)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply
from tests.frontends.agentv.v2.conftest import command_target, run, write


def test_execution_metrics(folder: Path, fake_llm: FakeOpenAI) -> None:
    calls = [{"tool": "Read", "input": {}}, {"tool": "Read", "input": {}},
             {"tool": "Grep", "input": {}}, {"tool": "Edit", "input": {}}]  # fmt: skip
    reply = {
        "output_messages": [
            {"role": "assistant", "content": "looking", "tool_calls": calls[:3]},
            {"role": "assistant", "content": "done", "tool_calls": calls[3:]},
        ],
        "token_usage": {"input": 1500, "output": 300},
        "cost_usd": 0.02,
        "duration_ms": 1200,
    }
    command_target(folder, reply)
    file = write(
        folder,
        """tests:
  - id: t
    criteria: Efficient
    input: improve the docs
    execution:
      evaluators:
        - name: all
          type: execution_metrics
          max_tool_calls: 3
          max_llm_calls: 5
          max_tokens: 2000
          max_cost_usd: 0.01
          max_duration_ms: 5000
          target_exploration_ratio: 0.6
        - {name: tokens_only, type: execution_metrics, max_tokens: 1000}
""",
    )
    _code, found, stderr = run(folder, file)
    results = {r["name"]: r for r in found["t"]["evaluator_results"]}
    # execution-metrics.ts: tool calls 4 > 3 (miss), llm calls 2 <= 5, tokens 1800 <= 2000,
    # cost 0.02 > 0.01 (miss), duration 1200 <= 5000, exploration (Read, Read, Grep of
    # DEFAULT_EXPLORATION_TOOLS) 3/4 = 0.75 within 0.2 of 0.6: 4 of 6 checks
    assert results["all"]["score"] == 4 / 6, stderr
    assert len(results["all"]["misses"]) == 2
    assert results["tokens_only"]["score"] == 0.0  # 1800 > 1000
    # the test: the mean of 0.667 and 0 (orchestrator.ts computeWeightedMean)
    assert found["t"]["score"] == (4 / 6 + 0) / 2


def test_execution_metrics_needs_a_threshold(folder: Path) -> None:
    file = write(
        folder,
        "tests:\n  - id: t\n    criteria: x\n    input: y\n    execution:\n      evaluators:\n"
        "        - {name: m, type: execution_metrics}\n",
    )
    result = accord("eval", file)
    assert result.exit_code == 2 and "dataset.yaml:7:" in result.stderr
    assert "give at least one of max_tool_calls" in result.stderr


def agent_judge_responder(fake: FakeOpenAI, seen: list[Any]) -> None:
    """The target answers; the agent judge lists the workspace, reads a file, then checks
    the rubric items by what the tools returned."""

    def respond(request: dict[str, Any]) -> Reply:
        if not request.get("tools"):
            return Reply(text="I wrote tests/main.test.ts")
        tool_results = [m["content"] for m in request["messages"] if m["role"] == "tool"]
        seen.append(tool_results)
        if not tool_results:
            return Reply.tool("list_files", {"path": "."})
        if len(tool_results) == 1:
            return Reply.tool("read_file", {"path": "tests/main.test.ts"})
        content = json.loads(tool_results[1]).get("content", "")
        checks = [
            {"id": "tests-dir", "satisfied": "tests" in tool_results[0], "reasoning": "listed"},
            {"id": "add", "satisfied": "add(" in content, "reasoning": "read"},
            {"id": "greet", "satisfied": "greet(" in content, "reasoning": "read"},
        ]
        return Reply(text=json.dumps({"checks": checks, "overall_reasoning": "looked"}))

    fake.responder = respond


AGENT_JUDGE = """workspace:
  template: ../template
tests:
  - id: t
    criteria: Writes tests
    input: Create unit tests
    evaluators:
      - name: audit
        type: agent_judge
        max_steps: 5
        rubrics:
          - {id: tests-dir, outcome: A tests/ directory exists, weight: 1}
          - {id: add, outcome: Tests add, weight: 2}
          - {id: greet, outcome: Tests greet, weight: 1, required: false}
"""


def test_agent_judge_investigates_the_workspace(folder: Path, fake_llm: FakeOpenAI) -> None:
    (folder / "template" / "tests").mkdir(parents=True)
    (folder / "template" / "tests" / "main.test.ts").write_text("expect(add(1, 2)).toBe(3)\n")
    seen: list[Any] = []
    agent_judge_responder(fake_llm, seen)
    file = write(folder, AGENT_JUDGE)
    _code, found, stderr = run(folder, file)
    result = found["t"]["evaluator_results"][0]
    # llm-judge.ts calculateRubricScore: tests-dir (1) and add (2) satisfied, greet (1,
    # optional) not: 3 / 4, no required item failed
    assert result["score"] == 0.75, (result, stderr)
    assert found["t"]["verdict"] == "borderline"
    assert len(seen) == 3  # list_files, read_file, then the verdict


def test_agent_judge_tools_stay_in_the_workspace(tmp_path: Path) -> None:
    from accord.tasks.suites.frontends.agentv.v2.agent_judge import run_tool

    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("key")
    (root / "link").symlink_to(tmp_path / "secret.txt")
    for args in ({"path": "../secret.txt"}, {"path": "link"}, {"path": "/etc/passwd"}):
        answer = run_tool(root, "read_file", json.dumps(args))
        assert "outside the workspace" in answer["error"]


def test_agent_judge_without_a_workspace_is_an_error(folder: Path, fake_llm: FakeOpenAI) -> None:
    agent_judge_responder(fake_llm, [])
    file = write(folder, AGENT_JUDGE.replace("workspace:\n  template: ../template\n", ""))
    _code, found, _stderr = run(folder, file)
    assert found["t"]["verdict"] == "error"
    assert "agent_judge needs a workspace" in found["t"]["error"]
