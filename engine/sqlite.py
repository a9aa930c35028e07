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
