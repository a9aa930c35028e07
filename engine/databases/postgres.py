"""PostgreSQL through psycopg 3 (the `postgres` extra); read-only sessions unless
`read_only: false`. A cancelled query gets a cancel request. Amazon Redshift speaks the
PostgreSQL wire protocol and is reached the same way, as Oxy does (`type: redshift`, port
5439 unless given)."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from .. import keys
from ..errors import ConfigError
from .base import (
    DatabaseKind,
    Interrupter,
    QueryError,
    QueryResult,
    ServerEntry,
    client_library,
    in_thread,
    register_database,
)


class PostgresDatabase(ServerEntry):
    """PostgreSQL server (psycopg 3)."""

    type: Literal["postgres"]
    port: int = 5432


class RedshiftDatabase(PostgresDatabase):
    """Amazon Redshift, through the PostgreSQL wire protocol (psycopg 3)."""

    type: Literal["redshift"]  # type: ignore[assignment]
    port: int = 5439


COLUMNS_SQL = (
    "SELECT table_name, column_name, data_type FROM information_schema.columns "
    "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') "
    "ORDER BY table_name, ordinal_position"
)


class Postgres:
    """PostgreSQL through psycopg 3; read-only sessions unless `read_only: false`."""

    dialect = "postgres"

    def __init__(self, spec: PostgresDatabase, root: Path, datasets: tuple[Path, ...] = ()) -> None:
        self.spec = spec
        self.name = spec.name
        self.dialect = spec.type  # postgres or redshift: the semantic layer's dialect

    def _run(self, sql: str, limit: int | None, interrupter: Interrupter) -> QueryResult:
        psycopg = client_library(self.name, self.spec.type, "psycopg", "postgres")
        try:
            with psycopg.connect(**self.settings(), connect_timeout=10) as conn:
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

    def settings(self) -> dict[str, Any]:
        """Connection settings; a `*_var` names the environment variable holding one."""
        spec = self.spec
        out: dict[str, Any] = {
            "host": spec.host,
            "port": spec.port,
            "user": spec.user,
            "password": None,
            "dbname": spec.database,
        }
        for key, var, field in (
            ("host", spec.host_var, "host_var"),
            ("port", spec.port_var, "port_var"),
            ("user", spec.user_var, "user_var"),
            ("dbname", spec.database_var, "database_var"),
            ("password", spec.password_var, "password_var"),
        ):
            if not var:
                continue
            # a password through engine/keys: masked wherever it could show
            value = keys.read(var) if key == "password" else os.environ.get(var)
            if value is None:
                raise ConfigError(
                    f"database '{self.name}': environment variable {var} ({field}) is not set: "
                    "set it, or give the value in config.yml"
                )
            out[key] = value
        if not str(out["port"]).isdigit():
            raise ConfigError(
                f"database '{self.name}': port {out['port']!r} (from {spec.port_var}) is not a "
                "number"
            )
        return out

    async def query(self, sql: str, limit: int | None = None) -> QueryResult:
        return await in_thread(self._run, sql, limit)

    async def columns(self) -> QueryResult:
        return await self.query(COLUMNS_SQL)

    async def validate(self, sql: str) -> None:
        """EXPLAIN through the extended protocol: one statement, planned and never run."""
        if ";" in sql.strip().rstrip(";"):
            raise QueryError("give one statement to check")
        await self.query(f"EXPLAIN {sql.strip().rstrip(';')}")

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


register_database(
    DatabaseKind("postgres", PostgresDatabase, Postgres, library=("psycopg", "postgres"))
)
register_database(
    DatabaseKind("redshift", RedshiftDatabase, Postgres, library=("psycopg", "postgres"))
)
