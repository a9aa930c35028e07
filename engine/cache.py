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

from . import sqlite
from .errors import ConfigError


def cache_db(root: Path) -> Path:
    """A project's call cache: `.accord/cache.db` under its root."""
    return root / ".accord" / "cache.db"


def check_cache(root: Path) -> None:
    """Refuse a project's damaged or newer call cache (a `ConfigError`, exit 2) before a run
    starts: found at the first model call, it failed that task instead, after others ran."""
    cache = CallCache(cache_db(root))
    try:
        cache.check()
    finally:
        cache.close()


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


FORMAT = 1  # PRAGMA user_version: 1 = the calls table below (0: written before it was set)
_CHECKED: set[Path] = set()  # caches that passed SQLite's quick check in this process


def _set_up(conn: sqlite3.Connection, path: Path) -> None:
    if path not in _CHECKED:  # once a process: it reads the whole file
        check = conn.execute("PRAGMA quick_check").fetchone()
        if check is None or check[0] != "ok":
            raise sqlite3.DatabaseError(str(check[0] if check else "no answer"))
        _CHECKED.add(path)
    # before anything is written: a newer accord's cache is not appended to
    if sqlite.format_of(conn, FORMAT) < FORMAT:
        conn.execute(f"PRAGMA user_version = {FORMAT}")
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
                conn.text_factory = sqlite.text_or_bytes
                sqlite.set_up(conn, lambda c: _set_up(c, self.path))
            except OSError as exc:
                raise ConfigError(f"cannot open the call cache {self.path}: {exc}") from None
            except sqlite.NewerFormat as exc:
                conn.close()
                raise ConfigError(
                    f"the call cache {self.path} was written by a newer accord (format "
                    f"{exc.found}; this one reads up to {FORMAT}): upgrade accord, or move it "
                    "away and this one starts a new one"
                ) from None
            except sqlite3.Error as exc:
                if sqlite.is_locked(exc):
                    raise ConfigError(
                        f"the call cache {self.path} is locked by another process: try again "
                        "when it is done"
                    ) from None
                raise self._damaged(exc) from None
            self._conn = conn
        return self._conn

    def check(self) -> None:
        """Open an existing cache now, so that a damaged or newer one is refused (a
        `ConfigError`) before a run starts rather than at its first model call."""
        if self.path.exists():
            self._db()

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
