"""The agent under test of the scenario example: a rule-based support agent (no model, so the
example runs offline). Its configuration picks the reply style: `model.model_id` `terse` or
`friendly`, as a real agent's configuration would pick its model."""

from __future__ import annotations

from typing import Any

ANSWERS = {
    "return": "You can return any item within {days} days of delivery for a full refund.",
    "hours": "We are open from 9am to 5pm, Monday to Friday.",
}


class SupportAgent:
    """Answers from its rule book; the configuration comes from the scenario file (None: the
    agent's own default)."""

    def __init__(self, config: dict[str, Any] | None) -> None:
        model = (config or {}).get("model") or {}
        self.style = model.get("model_id", "terse")
        self.days = (config or {}).get("return_days", 30)

    def run(self, message: str) -> dict[str, Any]:
        topic = next((t for t in ANSWERS if t in message.lower()), None)
        if topic is None:
            text = "I can help with returns and opening hours."
        else:
            text = ANSWERS[topic].format(days=self.days)
        if self.style == "friendly":
            text = f"Happy to help! {text}"
        words = len(message.split())
        return {
            "output": text,
            "usage": {"input_tokens": words, "output_tokens": len(text.split())},
        }
