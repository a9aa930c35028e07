"""DuckDB: an in-memory database over a folder of CSV/Parquet files (one view per file), or
a database file. Read-only unless its entry says `read_only: false`."""

from __future__ import annotations

import contextlib
import re
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, model_validator

from ..errors import ConfigError
from ..specbase import Spec, oxy_ignored
from .base import (
    DatabaseKind,
    Interrupter,
    PathNeed,
    QueryError,
    QueryResult,
    in_thread,
    read_only_advice,
    register_database,
    sql_string,
)


class DuckDBDatabase(Spec):
    """DuckDB: an in-memory database over a folder of CSV/Parquet files, or a database file."""

    name: str
    type: Literal["duckdb"]
    dataset: str | None = Field(
        None,
        validation_alias=AliasChoices("dataset", "file_search_path"),
        description="Folder of .csv/.parquet files, one view each (Oxy: also `file_search_path`).",
    )
    path: str | None = Field(None, description="A .duckdb database file.")
    read_only: bool = Field(True, description="Reject statements that write.")
    max_concurrency: int | None = Field(None, ge=1, description="Concurrent queries allowed.")
    key_path: Any = oxy_ignored()

    @model_validator(mode="after")
    def _one_source(self) -> DuckDBDatabase:
        if (self.dataset is None) == (self.path is None):
            raise ValueError("give exactly one of 'dataset' (a folder) or 'path' (a file)")
        return self


COLUMNS_SQL = (
    "SELECT table_name, column_name, data_type FROM information_schema.columns "
    "ORDER BY table_name, ordinal_position"
)

_READ_STATEMENTS = {"SELECT", "EXPLAIN", "PRAGMA", "RELATION"}


class DuckDB:
    """DuckDB over a folder of CSV/Parquet files (in memory, one view per file) or a file."""

    dialect = "duckdb"

    def __init__(self, spec: DuckDBDatabase, root: Path, datasets: tuple[Path, ...] = ()) -> None:
        self.spec = spec
        self.name = spec.name
        self.root = root
        self.datasets = datasets  # the project's dataset folders: all a read-only one may read
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
                conn.execute(f"SET GLOBAL file_search_path = {sql_string(str(self.root))}")
            else:
                assert self.spec.dataset is not None
                folder = (self.root / self.spec.dataset).resolve()
                if not folder.is_dir():
                    raise ConfigError(
                        f"database '{self.name}': dataset folder '{self.spec.dataset}' not found "
                        f"under {self.root}"
                    )
                conn = duckdb.connect(":memory:")
                conn.execute(f"SET GLOBAL file_search_path = {sql_string(str(folder))}")
                for view, reader in _dataset_views(folder):
                    try:
                        conn.execute(f'CREATE VIEW "{view}" AS SELECT * FROM {reader}')
                    except duckdb.Error as exc:
                        first = str(exc).strip().splitlines()[0]
                        raise ConfigError(
                            f"database '{self.name}': dataset file for '{view}' cannot be "
                            f"read: {first}"
                        ) from None
            if self.spec.read_only:
                search = self.root if self.spec.path is not None else folder
                _lock_down(conn, self.datasets, search.resolve())
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
                _check_reads(cursor, sql)
            cursor.execute(sql)
            if cursor.description is None:
                return QueryResult([], [], sql)
            columns = [d[0] for d in cursor.description]
            rows = cursor.fetchmany(limit) if limit is not None else cursor.fetchall()
            return QueryResult(columns, [tuple(r) for r in rows], sql)
        except duckdb.Error as exc:
            raise QueryError(_message(exc, self.spec.read_only)) from None
        finally:
            interrupter.disarm()
            with self._lock:
                self._active.discard(cursor)
            cursor.close()

    async def query(self, sql: str, limit: int | None = None) -> QueryResult:
        return await in_thread(self._run, sql, limit)

    async def columns(self) -> QueryResult:
        return await self.query(COLUMNS_SQL)

    async def validate(self, sql: str) -> None:
        """Parse and plan one statement; nothing runs."""
        await in_thread(self._validate, sql, None)

    def _validate(self, sql: str, limit: int | None, interrupter: Interrupter) -> QueryResult:
        import duckdb

        cursor = self._connect().cursor()
        try:
            statements = cursor.extract_statements(sql)
            if len(statements) != 1:
                raise QueryError(f"give one statement to check ({len(statements)} given)")
            if self.spec.read_only:
                _check_reads(cursor, sql)
            # EXPLAIN (without ANALYZE) plans the statement and runs nothing; an EXPLAIN
            # ANALYZE given here is not valid after it, so it cannot run either
            cursor.execute("EXPLAIN " + statements[0].query)
            return QueryResult([], [], sql)
        except duckdb.Error as exc:
            raise QueryError(_message(exc, self.spec.read_only)) from None
        finally:
            cursor.close()

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


def _lock_down(conn: Any, datasets: tuple[Path, ...], search: Path) -> None:
    """Read-only at the engine level: no file outside the project's dataset folders can be
    read or written (no COPY TO, ATTACH, read_text('/etc/passwd')), no extension installed or
    loaded, and no setting changed back by a query.

    DuckDB checks a relative name (`FROM 'sales.csv'`) against the process's working folder,
    before the search path finds it in the dataset folder: the datasets' files are allowed by
    the names they have relative to `search` (the database's file_search_path).
    """
    names = [
        str(file.relative_to(search))
        for folder in datasets
        for file in sorted(folder.iterdir())
        if file.is_file() and file.is_relative_to(search)
    ]
    folders = ", ".join(sql_string(str(folder)) for folder in datasets)
    conn.execute(f"SET allowed_directories = [{folders}]")
    conn.execute(f"SET allowed_paths = [{', '.join(sql_string(n) for n in names)}]")
    conn.execute("SET enable_external_access = false")
    conn.execute("SET lock_configuration = true")


_EXPLAIN = re.compile(r"\s*EXPLAIN\s+(?:ANALYZE\s+|ANALYSE\s+)?(.*)", re.IGNORECASE | re.DOTALL)


# PRAGMAs that only describe the database or DuckDB itself. Every other one is refused on a
# read-only database: import_database runs a folder's schema.sql and load.sql,
# json_execute_serialized_sql runs any statement, copy_database and force_checkpoint write,
# and the profiling ones write a file.
_READ_PRAGMAS = frozenset({
    "collations", "database_list", "database_size", "extension_versions", "functions",
    "metadata_info", "platform", "show", "show_databases", "show_tables",
    "show_tables_expanded", "storage_info", "table_info", "user_agent", "version",
})  # fmt: skip
_GAP = r"(?:\s|--[^\n]*(?:\n|$)|/\*.*?\*/)*"
_PRAGMA_NAME = re.compile(
    rf"{_GAP}PRAGMA{_GAP}(\"(?:[^\"]|\"\")*\"|[A-Za-z_][A-Za-z0-9_$]*)", re.IGNORECASE | re.DOTALL
)


def _pragma_name(query: str) -> str | None:
    """The PRAGMA a statement calls, lower case; None when it cannot be told."""
    match = _PRAGMA_NAME.match(query)
    if match is None:
        return None
    name = match.group(1)
    if name.startswith('"'):
        name = name[1:-1].replace('""', '"')
    return name.lower()


def _check_reads(cursor: Any, sql: str) -> None:
    """Refuse any statement of `sql` that is not a read; EXPLAIN ANALYZE runs the statement
    it explains, so that one is checked too, and a PRAGMA must be one that only reads."""
    for statement in cursor.extract_statements(sql):
        kind = str(statement.type).rsplit(".", 1)[-1]
        if kind not in _READ_STATEMENTS:
            raise QueryError(read_only_message(kind))
        if kind == "PRAGMA":
            name = _pragma_name(statement.query)
            if name not in _READ_PRAGMAS:
                raise QueryError(
                    f"the database is read-only: PRAGMA {name or '(unrecognised)'} is not "
                    f"allowed (only PRAGMAs that read: {', '.join(sorted(_READ_PRAGMAS))}); "
                    f"{read_only_advice()}"
                )
        explained = _EXPLAIN.match(statement.query) if kind == "EXPLAIN" else None
        if explained is not None:
            _check_reads(cursor, explained.group(1))


def _message(exc: Exception, read_only: bool) -> str:
    message = str(exc).strip()
    if read_only and message.startswith("Permission Error"):
        message += (
            " (the database is read-only: its queries read files of the project's dataset "
            "folders only; add the folder as a dataset (a duckdb entry with 'dataset:') in "
            f"config.yml, or {read_only_advice()})"
        )
    return message


def read_only_message(kind: str) -> str:
    if kind == "MULTI":  # DuckDB plans a PIVOT without an IN list as several statements
        return (
            "the database is read-only and this statement runs several statements (a PIVOT "
            "without 'IN (...)' does): list the pivot values with IN (...), or set "
            "read_only: false on its entry in config.yml"
        )
    return f"the database is read-only: {kind} statements are not allowed ({read_only_advice()})"


def _dataset_views(folder: Path) -> list[tuple[str, str]]:
    views = []
    for path in sorted(folder.iterdir()):
        suffix = path.suffix.lower()
        if suffix in (".csv", ".parquet") and not path.is_file():
            # a FIFO or a device would block the query's thread in open() for ever
            raise ConfigError(
                f"dataset file '{path}' is not a regular file (a pipe, a device or a broken "
                "link): remove it or move it out of the dataset folder"
            )
        if suffix == ".csv":
            reader = f"read_csv_auto({sql_string(str(path))})"
        elif suffix == ".parquet":
            reader = f"read_parquet({sql_string(str(path))})"
        else:
            continue
        views.append((path.stem.replace('"', ""), reader))
    return views


def _needs(spec: DuckDBDatabase) -> list[PathNeed]:
    if spec.dataset is not None:
        advice = "create the folder with its .csv/.parquet files, or correct 'dataset'"
        return [PathNeed("dataset", spec.dataset, "folder", "dataset folder", advice)]
    if spec.path is not None and spec.read_only:
        # Oxy's examples name files that are not there; a writable one is created
        advice = "queries on it will fail; correct 'path', or set read_only: false to create it"
        return [PathNeed("path", spec.path, "file", "file", advice, error=False)]
    return []


register_database(DatabaseKind("duckdb", DuckDBDatabase, DuckDB, _needs))
