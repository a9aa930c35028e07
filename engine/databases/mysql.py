"""MySQL and MariaDB through PyMySQL (the `mysql` extra). Read-only unless the entry says
`read_only: false`: each query runs in a session whose transactions are READ ONLY, and a
statement that is not a read (or a SELECT writing a file on the server) is refused before it
is sent. A cancelled query is stopped with KILL QUERY from a second connection."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any, Literal

from ..errors import ConfigError
from .base import (
    DatabaseKind,
    Interrupter,
    QueryError,
    QueryResult,
    ServerEntry,
    client_library,
    from_environment,
    in_thread,
    read_only_advice,
    read_statement,
    register_database,
)

MODULE, EXTRA = "pymysql", "mysql"


class MySQLDatabase(ServerEntry):
    """MySQL or MariaDB server (PyMySQL)."""

    type: Literal["mysql"]
    port: int = 3306


COLUMNS_SQL = (
    "SELECT table_name, column_name, data_type FROM information_schema.columns "
    "WHERE table_schema = DATABASE() ORDER BY table_name, ordinal_position"
)

# what a read-only MySQL query may start with; the server's READ ONLY transaction refuses
# the writes a statement hides (a function that writes), this check the rest
_READS = frozenset({"SELECT", "WITH", "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "VALUES", "TABLE",
                    "("})  # fmt: skip
_COMMENT = re.compile(r"/\*.*?\*/|--[^\n]*|#[^\n]*", re.DOTALL)
_STRING = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\"|`(?:[^`]|``)*`", re.DOTALL)
_INTO_FILE = re.compile(r"\bINTO\s+(?:OUTFILE|DUMPFILE)\b", re.IGNORECASE)


def check_read(sql: str) -> None:
    """Refuse a statement that is not a read on a read-only MySQL database."""
    bare = read_statement(sql, _READS, _COMMENT, _STRING)
    if _INTO_FILE.search(bare):
        raise QueryError(
            f"the database is read-only: SELECT ... INTO OUTFILE/DUMPFILE writes a file on the "
            f"server ({read_only_advice()})"
        )


class MySQL:
    """MySQL/MariaDB through PyMySQL; read-only sessions unless `read_only: false`."""

    dialect = "mysql"

    def __init__(self, spec: MySQLDatabase, root: Path, datasets: tuple[Path, ...] = ()) -> None:
        self.spec = spec
        self.name = spec.name

    def settings(self) -> dict[str, Any]:
        spec = self.spec
        out = from_environment(
            self.name,
            {
                "host": spec.host,
                "port": spec.port,
                "user": spec.user,
                "password": "",
                "database": spec.database,
            },
            {
                "host": (spec.host_var, "host_var"),
                "port": (spec.port_var, "port_var"),
                "user": (spec.user_var, "user_var"),
                "database": (spec.database_var, "database_var"),
                "password": (spec.password_var, "password_var"),
            },
        )
        if not str(out["port"]).isdigit():
            raise ConfigError(
                f"database '{self.name}': port {out['port']!r} (from {spec.port_var}) is not a "
                "number"
            )
        out["port"] = int(out["port"])
        return out

    def _connect(self, pymysql: Any) -> Any:
        try:
            return pymysql.connect(**self.settings(), connect_timeout=10, charset="utf8mb4")
        except pymysql.Error as exc:
            raise QueryError(_message(exc)) from None

    def _run(self, sql: str, limit: int | None, interrupter: Interrupter) -> QueryResult:
        pymysql = client_library(self.name, "mysql", MODULE, EXTRA)
        if self.spec.read_only:
            check_read(sql)
        conn = self._connect(pymysql)
        try:
            with conn.cursor() as cursor:
                if self.spec.read_only:
                    cursor.execute("SET SESSION TRANSACTION READ ONLY")
                thread_id = conn.thread_id()
                interrupter.arm(lambda: self._kill(pymysql, thread_id))
                try:
                    cursor.execute(sql)
                finally:
                    interrupter.disarm()
                if cursor.description is None:
                    conn.commit()
                    return QueryResult([], [], sql)
                columns = [d[0] for d in cursor.description]
                rows = cursor.fetchmany(limit) if limit is not None else cursor.fetchall()
                return QueryResult(columns, [tuple(r) for r in rows], sql)
        except pymysql.Error as exc:
            raise QueryError(_message(exc)) from None
        finally:
            with contextlib.suppress(Exception):
                conn.close()

    def _kill(self, pymysql: Any, thread_id: int) -> None:
        """KILL QUERY from a connection of its own: the query's connection is busy."""
        with contextlib.suppress(pymysql.Error):
            killer = self._connect(pymysql)
            try:
                with killer.cursor() as cursor:
                    cursor.execute(f"KILL QUERY {int(thread_id)}")
            finally:
                killer.close()

    async def query(self, sql: str, limit: int | None = None) -> QueryResult:
        return await in_thread(self._run, sql, limit)

    async def columns(self) -> QueryResult:
        return await self.query(COLUMNS_SQL)

    async def validate(self, sql: str) -> None:
        """EXPLAIN plans the statement without running it."""
        if ";" in sql.strip().rstrip(";"):
            raise QueryError("give one statement to check")
        if self.spec.read_only:
            check_read(sql)
        await self.query(f"EXPLAIN {sql.strip().rstrip(';')}")

    def close(self) -> None:
        return None


def _message(exc: Exception) -> str:
    args: tuple[Any, ...] = tuple(getattr(exc, "args", ()))
    if len(args) == 2 and isinstance(args[0], int):
        code, text = args[0], args[1]
        message = f"({code}) {text}"
        if code == 1792:  # ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
            message += f" (the database is read-only: {read_only_advice()})"
        return message
    return str(exc).strip()


register_database(DatabaseKind("mysql", MySQLDatabase, MySQL, library=(MODULE, EXTRA)))
