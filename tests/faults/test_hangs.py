"""Every wait has a bound: failures that used to leave a run waiting forever.

Each run here is guarded by `asyncio.wait_for` (the hangs found were an idle event loop
waiting on a future nobody would resolve) or by a subprocess time limit.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from accord.cli import main
from accord.engine.errors import AccordError
from accord.engine.results import Status
from accord.engine.retry import RetryPolicy
from accord.engine.scheduler import Node, Scheduler


def bounded(coro: Any, seconds: float = 20) -> Any:
    async def guarded() -> Any:
        return await asyncio.wait_for(coro, timeout=seconds)

    return asyncio.run(guarded())


def test_fail_fast_settles_siblings_cancelled_before_their_first_step() -> None:
    # the first body fails before the event loop gives its siblings a first step: fail-fast
    # cancels them while pending, so their own code never runs to report back
    async def fails() -> None:
        raise AccordError("boom")

    async def fine() -> str:
        await asyncio.sleep(0)
        return "ok"

    nodes = [
        Node(key=k, name=k, type="t", order=(i,), priority=1, body=fails if i == 0 else fine)
        for i, k in enumerate(["a", "b", "c", "d"])
    ]
    scheduler = Scheduler(max_concurrency=4)
    bounded(scheduler.run(nodes, []))
    states = {r.key: r.status for r in scheduler.results}
    assert states == {
        "a": Status.FAILED,
        "b": Status.CANCELLED,
        "c": Status.CANCELLED,
        "d": Status.CANCELLED,
    }
    assert scheduler._running == 0  # every slot given back


def test_a_failing_task_beside_independent_ones_ends_the_run(tmp_path: Path) -> None:
    path = tmp_path / "w.workflow.yml"
    broken = '  - name: broken\n    type: formatter\n    template: "{{ 1 / 0 }}"\n'
    fine = "".join(f"  - name: t{i}\n    type: formatter\n    template: x\n" for i in range(3))
    path.write_text("tasks:\n" + broken + fine, encoding="utf-8")
    outcome: list[Any] = []
    # CliRunner runs the command's own event loop; a daemon thread is a bound we can give up on
    worker = threading.Thread(
        target=lambda: outcome.append(CliRunner().invoke(main, ["run", str(path)])), daemon=True
    )
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "the run hung after its first task failed"
    result = outcome[0]
    assert result.exit_code == 1, result.output
    assert "broken" in result.stderr and "division by zero" in result.stderr
    assert "3 cancelled" in result.stdout + result.stderr


def test_a_doubling_backoff_is_capped() -> None:
    attempts = 0

    async def flaky() -> str:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise AccordError("not yet")
        return "done"

    node = Node(
        key="n",
        name="n",
        type="t",
        order=(0,),
        priority=1,
        body=flaky,
        # the cap is 300 s in production; shrunk so an uncapped wait (1e6 s) shows as a timeout
        retry=RetryPolicy(attempts=3, backoff=1e6, cap=0.01),
    )
    scheduler = Scheduler(max_concurrency=1)
    bounded(scheduler.run([node], []))
    assert node.result is not None and node.result.status is Status.SUCCEEDED
    assert node.result.attempts == 3
