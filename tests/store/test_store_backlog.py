"""A run in parts does not run ahead of the run store's writer: results waiting for the disk
(with their outputs) stay few instead of piling up while the scheduler goes on (B22)."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from accord.engine import runner, store
from accord.engine.project import load_project
from accord.engine.results import Status, TaskResult
from accord.engine.runner import RunOptions
from accord.tasks.evaluators.cases import Case, Output
from accord.tasks.suites.core import nodes
from accord.tasks.suites.core.cases import Suite
from accord.tasks.suites.core.targets import PythonTarget
from tests.bounds import PROCESS_SECONDS


class _Node:
    uses_slot = True


def _result(key: str) -> TaskResult:
    return TaskResult(key=key, type="eval_target", status=Status.SUCCEEDED, output="x")


def _locked(db: Path) -> sqlite3.Connection:
    """Another connection holding the store's write lock: the writer waits for it."""
    conn = sqlite3.connect(str(db), timeout=30, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    return conn


def _until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + PROCESS_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.001)


def test_backlog_counts_the_results_the_writer_has_not_written(tmp_path: Path) -> None:
    db = store.runs_db(tmp_path)
    run_store = store.RunStore(db, "20261125-000000-abcdef")
    lock = _locked(db)
    for n in range(5):
        run_store.node_finished(_Node(), _result(f"t{n}"))
    assert run_store.backlog == 5  # the writer cannot commit while the lock is held
    lock.rollback()
    lock.close()
    _until(lambda: run_store.backlog == 0, "the writer caught up")
    run_store.finish("succeeded", None, {"tasks": {}})
    assert run_store.backlog == 0
    assert len(store.run_results(db, run_store.run_id)) == 5


def test_a_run_in_parts_waits_for_the_store_before_its_next_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One case a part, two parts ahead, no backlog allowed: with the store locked the run
    stops after its first two parts, and every later part starts only once the writer has
    written every result before it."""
    (tmp_path / "config.yml").write_text("")
    monkeypatch.setattr(nodes, "PART_NODES", 2)  # a case without evaluators: 2 nodes
    monkeypatch.setattr(nodes, "PART_SLOTS", 1)
    monkeypatch.setattr(runner, "STORE_BACKLOG", 0)
    opened: list[store.RunStore] = []
    backlogs: list[int] = []  # the writer's backlog as each part was asked for
    real_parts = nodes.plan_parts

    def watched(suite: Suite, size: int = 2) -> Iterator[Any]:
        for part in real_parts(suite, size):
            backlogs.append(opened[0].backlog if opened else -1)
            yield part

    monkeypatch.setattr(nodes, "plan_parts", watched)

    async def answer(text: Any) -> Output:
        return Output(text=str(text))

    cases = [Case(id=f"c{n}", input=f"q{n}") for n in range(6)]
    suite = Suite(
        id="parts",
        cases=cases,
        targets={"t": PythonTarget(function="x:y", callable=answer)},
        default_target="t",
        project=load_project(tmp_path / "config.yml"),
    )
    db = store.runs_db(tmp_path)
    store.connect(db).close()  # the store exists, so that it can be locked before the run
    lock = _locked(db)

    async def main() -> Any:
        options = RunOptions(cache_mode="off", max_concurrency=1, open_stores=opened)
        task = asyncio.create_task(nodes.run_suite(suite, options))
        deadline = time.monotonic() + PROCESS_SECONDS
        # both parts ahead finished (4 results queued, none written: the store is locked)
        while not (opened and opened[0].backlog >= 4):
            assert time.monotonic() < deadline, "the first two parts never finished"
            await asyncio.sleep(0.001)
        asked = len(backlogs)
        lock.rollback()
        lock.close()
        return asked, await asyncio.wait_for(task, PROCESS_SECONDS)

    asked, run = asyncio.run(main())
    assert asked == 2  # not a third part while the first two parts' results were unwritten
    assert [c.id for c in run.cases] == [c.id for c in cases]
    assert backlogs[2:] == [0, 0, 0, 0]
    assert len(store.run_results(db, run.run_id)) == 12
