"""A Python provider playing an agent for agent-trajectories.suite.yaml: the prompt's
keywords choose a scenario, whose tool calls (name and arguments, in order) it reports."""

from __future__ import annotations

from typing import Any

SCENARIOS: list[tuple[tuple[str, ...], str, list[tuple[str, dict[str, Any]]]]] = [
    (("library",), "Two records found and compared.",
     [("catalogLookup", {"title": "Moby-Dick", "edition": 1}),
      ("catalogLookup", {"title": "Moby-Dick", "edition": 2}),
      ("openRecord", {"recordId": "md-1851"})]),
    (("inbox",), "Three messages sorted, one answered.",
     # `mailbox`, not `folder`: wrong-argument-name's check misses it on purpose
     [("readInbox", {"mailbox": "support"}), ("classifyMessage", {"label": "billing"}),
      ("draftReply", {"tone": "brief"}), ("sendReply", {"to": "customer@example.org"})]),
    (("freeze", "suspicious"), "The account is locked.",
     [("lockAccount", {"account": "acct-77"}), ("notifyOwner", {"account": "acct-77"}),
      ("recordIncident", {"kind": "suspicious-sign-in"})]),
    (("disk", "process"), "Disks 71% full; 212 processes.",
     [("listDisks", {"host": "build-2"}), ("listProcesses", {"host": "build-2"})]),
    (("rain", "forecast"), "Light rain in Oslo tomorrow.",
     [("geocode", {"place": "Oslo"}), ("get_forecast", {"city": "Oslo", "days": 1})]),
    (("csv+parquet",), "orders.parquet written.",
     [("read_csv", {"path": "orders.csv"}), ("dedupe", {"keep": "first"}),
      ("write_parquet", {"path": "orders.parquet"})]),
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
    return {"output": "The build server answers.", "tool_calls": []}
