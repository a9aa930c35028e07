"""Database connections: DuckDB (dataset folders and files), SQLite, PostgreSQL.

Queries run in worker threads so independent SQL tasks overlap. A query whose task is
cancelled (its `timeout`, or fail-fast) is stopped in the database, not left running in its
thread: DuckDB and SQLite are interrupted, PostgreSQL is sent a cancel request.

Databases are read-only unless their config entry says `read_only: false`: DuckDB files and
SQLite open in read-only mode, and every engine rejects a statement that is not a query
before running it.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import os
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accord.engine.errors import AccordError, ConfigError
from accord.engine.render import TableView
from accord.engine.spec import DuckDBDatabase, PostgresDatabase, RemoteDatabase, SQLiteDatabase


class QueryError(AccordError):
    """The database rejected a statement; the message is the database's own."""

    exit_code = 1


class QueryResult(TableView):
    """A table plus the SQL that produced it (exported by `format: sql`)."""

    __slots__ = ("_sql",)

    def __init__(self, columns: list[str], rows: list[tuple[Any, ...]], sql: str) -> None:
        super().__init__(columns, rows)
        self._sql = sql

    @property
    def sql(self) -> str:
        return self._sql


class Interrupter:
    """The way to stop one query running in a worker thread, set by the thread once the
    query has a connection; fired from the event loop when the awaiting task is cancelled."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stop: Callable[[], None] | None = None
        self.fired = False

    def arm(self, stop: Callable[[], None]) -> None:
        with self._lock:
            self._stop = stop
            fired = self.fired
        if fired:  # cancelled while connecting: stop as soon as there is something to stop
            stop()

    def disarm(self) -> None:
        """The query is over: waits for a stop in progress, so none reaches a closed handle."""
        with self._lock:
            self._stop = None

    def fire(self) -> None:
        with self._lock:
            self.fired = True
            if self._stop is not None:
                self._stop()


async def _in_thread(
    run: Callable[[str, int | None, Interrupter], QueryResult], sql: str, limit: int | None
) -> QueryResult:
    interrupter = Interrupter()
    try:
        return await asyncio.to_thread(run, sql, limit, interrupter)
    except asyncio.CancelledError:
        interrupter.fire()
        raise


_READ_STATEMENTS = {"SELECT", "EXPLAIN", "PRAGMA", "RELATION"}


class DuckDB:
    """DuckDB over a folder of CSV/Parquet files (in memory, one view per file) or a file."""

    dialect = "duckdb"

    def __init__(self, spec: DuckDBDatabase, root: Path) -> None:
        self.spec = spec
        self.name = spec.name
        self.root = root
        self._conn: Any = None
        self._lock = threading.Lock()
        self._active: set[Any] = set()  # cursors running a query, interrupted by close()

    def _connect(self) -> Any:
        import duckdb

        with self._lock:
            if self._conn is not None:
                return self._conn
            if self.spec.path is not None:
                target = self.root / self.spec.path
                if not target.exists() and self.spec.read_only:
                    raise ConfigError(
                        f"database '{self.name}': file '{self.spec.path}' not found under "
                        f"{self.root}"
                    )
                try:
                    conn = duckdb.connect(str(target), read_only=self.spec.read_only)
                except duckdb.Error as exc:
                    raise ConfigError(f"database '{self.name}': cannot open: {exc}") from None
                # `FROM 'data/x.csv'` is relative to the project root, like every other path
                conn.execute(f"SET GLOBAL file_search_path = {_sql_string(str(self.root))}")
            else:
                assert self.spec.dataset is not None
                folder = (self.root / self.spec.dataset).resolve()
                if not folder.is_dir():
                    raise ConfigError(
                        f"database '{self.name}': dataset folder '{self.spec.dataset}' not found "
                        f"under {self.root}"
                    )
                conn = duckdb.connect(":memory:")
                conn.execute(f"SET GLOBAL file_search_path = {_sql_string(str(folder))}")
                for view, reader in _dataset_views(folder):
                    conn.execute(f'CREATE VIEW "{view}" AS SELECT * FROM {reader}')
            self._conn = conn
            return conn

    def _run(self, sql: str, limit: int | None, interrupter: Interrupter) -> QueryResult:
        import duckdb

        cursor = self._connect().cursor()
        with self._lock:
            self._active.add(cursor)
        interrupter.arm(cursor.interrupt)
        try:
            if self.spec.read_only:
                for statement in cursor.extract_statements(sql):
                    kind = str(statement.type).rsplit(".", 1)[-1]
                    if kind not in _READ_STATEMENTS:
                        raise QueryError(_read_only_message(kind))
            cursor.execute(sql)
            if cursor.description is None:
                return QueryResult([], [], sql)
            columns = [d[0] for d in cursor.description]
            rows = cursor.fetchmany(limit) if limit is not None else cursor.fetchall()
            return QueryResult(columns, [tuple(r) for r in rows], sql)
        except duckdb.Error as exc:
            raise QueryError(str(exc).strip()) from None
        finally:
            interrupter.disarm()
            with self._lock:
                self._active.discard(cursor)
            cursor.close()

    async def query(self, sql: str, limit: int | None = None) -> QueryResult:
        return await _in_thread(self._run, sql, limit)

    def close(self) -> None:
        import duckdb

        with self._lock:
            # A query whose task was cancelled (fail-fast) still runs in its worker thread:
            # interrupt it, and leave the connection to the garbage collector if it is busy.
            for cursor in self._active:
                cursor.interrupt()
            conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(duckdb.Error):
                conn.close()


def _read_only_message(kind: str) -> str:
    if kind == "MULTI":  # DuckDB plans a PIVOT without an IN list as several statements
        return (
            "the database is read-only and this statement runs several statements (a PIVOT "
            "without 'IN (...)' does): list the pivot values with IN (...), or set "
            "read_only: false on its entry in config.yml"
        )
    return (
        f"the database is read-only: {kind} statements are not allowed "
        "(set read_only: false on its entry in config.yml to allow writes)"
    )


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _dataset_views(folder: Path) -> list[tuple[str, str]]:
    views = []
    for path in sorted(folder.iterdir()):
        suffix = path.suffix.lower()
        if suffix == ".csv":
            reader = f"read_csv_auto({_sql_string(str(path))})"
        elif suffix == ".parquet":
            reader = f"read_parquet({_sql_string(str(path))})"
        else:
            continue
        views.append((path.stem.replace('"', ""), reader))
    return views


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
                message += " (set read_only: false on its entry in config.yml to allow writes)"
            raise QueryError(message) from None
        finally:
            interrupter.disarm()
            conn.close()

    async def query(self, sql: str, limit: int | None = None) -> QueryResult:
        return await _in_thread(self._run, sql, limit)

    def close(self) -> None:
        return None


class Postgres:
    """PostgreSQL through psycopg 3; read-only sessions unless `read_only: false`."""

    dialect = "postgres"

    def __init__(self, spec: PostgresDatabase, root: Path) -> None:
        self.spec = spec
        self.name = spec.name

    def _run(self, sql: str, limit: int | None, interrupter: Interrupter) -> QueryResult:
        try:
            import psycopg
        except ImportError:
            raise ConfigError(
                f"database '{self.name}' is PostgreSQL: install psycopg ('pip install "
                '"psycopg[binary]"\')'
            ) from None
        password = None
        if self.spec.password_var:
            password = os.environ.get(self.spec.password_var)
            if password is None:
                raise ConfigError(
                    f"database '{self.name}': environment variable {self.spec.password_var} "
                    "(password_var) is not set"
                )
        try:
            with psycopg.connect(
                host=self.spec.host,
                port=self.spec.port,
                user=self.spec.user,
                password=password,
                dbname=self.spec.database,
                connect_timeout=10,
            ) as conn:
                conn.read_only = self.spec.read_only
                # the cancel request is a connection of its own: not on the event loop
                interrupter.arm(lambda: _start_thread(_cancel(conn), "accord-pg-cancel"))
                try:
                    with conn.cursor() as cursor:
                        cursor.execute(sql)
                        if cursor.description is None:
                            return QueryResult([], [], sql)
                        columns = [d.name for d in cursor.description]
                        rows = cursor.fetchmany(limit) if limit is not None else cursor.fetchall()
                        return QueryResult(columns, [tuple(r) for r in rows], sql)
                finally:
                    interrupter.disarm()
        except psycopg.Error as exc:
            raise QueryError(str(exc).strip()) from None

    async def query(self, sql: str, limit: int | None = None) -> QueryResult:
        return await _in_thread(self._run, sql, limit)

    def close(self) -> None:
        return None


def _cancel(conn: Any) -> Callable[[], None]:
    def cancel() -> None:
        import psycopg

        # the query may have ended meanwhile: then there is nothing to cancel
        with contextlib.suppress(psycopg.Error):
            conn.cancel_safe(timeout=10)

    return cancel


def _start_thread(target: Callable[[], Any], name: str) -> None:
    threading.Thread(target=target, name=name, daemon=True).start()


Database = DuckDB | SQLite | Postgres


@dataclass
class Databases:
    """The project's databases by name, connected on first use."""

    root: Path
    specs: dict[str, Any]
    default: str | None

    def __post_init__(self) -> None:
        self._open: dict[str, Database] = {}
        self._lock = threading.Lock()

    def resolve_name(self, name: str | None) -> str:
        """The database a task means: its own `database`, else the project default."""
        if name is not None:
            return name
        if self.default is not None:
            return self.default
        raise ConfigError(
            "no database named and no default: add 'database: <name>' to the task or "
            "'defaults: {database: <name>}' to config.yml"
        )

    def check(self, name: str) -> str | None:
        """None when `name` is usable, else a message saying what to do."""
        if name in self.specs:
            spec = self.specs[name]
            if isinstance(spec, RemoteDatabase):
                return (
                    f"database '{name}' is of type {spec.type}, which accord cannot connect to: "
                    "map it to a duckdb, sqlite or postgres database in config.yml"
                )
            return None
        known = sorted(self.specs)
        match = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean '{match[0]}'?" if match else ""
        listing = ", ".join(known) if known else "none configured"
        return f"unknown database '{name}'{hint} (databases: {listing})"

    def get(self, name: str) -> Database:
        with self._lock:
            if name in self._open:
                return self._open[name]
            problem = self.check(name)
            if problem is not None:
                raise ConfigError(problem)
            spec = self.specs[name]
            db: Database
            if isinstance(spec, DuckDBDatabase):
                db = DuckDB(spec, self.root)
            elif isinstance(spec, SQLiteDatabase):
                db = SQLite(spec, self.root)
            else:
                db = Postgres(spec, self.root)
            self._open[name] = db
            return db

    def limits(self) -> dict[str, int]:
        """Concurrency limits by resource name (`db:<name>`)."""
        out = {}
        for name, spec in self.specs.items():
            limit = getattr(spec, "max_concurrency", None)
            if limit:
                out[f"db:{name}"] = int(limit)
        return out

    def close(self) -> None:
        for db in self._open.values():
            db.close()
        self._open.clear()
