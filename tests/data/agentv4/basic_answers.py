"""A Python provider standing in for the model of review-and-codegen.suite.yaml: a fixed answer
for each of its tests (chosen by a phrase of the test's prompt). The median answer is
annotated, documented and raises, but shows no doctest, so score_python_answer.py gives it 3
of its 4 checks: 0.75."""

from __future__ import annotations

from typing import Any

MEDIAN = '''```python
def median(values: list[float]) -> float:
    """The middle value of `values`."""
    if not values:
        raise ValueError("empty list")
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
```'''

ANSWERS = {
    "Review this script": "`$DIR` is unquoted on line 1 and 2; quote it. [reviewed-sh]",
    "Returns their median": MEDIAN,
    "release names": "1. Drizzle 2. Tailwind 3. Nimbus",
    "I expect 8": "The loop starts at 1; use range(len(xs)).",
    "5+7": "5 + 7 is 12.",
    "S-881": '{"status": "in_transit", "eta_days": 2}',
    "Goodbye!": "Goodbye, have a good day!",
}


def call_api(prompt: str, options: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    for phrase, answer in ANSWERS.items():
        if phrase in prompt:
            return {"output": answer}
    return {"error": f"no answer for: {prompt[:200]}"}
