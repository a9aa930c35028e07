"""A Python provider standing in for the model of AgentV's deterministic-graders example:
a fixed answer for each of its tests (chosen by a phrase of the test's prompt), two of them
wrong on purpose (an equals that does not hold, a JSON answer that is not JSON)."""

from __future__ import annotations

from typing import Any

ANSWERS = {
    "Say hello": "Hello! Nice to meet you.",
    "contact email": "Write to support@example.com.",
    "What is 2+2": "The answer is 4",
    "Dear User": "Dear User, here is your update.",
    "status field": '{"status": "ok", "code": 200}',
    "number 42": '{"result": 42}',
    '"message" field': "Message: success",
}


def call_api(prompt: str, options: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    for phrase, answer in ANSWERS.items():
        if phrase in prompt:
            return {"output": answer}
    return {"error": f"no answer for: {prompt[:200]}"}
