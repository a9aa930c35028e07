"""Conversation tests of the weather agent: run them with pytest (see the README)."""

from __future__ import annotations

from typing import Any

import pytest
from weather_agent import WeatherAgent

from accord import AgentTurn, ToolCall, UserTurn

FORECAST = {"temperature": None, "condition": "*"}  # None: not checked; "*": anything


@pytest.mark.accord
async def test_weather_today_then_tomorrow(accord_conversation: Any) -> None:
    today = {"location": "San Francisco", "units": "fahrenheit"}
    tomorrow = {"location": "San Francisco", "forecast": "tomorrow"}
    expected = [
        UserTurn("What's the weather like in San Francisco?"),
        AgentTurn(
            "<mentions current weather conditions>",
            tool_calls=[ToolCall("get_weather", today, FORECAST)],
        ),
        UserTurn("What about tomorrow?"),
        AgentTurn("*", tool_calls=[ToolCall("get_weather", tomorrow, FORECAST)]),
    ]
    await accord_conversation(WeatherAgent, expected).run()


def test_the_agent_asks_for_a_city(accord_conversation: Any) -> None:
    expected = [
        UserTurn("What's the weather like?"),
        AgentTurn(["Which city would you like the weather for?", "<asks for a city>"]),
    ]
    accord_conversation(WeatherAgent, expected).run_sync()


def test_rain_in_paris(accord_conversation: Any) -> None:
    expected = [
        UserTurn("Is it raining in Paris?"),
        AgentTurn(
            "It is 54 degrees and raining in Paris.",
            tool_calls=[ToolCall("get_weather", {"location": "Paris", "units": "fahrenheit"})],
        ),
    ]
    accord_conversation(WeatherAgent, expected).run_sync()
