"""Setting up the project's SQLite files (the run store, the call cache) when several
processes open them at once: a fresh file that pytest-xdist workers or parallel `accord`
runs create together is locked for a moment, which is not damage."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

ATTEMPTS = 100
PAUSE = 0.05  # seconds between attempts: 5 s in all, on top of SQLite's own busy timeout


def is_locked(exc: sqlite3.Error) -> bool:
    """Another connection holds the file (SQLITE_BUSY / SQLITE_LOCKED)."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def set_up(conn: sqlite3.Connection, steps: Callable[[sqlite3.Connection], None]) -> None:
    """Run `steps` (pragmas, schema) on `conn`, again while another process holds a lock that
    SQLite's busy timeout does not wait for (changing the journal mode is one); the last
    attempt's error is raised."""
    for attempt in range(ATTEMPTS):
        try:
            steps(conn)
            return
        except sqlite3.OperationalError as exc:
            if not is_locked(exc) or attempt == ATTEMPTS - 1:
                raise
            conn.rollback()
            time.sleep(PAUSE)


class NewerFormat(sqlite3.DatabaseError):
    """The file's `user_version` is newer than this accord knows: refused, never written."""

    def __init__(self, found: int) -> None:
        super().__init__(f"format {found}")
        self.found = found


def format_of(conn: sqlite3.Connection, known: int) -> int:
    """The file's format (`PRAGMA user_version`); `NewerFormat` when it is above `known`."""
    found = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if found > known:
        raise NewerFormat(found)
    return found


def text_or_bytes(data: bytes) -> str | bytes:
    """A TEXT value as str, or left as bytes when it is not valid UTF-8: a tampered file's
    bad text then reads as a value of the wrong type (which readers refuse) instead of
    failing the whole query."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data
