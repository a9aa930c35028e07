"""A model agent's malformed tool call goes back to the model as an error, and a failing
`run_sync()` shows its failure alone."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from accord import AgentTurn, ConversationFailed, ConversationRunner, ModelAgent, ToolCall, UserTurn
from tests.fakes import FakeOpenAI, Reply


def get_weather(location: str) -> dict[str, Any]:
    """The weather of a city."""
    return {"temperature": 20, "location": location}


def test_tool_arguments_that_are_not_json_go_back_to_the_model_as_an_error(
    project: Callable[..., Path], judge_server: FakeOpenAI
) -> None:
    # the tool used to be called with the raw string, and the turn ended in a pydantic
    # ValidationError; the model now reads the error and tries again, as .agent.yml agents do
    root = project()
    judge_server.script(
        Reply.tool("get_weather", "{'location': Paris"),
        Reply.tool("get_weather", "[1, 2]"),
        Reply.tool("get_weather", {"location": "Paris"}),
        "20 degrees in Paris",
    )
    agent = ModelAgent("fake", tools=[get_weather])
    calls = [  # every call the model asked for is in the turn, as with .agent.yml agents
        ToolCall("get_weather", {"value": "{'location': Paris"}),
        ToolCall("get_weather", {"value": [1, 2]}),
        ToolCall("get_weather", {"location": "Paris"}),
    ]
    expected = [UserTurn("Weather in Paris?"), AgentTurn("20 degrees in Paris", calls)]
    result = ConversationRunner(agent, expected, project_root=root).run_sync()
    assert result.turns == 1
    told = [r["messages"][-1] for r in judge_server.requests[1:4]]
    assert [m["role"] for m in told] == ["tool", "tool", "tool"]
    assert "the arguments are not valid JSON" in json.loads(told[0]["content"])["error"]
    assert json.loads(told[1]["content"]) == {"error": "the arguments must be a JSON object"}
    assert json.loads(told[2]["content"]) == {"temperature": 20, "location": "Paris"}


def test_a_failing_run_sync_carries_no_unrelated_event_loop_error(
    project: Callable[..., Path],
) -> None:
    # run_sync ran asyncio.run inside `except RuntimeError` (no running loop): every failure
    # was shown under "RuntimeError: no running event loop ... During handling of the above"
    expected = [UserTurn("hi"), AgentTurn("hello")]
    with pytest.raises(ConversationFailed) as caught:
        ConversationRunner(lambda h: 3, expected, project_root=project()).run_sync()
    chain: list[BaseException] = []
    current: BaseException | None = caught.value
    while current is not None:
        chain.append(current)
        current = current.__cause__ or current.__context__
    assert not any("no running event loop" in str(e) for e in chain), chain
