"""A query whose task is cancelled stops in the database instead of running on in its thread.

asyncio.run waits for the default executor's threads at exit, so a query left running would
hold each run here for as long as the query takes (minutes); a daemon thread bounds the wait.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from accord.cli import main
from accord.engine.databases import Databases, DuckDBDatabase, Interrupter, SQLiteDatabase

# minutes of work for either engine, unless interrupted
SLOW_DUCKDB = "SELECT sum(a.range * b.range) FROM range(3000000) a, range(3000000) b"
SLOW_SQLITE = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000000) "
    "SELECT count(*) FROM c"
)


def within(seconds: float, work: Any) -> Any:
    """Run `work()` in a daemon thread; fail if it has not returned after `seconds`."""
    outcome: list[Any] = []
    thread = threading.Thread(target=lambda: outcome.append(work()), daemon=True)
    started = time.perf_counter()
    thread.start()
    thread.join(timeout=seconds)
    assert not thread.is_alive(), f"still running after {seconds} s: the query was not stopped"
    assert outcome, "the work raised"
    return outcome[0], time.perf_counter() - started


def cancel_after(db: Any, sql: str, seconds: float) -> str:
    async def go() -> str:
        try:
            await asyncio.wait_for(db.query(sql), timeout=seconds)
        except TimeoutError:
            return "timed out"
        return "finished"

    return asyncio.run(go())


def test_duckdb_query_is_interrupted(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    spec = DuckDBDatabase(name="local", type="duckdb", dataset="data")
    dbs = Databases(root=tmp_path, specs={"local": spec}, default="local")
    db = dbs.get("local")
    outcome, took = within(30, lambda: cancel_after(db, SLOW_DUCKDB, 0.5))
    assert outcome == "timed out"
    assert took < 10
    # the connection is still good for the next query
    assert asyncio.run(db.query("SELECT 42 AS answer")).rows == [(42,)]
    dbs.close()


def test_sqlite_query_is_interrupted(tmp_path: Path) -> None:
    sqlite3.connect(tmp_path / "app.db").close()
    spec = SQLiteDatabase(name="app", type="sqlite", path="app.db")
    dbs = Databases(root=tmp_path, specs={"app": spec}, default="app")
    outcome, took = within(30, lambda: cancel_after(dbs.get("app"), SLOW_SQLITE, 0.5))
    assert outcome == "timed out"
    assert took < 10


def test_an_interrupter_fired_before_the_query_starts_stops_it_when_armed() -> None:
    stopped: list[str] = []
    interrupter = Interrupter()
    interrupter.fire()  # cancelled while the thread was still connecting
    interrupter.arm(lambda: stopped.append("stop"))
    assert stopped and set(stopped) == {"stop"}
    interrupter.disarm()
    count = len(stopped)
    interrupter.fire()
    assert len(stopped) == count  # a finished query is not stopped again


def _duckdb_cursor(tmp_path: Path) -> tuple[Any, Callable[[], None], type[Exception]]:
    import duckdb

    cursor = duckdb.connect(":memory:").cursor()
    return cursor, cursor.interrupt, duckdb.Error


def _sqlite_cursor(tmp_path: Path) -> tuple[Any, Callable[[], None], type[Exception]]:
    conn = sqlite3.connect(tmp_path / "app.db", check_same_thread=False)
    return conn, conn.interrupt, sqlite3.OperationalError


@pytest.mark.parametrize(
    ("make", "sql"), [(_duckdb_cursor, SLOW_DUCKDB), (_sqlite_cursor, SLOW_SQLITE)]
)
def test_a_stop_sent_while_the_query_is_starting_still_stops_it(
    tmp_path: Path, make: Any, sql: str
) -> None:
    # Ctrl-C arriving between the cursor and `execute`: the database's interrupt does
    # nothing before a statement runs, and the query used to run for its full minutes
    handle, interrupt, error = make(tmp_path)
    interrupter = Interrupter()
    interrupter.arm(interrupt)
    interrupter.fire()  # before execute begins

    def run() -> str:
        try:
            handle.execute(sql).fetchall()
        except error as exc:
            return f"interrupted: {exc}"
        finally:
            interrupter.disarm()
        return "finished"

    outcome, _took = within(30, run)
    assert outcome.startswith("interrupted") and "nterrupt" in outcome, outcome


@pytest.mark.parametrize("timeout", [1])
def test_sql_task_timeout_ends_the_run_promptly(tmp_path: Path, timeout: int) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "config.yml").write_text(
        "databases:\n  - name: local\n    type: duckdb\n    dataset: data\n"
    )
    path = tmp_path / "slow.workflow.yml"
    path.write_text(
        "tasks:\n  - name: slow\n    type: execute_sql\n    database: local\n"
        f'    timeout: {timeout}\n    sql_query: "{SLOW_DUCKDB}"\n'
    )
    result, took = within(30, lambda: CliRunner().invoke(main, ["run", str(path)]))
    assert result.exit_code == 1, result.output
    assert f"timed out after {timeout} s" in result.stderr
    assert took < 10


def test_an_interrupt_that_meets_a_closed_connection_ends_quietly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fired interrupter repeats its stop until the query is over; a connection closed
    between two repeats (DuckDB: "Connection already closed!") raised in the interrupt thread,
    and its traceback reached stderr. Now the repeats end there."""
    from accord.engine.databases.base import Interrupter

    raised: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: raised.append(args.exc_value))
    calls: list[int] = []
    second = threading.Event()

    def stop() -> None:
        calls.append(1)
        if len(calls) >= 2:
            second.set()
            raise RuntimeError("Connection Error: Connection already closed!")

    interrupter = Interrupter()
    interrupter.arm(stop)
    interrupter.fire()  # the first stop; the thread repeats it
    assert second.wait(timeout=30), "the interrupt was not repeated"
    assert interrupter._over.wait(timeout=30), "the repeats did not end"
    assert raised == []
    interrupter.disarm()
