"""Content-addressed cache of model calls, in SQLite under `<root>/.accord/cache.db`.

The key hashes the model, its parameters, the messages, the tools and the sample index, so n
consistency runs are n cached samples and never one answer repeated n times.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from accord.engine import sqlite
from accord.engine.errors import ConfigError


def call_key(
    model: str,
    api_base: str | None,
    params: dict[str, Any],
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    sample: int,
) -> str:
    """SHA-256 of everything that determines a call's answer."""
    document = json.dumps(
        [model, api_base, params, messages, tools or [], sample],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
        separators=(",", ":"),
    )
    return hashlib.sha256(document.encode("utf-8")).hexdigest()


def _set_up(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, value TEXT NOT NULL,"
        " created REAL NOT NULL)"
    )
    conn.commit()


class CallCache:
    """A key -> text table; safe across threads and concurrent processes (WAL)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(str(self.path), timeout=30, check_same_thread=False)
                sqlite.set_up(conn, _set_up)
            except OSError as exc:
                raise ConfigError(f"cannot open the call cache {self.path}: {exc}") from None
            except sqlite3.Error as exc:
                if sqlite.is_locked(exc):
                    raise ConfigError(
                        f"the call cache {self.path} is locked by another process: try again "
                        "when it is done"
                    ) from None
                raise self._damaged(exc) from None
            self._conn = conn
        return self._conn

    def get(self, key: str) -> str | None:
        with self._lock:
            try:
                row = self._db().execute("SELECT value FROM calls WHERE key = ?", (key,)).fetchone()
            except sqlite3.DatabaseError as exc:
                raise self._damaged(exc) from None
        return None if row is None or not isinstance(row[0], str) else row[0]

    def put(self, key: str, value: str) -> None:
        with self._lock:
            db = self._db()
            try:
                db.execute(
                    "INSERT OR REPLACE INTO calls (key, value, created) VALUES (?, ?, ?)",
                    (key, value, time.time()),
                )
                db.commit()
            except sqlite3.DatabaseError as exc:
                raise self._damaged(exc) from None

    def _damaged(self, exc: Exception) -> ConfigError:
        return ConfigError(
            f"the call cache {self.path} is damaged ({exc}): move it away (or delete "
            "it) and accord starts a new one; recorded answers in it are lost"
        )

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
