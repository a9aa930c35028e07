"""structlog context: every message logged inside a node carries the run, the node and its type,
and a node's fields never leak into another's."""

from __future__ import annotations

import asyncio
import json

import pytest

from accord.engine import log
from accord.engine.scheduler import Node, Scheduler


def test_messages_inside_a_node_carry_run_task_and_type(
    capsys: pytest.CaptureFixture[str],
) -> None:
    log.configure("warning", json_logs=True)

    def body(word: str) -> object:
        async def run() -> str:
            await asyncio.sleep(0)
            log.get().warning("inside", word=word)
            return word

        return run

    async def go() -> None:
        log.bind_context(run_id="r1")
        nodes = [
            Node(key=k, name=k, type=t, order=(i,), priority=1, body=body(k))  # type: ignore[arg-type]
            for i, (k, t) in enumerate([("a", "sql"), ("b", "agent")])
        ]
        await Scheduler().run(nodes, [])
        log.get().warning("after")

    try:
        asyncio.run(go())
    finally:
        log.configure()  # back to the default for the other tests
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    by_event = {(e["event"], e.get("word")): e for e in lines}
    for word, kind in (("a", "sql"), ("b", "agent")):
        event = by_event[("inside", word)]
        assert (event["run_id"], event["task"], event["type"]) == ("r1", word, kind)
    after = by_event[("after", None)]
    assert after["run_id"] == "r1" and "task" not in after
