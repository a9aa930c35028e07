"""A weather agent for the conversation-test example.

It is scripted (no model) so the example runs offline: it reads the user's last message, calls
its `get_weather` tool for the city and day asked about, and answers from the tool's result.
A real agent (a model with tools, an `.agent.yml`) is tested the same way.
"""

from __future__ import annotations

from typing import Any

FORECASTS = {
    ("San Francisco", "today"): {"temperature": 68, "condition": "sunny"},
    ("San Francisco", "tomorrow"): {"temperature": 61, "condition": "fog"},
    ("Paris", "today"): {"temperature": 54, "condition": "rain"},
}


def get_weather(
    location: str, units: str = "fahrenheit", forecast: str = "today"
) -> dict[str, Any]:
    """The weather tool: the forecast of `location` for `forecast` (today or tomorrow)."""
    found = FORECASTS.get((location, forecast))
    if found is None:
        return {"error": f"no forecast for {location}"}
    return dict(found)


class WeatherAgent:
    """Answers weather questions; remembers the city of the conversation."""

    def run(self, history: list[dict[str, Any]]) -> dict[str, Any]:
        question = history[-1]["content"]
        city = next((c for c, _ in FORECASTS if c in question), None) or self.city(history)
        if city is None:
            return {"text": "Which city would you like the weather for?"}
        if "tomorrow" in question:
            arguments = {"location": city, "forecast": "tomorrow"}
        else:
            arguments = {"location": city, "units": "fahrenheit"}
        result = get_weather(**arguments)
        day = "Tomorrow it will be" if "tomorrow" in question else "It is"
        text = f"{day} {result['temperature']}°F and {result['condition']} in {city}."
        call = {"name": "get_weather", "arguments": arguments, "result": result}
        return {"text": text, "tool_calls": [call]}

    @staticmethod
    def city(history: list[dict[str, Any]]) -> str | None:
        """The city named earlier in the conversation (in a tool call the agent made)."""
        for message in reversed(history):
            for call in message.get("tool_calls") or []:
                if call["function"]["name"] == "get_weather":
                    import json

                    location: str = json.loads(call["function"]["arguments"])["location"]
                    return location
        return None
