"""ConversationRunner on the engine: the history the agent sees, the agent kinds, failures a
developer can act on, bad scripts, judges that cannot decide, and the verdict cache."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from accord import (
    AccordError,
    AgentTurn,
    ConversationFailed,
    ConversationRunner,
    JudgeNeeded,
    ModelAgent,
    ToolCall,
    UserTurn,
)
from tests.bounds import PROCESS_SECONDS
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply

WEATHER = {"location": "San Francisco", "units": "fahrenheit"}


def weather_agent(history: list[dict[str, Any]]) -> dict[str, Any]:
    if "tomorrow" in history[-1]["content"]:
        return {"text": "Tomorrow will be 61°F with fog.", "tool_calls": [
            {"name": "get_weather", "arguments": {"location": "San Francisco",
                                                  "forecast": "tomorrow"},
             "result": {"temperature": 61, "condition": "fog"}}]}  # fmt: skip
    return {"text": "It is 68°F and sunny in San Francisco.", "tool_calls": [
        {"name": "get_weather", "arguments": WEATHER,
         "result": {"temperature": 68, "condition": "sunny"}}]}  # fmt: skip


def script() -> list[Any]:
    forecast = {"temperature": None, "condition": "*"}
    return [
        UserTurn("What's the weather like in San Francisco?"),
        AgentTurn("<mentions current weather conditions>",
                  [ToolCall("get_weather", WEATHER, forecast)]),
        UserTurn("What about tomorrow?"),
        AgentTurn("*", [ToolCall("get_weather", {"location": "San Francisco",
                                                 "forecast": "tomorrow"}, forecast)]),
    ]  # fmt: skip


def judge_questions(server: FakeOpenAI) -> list[str]:
    return [r["messages"][-1]["content"] for r in server.requests]


def test_a_matching_conversation_passes_and_asks_the_judge_only_for_statements(
    project: Callable[..., Path], judge_server: FakeOpenAI
) -> None:
    root = project()
    result = ConversationRunner(weather_agent, script(), project_root=root).run_sync()
    assert result.turns == 2 and result.judge_calls == 1
    assert len(judge_server.requests) == 1  # "*", equal arguments: no judge
    assert "Statement: mentions current weather conditions" in judge_questions(judge_server)[0]
    assert judge_server.requests[0]["temperature"] == 0


def test_the_agent_sees_what_it_actually_said_and_did(project: Callable[..., Path]) -> None:
    seen: list[list[dict[str, Any]]] = []

    def agent(history: list[dict[str, Any]]) -> Any:
        seen.append(history)
        return weather_agent(history)

    ConversationRunner(agent, script(), project_root=project()).run_sync()
    second = seen[1]
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "assistant", "user"]
    call = second[1]["tool_calls"][0]["function"]
    assert call["name"] == "get_weather" and json.loads(call["arguments"]) == WEATHER
    assert json.loads(second[2]["content"]) == {"temperature": 68, "condition": "sunny"}
    assert second[3]["content"] == "It is 68°F and sunny in San Francisco."  # not the script's


def test_a_failure_names_the_turn_the_rule_and_the_judges_reason(
    project: Callable[..., Path],
) -> None:
    expected = script()
    expected[3] = AgentTurn("<mentions rain>", [ToolCall("get_weather", {"location": "SF"})])
    runner = ConversationRunner(weather_agent, expected, project_root=project(), test_note="SF")
    with pytest.raises(ConversationFailed) as failed:
        runner.run_sync()
    text = str(failed.value)
    assert "turn 4 did not match" in text
    assert "user said: What about tomorrow?" in text
    assert 'expected:  "<mentions rain>"' in text
    assert 'actual:    "Tomorrow will be 61°F with fog."' in text
    assert "rule:      statement at text: it does not" in text
    assert "note: SF" in text


def test_a_missing_tool_call_fails(project: Callable[..., Path]) -> None:
    expected = [UserTurn("Weather?"), AgentTurn("*", [ToolCall("get_weather", WEATHER)])]
    with pytest.raises(ConversationFailed, match="tool call count: expected 1 tool call"):
        ConversationRunner(lambda h: "Sunny.", expected, project_root=project()).run_sync()


def test_bad_scripts_are_refused_before_running() -> None:
    with pytest.raises(AccordError, match="turns 1 and 2 are both UserTurns"):
        ConversationRunner(weather_agent, [UserTurn("a"), UserTurn("b"), AgentTurn("*")])
    with pytest.raises(AccordError, match="ends with a UserTurn"):
        ConversationRunner(weather_agent, [UserTurn("a"), AgentTurn("*"), UserTurn("b")])
    with pytest.raises(AccordError, match="is empty"):
        ConversationRunner(weather_agent, [])
    with pytest.raises(AccordError, match="turn 2 is a str"):
        ConversationRunner(weather_agent, [UserTurn("a"), "hello"])  # type: ignore[list-item]


def test_an_agent_that_raises_or_hangs_fails_its_turn(project: Callable[..., Path]) -> None:
    root = project()
    expected = [UserTurn("hi"), AgentTurn("*"), UserTurn("again"), AgentTurn("*")]

    def raises(history: list[dict[str, Any]]) -> str:
        if len(history) > 1:
            raise KeyError("lost")
        return "hello"

    with pytest.raises(ConversationFailed, match=r"turn 4: the agent raised KeyError: 'lost'"):
        ConversationRunner(raises, expected, project_root=root).run_sync()

    async def hangs(history: list[dict[str, Any]]) -> str:
        await asyncio.sleep(30)
        return "late"

    with pytest.raises(ConversationFailed, match=r"turn 2: the agent did not answer within 0\.3 s"):
        ConversationRunner(hangs, expected, project_root=root, turn_timeout=0.3).run_sync()


def test_a_judge_reply_that_is_neither_yes_nor_no_is_asked_again_then_an_error(
    project: Callable[..., Path], judge_server: FakeOpenAI
) -> None:
    expected = [UserTurn("hi"), AgentTurn("<answers in gibberish>")]
    with pytest.raises(ConversationFailed) as failed:
        ConversationRunner(lambda h: "blah", expected, project_root=project()).run_sync()
    assert "turn 2:" in str(failed.value)
    assert len(judge_server.requests) == 2  # asked again once


def test_without_a_judge_a_test_that_needs_one_says_so(project: Callable[..., Path]) -> None:
    root = project(judge=False)
    exact = [UserTurn("hi"), AgentTurn("Hello!")]
    ConversationRunner(lambda h: "hello!", exact, project_root=root).run_sync()  # no judge needed
    with pytest.raises(JudgeNeeded, match="needs a judge model"):
        ConversationRunner(lambda h: "Hi there", exact, project_root=root).run_sync()


def test_verdicts_are_cached(project: Callable[..., Path], judge_server: FakeOpenAI) -> None:
    root = project()
    ConversationRunner(weather_agent, script(), project_root=root).run_sync()
    ConversationRunner(weather_agent, script(), project_root=root).run_sync()
    assert len(judge_server.requests) == 1
    ConversationRunner(weather_agent, script(), project_root=root, cache_mode="off").run_sync()
    assert len(judge_server.requests) == 2


def test_an_opening_agent_turn_starts_the_history(project: Callable[..., Path]) -> None:
    seen: list[list[dict[str, Any]]] = []

    def agent(history: list[dict[str, Any]]) -> str:
        seen.append(history)
        return "Hello Ada"

    expected = [AgentTurn("What's your name?"), UserTurn("Ada"), AgentTurn("hello ada")]
    ConversationRunner(agent, expected, project_root=project()).run_sync()
    assert seen[0] == [{"role": "assistant", "content": "What's your name?"},
                       {"role": "user", "content": "Ada"}]  # fmt: skip
    with pytest.raises(ConversationFailed, match="turn 1 did not match"):
        ConversationRunner(agent, expected, project_root=project(),
                           initial_agent_message="Goodbye").run_sync()  # fmt: skip


def test_agent_kinds_class_async_generator(project: Callable[..., Path]) -> None:
    root = project()
    expected = [UserTurn("hi"), AgentTurn("hello there", [ToolCall("wave", {"hand": "left"})])]

    class Agent:
        async def run(self, history: list[dict[str, Any]]) -> Any:
            return AgentTurn("hello there", [ToolCall("wave", {"hand": "left"})])

    async def pieces(history: list[dict[str, Any]]) -> Any:
        yield "hello "
        yield ToolCall("wave", {"hand": "left"})
        yield "there"

    def pair(history: list[dict[str, Any]]) -> Any:
        return "hello there", [{"name": "wave", "arguments": '{"hand": "left"}'}]

    for agent in (Agent, Agent(), pieces, pair):
        ConversationRunner(agent, expected, project_root=root).run_sync()
    with pytest.raises(ConversationFailed, match="the agent answered a int"):
        ConversationRunner(lambda h: 3, expected, project_root=root).run_sync()


def test_a_model_with_tools(project: Callable[..., Path], judge_server: FakeOpenAI) -> None:
    def get_weather(location: str, units: str = "celsius") -> dict[str, Any]:
        """The weather of a city."""
        return {"temperature": 20, "condition": "sunny", "units": units}

    root = project()
    (root / "config.yml").write_text((root / "config.yml").read_text())
    judge_server.script(Reply.tool("get_weather", {"location": "Paris"}), "20 degrees in Paris")
    agent = ModelAgent("fake", tools=[get_weather], system="You tell the weather.")
    expected = [UserTurn("Weather in Paris?"), AgentTurn("20 degrees in Paris", [
        ToolCall("get_weather", {"location": "Paris"}, {"temperature": 20, "condition": "*",
                                                        "units": "celsius"})])]  # fmt: skip
    ConversationRunner(agent, expected, project_root=root).run_sync()
    first = judge_server.requests[0]
    assert first["messages"][0] == {"role": "system", "content": "You tell the weather."}
    tool = first["tools"][0]["function"]
    assert tool["name"] == "get_weather" and tool["parameters"]["required"] == ["location"]
    assert json.loads(judge_server.requests[1]["messages"][-1]["content"])["temperature"] == 20


def test_an_agent_file_answers_with_the_whole_history(
    project: Callable[..., Path], judge_server: FakeOpenAI
) -> None:
    root = project({"helper.agent.yml": "model: fake\nsystem_instructions: Be brief.\n"})
    judge_server.script("Hello Ada", "You are Ada")
    expected = [UserTurn("I am Ada"), AgentTurn("hello ada"), UserTurn("Who am I?"),
                AgentTurn("you are ada")]  # fmt: skip
    ConversationRunner("helper.agent.yml", expected, project_root=root).run_sync()
    roles = [(m["role"], m["content"]) for m in judge_server.requests[1]["messages"]]
    assert roles == [("system", "Be brief."), ("user", "I am Ada"), ("assistant", "Hello Ada"),
                     ("user", "Who am I?")]  # fmt: skip


@pytest.mark.accord  # accord's plugin runs a marked async test on its own loop
async def test_run_is_awaitable_in_a_running_loop(project: Callable[..., Path]) -> None:
    expected = [UserTurn("hi"), AgentTurn("hello")]
    result = await ConversationRunner(lambda h: "Hello", expected, project_root=project()).run()
    assert result.turns == 1


def test_an_agent_files_tools_really_run(
    project: Callable[..., Path], judge_server: FakeOpenAI
) -> None:
    root = project({
        "sales.csv": "region,amount\nEU,10\nUS,50\n",
        "analyst.agent.yml": "model: fake\nsystem_instructions: Answer from the data.\n"
        "tools:\n  - {name: query, type: execute_sql, database: shop}\n",
    })  # fmt: skip
    config = root / "config.yml"
    config.write_text(
        config.read_text() + "databases:\n  - {name: shop, type: duckdb, dataset: .}\n"
    )
    sql = "SELECT SUM(amount) AS total FROM sales"

    def respond(body: dict[str, Any]) -> Reply:
        tools = [m for m in body["messages"] if m["role"] == "tool"]
        if body.get("tools") and not tools:
            return Reply.tool("query", {"sql": sql})
        return Reply(text=f"The total is {tools[-1]['content'].split()[-2]}." if tools else "?")

    judge_server.responder = respond
    expected = [
        UserTurn("What were total sales?"),
        AgentTurn("*", [ToolCall("query", {"sql": sql}, result="*")]),
    ]
    ConversationRunner("analyst.agent.yml", expected, project_root=root).run_sync()
    tool_reply = next(
        m for r in judge_server.requests for m in r["messages"] if m["role"] == "tool"
    )
    assert "60" in tool_reply["content"]  # DuckDB really summed the CSV


def test_a_turn_names_every_mismatch_not_only_the_first(project: Callable[..., Path]) -> None:
    """A failed statement and, behind it, a wrong tool argument and a wrong result: all named."""
    expected = script()
    expected[3] = AgentTurn("<mentions rain>", [ToolCall("get_weather", {
        "location": "San Francisco", "forecast": "next week"}, {"temperature": 50})])  # fmt: skip
    with pytest.raises(ConversationFailed) as failed:
        ConversationRunner(weather_agent, expected, project_root=project()).run_sync()
    text = str(failed.value)
    assert "rule:      statement at text: it does not" in text
    assert "rule:      tool arguments (same meaning) at tool call 1 (get_weather).arguments" \
        ".forecast" in text  # fmt: skip
    assert "rule:      tool result (same keys) at tool call 1 (get_weather).result" in text
    assert text.count("rule:") == 3


def test_a_judge_without_tools_gives_its_reason_not_its_whole_reply(
    tmp_path: Path, judge_server: FakeOpenAI
) -> None:
    """A model without tool calling answers in text ending `Answer: no`: the reason shown is
    the text before that line."""
    judge_server.responder = lambda body: Reply(text="It talks about fog, not rain.\nAnswer: no")
    (tmp_path / "config.yml").write_text(
        fake_model_config(judge_server, max_retries=0, tools="false")
        + "defaults:\n  judge_model: fake\n"
    )
    call = ToolCall("get_weather", {"location": "San Francisco", "forecast": "tomorrow"})
    expected = [UserTurn("What about tomorrow?"), AgentTurn("<mentions rain>", [call])]
    with pytest.raises(ConversationFailed) as failed:
        ConversationRunner(weather_agent, expected, project_root=tmp_path).run_sync()
    text = str(failed.value)
    assert "rule:      statement at text: It talks about fog, not rain.\n" in text
    assert "Answer: no" not in text


def test_a_conversation_without_judge_questions_never_imports_litellm(tmp_path: Path) -> None:
    """litellm's import is seconds of CPU (B20): a conversation whose turns all match exactly
    must not pay it. Run in a fresh process, where nothing else imported it."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from accord import AgentTurn, ConversationRunner, ToolCall, UserTurn\n"
        "turns = [UserTurn('hi'), AgentTurn('Hello  there', [ToolCall('wave', {'hand': '*'})])]\n"
        "agent = lambda h: {'text': 'hello there', 'tool_calls': [\n"
        "    {'name': 'wave', 'arguments': {'hand': 'left'}}]}\n"
        f"ConversationRunner(agent, turns, project_root={str(tmp_path)!r}).run_sync()\n"
        "print('litellm' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=PROCESS_SECONDS, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
