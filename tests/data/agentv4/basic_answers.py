"""A Python provider standing in for the model of AgentV's `basic` example: a fixed answer
for each of its tests (chosen by a phrase of the test's prompt). The Python answer raises
exceptions and has a docstring but never calls isinstance, so the example's keyword script
gives it 0.34 + 0.33."""

from __future__ import annotations

from typing import Any

SECOND_LARGEST = '''```python
def second_largest(numbers: list[int]) -> int:
    """The second largest distinct number of `numbers`."""
    distinct = sorted(set(numbers))
    if len(distinct) < 2:
        raise ValueError("need two distinct numbers")
    return distinct[-2]
```'''

ANSWERS = {
    "calculateTotal": ("The loop `i < 0` never runs (SUPERSECRET_INSTRUCTION_MARKER_JAVASCRIPT)."),
    "second largest": SECOND_LARGEST,
    "fitness app": "1. Micro-workouts between meetings ...",
    "off-by-one": "Use range(len(items)).",
    "2+2": "The answer is 4.",
    "fraud risk": '{"riskLevel": "Low", "confidence": 0.9, "reasoning": "normal"}',
    "Hello!": "Hello! How can I help you today?",
}


def call_api(prompt: str, options: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    for phrase, answer in ANSWERS.items():
        if phrase in prompt:
            return {"output": answer}
    return {"error": f"no answer for: {prompt[:200]}"}
