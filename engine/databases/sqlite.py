"""SQLite: a database file, opened read-only (`mode=ro`) unless `read_only: false`."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Literal

from pydantic import Field

from accord.engine.databases.base import (
    DatabaseKind,
    Interrupter,
    PathNeed,
    QueryError,
    QueryResult,
    in_thread,
    read_only_advice,
    register_database,
)
from accord.engine.errors import ConfigError
from accord.engine.specbase import Spec


class SQLiteDatabase(Spec):
    """SQLite database file."""

    name: str
    type: Literal["sqlite"]
    path: str
    read_only: bool = True
    max_concurrency: int | None = Field(None, ge=1)


COLUMNS_SQL = (
    "SELECT m.name, p.name, p.type FROM sqlite_master m, pragma_table_info(m.name) p "
    "WHERE m.type IN ('table', 'view') ORDER BY m.name, p.cid"
)


class SQLite:
    """SQLite file, opened read-only (`mode=ro`) unless `read_only: false`."""

    dialect = "sqlite"

    def __init__(self, spec: SQLiteDatabase, root: Path) -> None:
        self.spec = spec
        self.name = spec.name
        self.path = root / spec.path

    def _run(self, sql: str, limit: int | None, interrupter: Interrupter) -> QueryResult:
        if not self.path.is_file():
            raise ConfigError(f"database '{self.name}': file '{self.spec.path}' not found")
        mode = "ro" if self.spec.read_only else "rw"
        conn = sqlite3.connect(
            f"{self.path.resolve().as_uri()}?mode={mode}", uri=True, check_same_thread=False
        )
        interrupter.arm(conn.interrupt)
        try:
            try:
                cursor = conn.execute(sql)
            except sqlite3.ProgrammingError as exc:
                if "one statement at a time" not in str(exc):
                    raise
                conn.executescript(sql)  # several statements: run them all, return no rows
                return QueryResult([], [], sql)
            if cursor.description is None:
                conn.commit()
                return QueryResult([], [], sql)
            columns = [d[0] for d in cursor.description]
            rows = cursor.fetchmany(limit) if limit is not None else cursor.fetchall()
            return QueryResult(columns, [tuple(r) for r in rows], sql)
        except sqlite3.Error as exc:
            message = str(exc)
            if "readonly" in message:
                message += f" ({read_only_advice()})"
            raise QueryError(message) from None
        finally:
            interrupter.disarm()
            conn.close()

    async def query(self, sql: str, limit: int | None = None) -> QueryResult:
        return await in_thread(self._run, sql, limit)

    async def columns(self) -> QueryResult:
        return await self.query(COLUMNS_SQL)

    def close(self) -> None:
        return None


def _needs(spec: SQLiteDatabase) -> list[PathNeed]:
    return [
        PathNeed("path", spec.path, "file", "SQLite file", "correct 'path', or create the file")
    ]


register_database(DatabaseKind("sqlite", SQLiteDatabase, SQLite, _needs))
