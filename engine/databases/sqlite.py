"""SQLite: a database file, opened read-only (`mode=ro`) unless `read_only: false`."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Literal

from pydantic import Field

from ..errors import ConfigError
from ..specbase import Spec
from .base import (
    DatabaseKind,
    Interrupter,
    PathNeed,
    QueryError,
    QueryResult,
    in_thread,
    read_only_advice,
    register_database,
)


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

    def __init__(self, spec: SQLiteDatabase, root: Path, datasets: tuple[Path, ...] = ()) -> None:
        self.spec = spec
        self.name = spec.name
        self.path = root / spec.path

    def _run(self, sql: str, limit: int | None, interrupter: Interrupter) -> QueryResult:
        conn = self._open()
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
            raise QueryError(_message(exc)) from None
        finally:
            interrupter.disarm()
            conn.close()

    async def query(self, sql: str, limit: int | None = None) -> QueryResult:
        return await in_thread(self._run, sql, limit)

    async def columns(self) -> QueryResult:
        return await self.query(COLUMNS_SQL)

    def _open(self) -> sqlite3.Connection:
        if not self.path.is_file():
            raise ConfigError(f"database '{self.name}': file '{self.spec.path}' not found")
        mode = "ro" if self.spec.read_only else "rw"
        conn = sqlite3.connect(
            f"{self.path.resolve().as_uri()}?mode={mode}", uri=True, check_same_thread=False
        )
        if self.spec.read_only:
            # `mode=ro` covers this file only: ATTACH ('file:x.db?mode=rw'), VACUUM INTO and
            # writable pragmas reach others, so every action but reading is refused
            conn.set_authorizer(_reads_only)
        return conn

    async def validate(self, sql: str) -> None:
        """Prepare the statement under EXPLAIN QUERY PLAN: planned, never run."""
        await in_thread(self._validate, sql, None)

    def _validate(self, sql: str, limit: int | None, interrupter: Interrupter) -> QueryResult:
        conn = self._open()
        try:
            keyword = _FIRST_WORD.match(sql)
            kind = keyword.group(1).upper() if keyword else ""
            if self.spec.read_only and kind not in ("SELECT", "WITH", "VALUES"):
                # the authorizer refuses most writes as they are prepared, but VACUUM only
                # when it runs: a plan alone would call it valid
                raise QueryError(_message(sqlite3.DatabaseError(f"{kind} not authorized")))
            conn.execute("EXPLAIN QUERY PLAN " + sql)
            return QueryResult([], [], sql)
        except (sqlite3.Error, sqlite3.Warning) as exc:
            raise QueryError(_message(exc)) from None
        finally:
            conn.close()

    def close(self) -> None:
        return None


_READ_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE}
_READ_PRAGMAS = {"table_info", "table_xinfo", "index_list", "index_info", "index_xinfo",
                 "foreign_key_list", "table_list"}  # fmt: skip
_DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}


_FIRST_WORD = re.compile(r"(?:\s|--[^\n]*\n|/\*.*?\*/)*([A-Za-z]+)", re.DOTALL)


def _reads_only(
    action: int, first: str | None, second: str | None, database: str | None, *_: object
) -> int:
    """SQLite authorizer of a read-only database: reads, functions and schema pragmas."""
    if action in _READ_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION:
        denied = (second or "").lower() in _DENIED_FUNCTIONS
        return sqlite3.SQLITE_DENY if denied else sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and (first or "").lower() in _READ_PRAGMAS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_UPDATE and first == "sqlite_master" and database == "main":
        # A table-valued pragma (`pragma_table_info(name)`, accord's own schema query) is
        # set up on first use with an authorization to update the main schema table (SQLite
        # 3.40). Nothing can actually write it: the file is opened `mode=ro` and
        # `writable_schema` is not a pragma allowed here.
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def _message(exc: Exception) -> str:
    message = str(exc)
    if "readonly" in message or "not authorized" in message or "authorization" in message:
        message = (
            f"{message}: the database is read-only (reads only; no ATTACH, VACUUM or "
            f"writes); {read_only_advice()}"
        )
    return message


def _needs(spec: SQLiteDatabase) -> list[PathNeed]:
    return [
        PathNeed("path", spec.path, "file", "SQLite file", "correct 'path', or create the file")
    ]


register_database(DatabaseKind("sqlite", SQLiteDatabase, SQLite, _needs))
