"""A Python provider standing in for the model of AgentV's deterministic-graders and assert
examples: a fixed answer for each of their tests (chosen by a phrase of the test's prompt),
some wrong on purpose (an equals that does not hold, a JSON answer that is not JSON, a
greeting that is not one of those asked for)."""

from __future__ import annotations

from typing import Any

ANSWERS = {
    "Say hello": "Hello! Nice to meet you.",
    "contact email": "Write to support@example.com.",
    "What is 2+2": "The answer is 4",
    "Dear User": "Dear User, here is your update.",
    "status field": '{"status": "ok", "code": 200}',
    "number 42": '{"result": 42}',
    "field set to": "Message: success",
    "What is 2 + 2": "4",
    "status set to": '{"status": "ok", "code": 200}',
    "Greet me with exactly": "Hi there, how can I help?",
    "Hello!": "Hello! How can I help you today?",
    "I want a refund": "I can help with a refund. What is your order number?",
    "URGENT": "I understand this is urgent. Which system is down?",
    "neural networks.": "Neural networks are layers of connected nodes that learn weights.",
    "reinforcement learning": "An agent learns by trial and error from rewards.",
    "Describe deep learning": "Deep learning stacks many neural network layers.",
    "three primary colors": "Red, blue and yellow.",
    "capital of France": "Paris.",
    "capital of Italy": "Hi there! It is Rome.",
    "15% of 200": "15% of 200 is 0.15 x 200 = 30.",
    "Now double that": "Double 30 is 60.",
    "original numbers": "You asked about 15% and 200.",
    "What country is it in": "Hi there! Paris is in France.",
    "Multiply that by 3": "4 x 3 = 12.",
    "adds two numbers": "def add(a, b):\n    return a + b",
    "type hints": "def add(a: int, b: int) -> int:\n    return a + b",
    "somewhere warm in December": "Try the Canary Islands.",
    "beaches over cities": "Hi there, try the beaches of Tenerife.",
}


def call_api(prompt: str, options: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    for phrase, answer in ANSWERS.items():
        if phrase in prompt:
            return {"output": answer}
    return {"error": f"no answer for: {prompt[:200]}"}
