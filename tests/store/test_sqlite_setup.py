"""Opening the project's SQLite files while another process holds them: a lock is waited out,
then reported as a lock (never as damage)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from accord.engine import sqlite
from accord.engine.errors import ConfigError
from accord.engine.store import connect


def test_set_up_tries_again_while_locked_and_raises_other_errors_at_once() -> None:
    conn = sqlite3.connect(":memory:")
    calls: list[int] = []

    def steps(c: sqlite3.Connection) -> None:
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")

    sqlite.set_up(conn, steps)
    assert len(calls) == 3

    def broken(c: sqlite3.Connection) -> None:
        calls.append(1)
        raise sqlite3.OperationalError("no such table: x")

    calls.clear()
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        sqlite.set_up(conn, broken)
    assert len(calls) == 1


def test_a_store_held_by_another_connection_opens_once_it_is_released(tmp_path: Path) -> None:
    path = tmp_path / ".accord" / "runs.db"
    connect(path).close()
    holder = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    holder.execute("PRAGMA journal_mode=DELETE")  # the next connect must switch it back to WAL
    holder.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    release.start()
    started = time.perf_counter()
    conn = connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert time.perf_counter() - started >= 0.4  # it waited for the lock
    conn.close()
    release.join()
    holder.close()


def test_a_lock_that_stays_is_a_lock_not_damage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite, "ATTEMPTS", 2)
    path = tmp_path / "runs.db"

    def locked(c: sqlite3.Connection) -> None:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr("accord.engine.store._set_up", lambda c, p: locked(c))
    with pytest.raises(ConfigError, match="is locked by another process") as raised:
        connect(path)
    assert "damaged" not in str(raised.value)
