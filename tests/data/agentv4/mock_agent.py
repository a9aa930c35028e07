"""A Python provider that answers as AgentV's example mock agent
(examples/features/trajectory-assertions-simple/mock-agent.ts) does: the prompt's keywords
choose a scenario, whose tool calls (name and arguments, in order) it reports."""

from __future__ import annotations

from typing import Any

SCENARIOS: list[tuple[tuple[str, ...], str, list[tuple[str, dict[str, Any]]]]] = [
    (("research", "search"), "REST is resource-based; GraphQL queries a single endpoint.",
     [("knowledgeSearch", {"query": "REST API characteristics"}),
      ("knowledgeSearch", {"query": "GraphQL characteristics"}),
      ("documentRetrieve", {"docId": "api-comparison"})]),
    (("load+customer", "load+normalize"), "Customer data loaded, normalized, and saved.",
     [("load_data", {"source": "customers"}), ("transform", {"operation": "normalize"}),
      ("save_data", {"destination": "output"})]),
    (("process", "data", "pipeline"), "Processed the customer data.",
     [("fetchData", {"endpoint": "/api/customers"}),
      ("validateSchema", {"schema": "customer-v2"}),
      ("transformData", {"format": "normalized"}),
      ("saveResults", {"destination": "processed_customers"})]),
    (("auth", "login", "credential"), "Authentication successful.",
     [("checkCredentials", {"user": "user@example.com"}),
      ("generateToken", {"userId": "user@example.com", "ttl": 3600}),
      ("auditLog", {"event": "login", "user": "user@example.com"})]),
    (("metric", "cpu", "memory"), "CPU at 45%, memory at 62%.",
     [("getCpuMetrics", {"server": "prod-1"}), ("getMemoryMetrics", {"server": "prod-1"})]),
    (("weather",), "The weather in Paris is sunny.",
     [("search", {"query": "weather Paris"}), ("get_weather", {"location": "Paris"})]),
]  # fmt: skip


def _matches(prompt: str, words: tuple[str, ...]) -> bool:
    return any(all(part in prompt for part in word.split("+")) for word in words)


def call_api(prompt: str, options: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    lower = prompt.lower()
    for words, text, calls in SCENARIOS:
        if _matches(lower, words):
            return {
                "output": text,
                "tool_calls": [{"name": n, "arguments": a} for n, a in calls],
            }
    return {"output": "I processed your request.", "tool_calls": []}
