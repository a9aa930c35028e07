"""Snowflake through snowflake-connector-python (the `snowflake` extra), with Oxy's keys:
account, username, password or password_var (else private_key_path, else the browser
login Oxy falls back to), warehouse, database, schema, role, and row-level `filters` set as
session variables (`SET TENANT_ID = '42'`) before each query. Snowflake has no read-only
session: a read-only entry (the default) refuses any statement that is not a read before
sending it; give a `role` granted SELECT only for the server to enforce it too.

`host`, `port` and `protocol` (accord's own keys) reach a private endpoint or an emulator."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ..errors import ConfigError
from ..specbase import Spec, oxy_ignored
from . import filters as row_filters
from .base import (
    DatabaseKind,
    Interrupter,
    QueryError,
    QueryResult,
    client_library,
    from_environment,
    in_thread,
    read_statement,
    register_database,
)

MODULE, EXTRA = "snowflake.connector", "snowflake"


class SnowflakeDatabase(Spec):
    """Snowflake (snowflake-connector-python)."""

    name: str
    type: Literal["snowflake"]
    account: str | None = None
    username: str | None = None
    password: str | None = Field(None, description="The password (prefer password_var).")
    password_var: str | None = Field(None, description="Env var holding the password.")
    private_key_path: str | None = Field(None, description="A PKCS#8 key file (key-pair login).")
    warehouse: str | None = None
    database: str | None = None
    schema_: str | None = Field(None, alias="schema")
    role: str | None = None
    filters: dict[str, Any] = Field(default_factory=dict, description="Row-level filters.")
    host: str | None = Field(None, description="An endpoint other than the account's.")
    port: int | None = None
    protocol: Literal["https", "http"] | None = None
    read_only: bool = True
    max_concurrency: int | None = Field(None, ge=1)
    datasets: Any = oxy_ignored()
    browser_timeout_secs: Any = oxy_ignored()
    cache_dir: Any = oxy_ignored()


# a read, by its first word: Snowflake runs one statement per call, so this is the statement
_READS = frozenset({"SELECT", "WITH", "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "LIST", "LS", "("})
_COMMENT = re.compile(r"/\*.*?\*/|--[^\n]*|//[^\n]*", re.DOTALL)
_STRING = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"]|\"\")*\"|\$\$.*?\$\$", re.DOTALL)


def check_read(sql: str) -> None:
    read_statement(sql, _READS, _COMMENT, _STRING)


class Snowflake:
    """Snowflake through snowflake-connector-python."""

    dialect = "snowflake"

    def __init__(
        self, spec: SnowflakeDatabase, root: Path, datasets: tuple[Path, ...] = ()
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self.root = root
        self.filters: dict[str, Any] = {}

    def use_filters(self, values: dict[str, Any]) -> None:
        self.filters = values

    def settings(self) -> dict[str, Any]:
        spec = self.spec
        for field in ("account", "username", "warehouse", "database"):
            if getattr(spec, field) is None:
                raise ConfigError(f"database '{self.name}': '{field}' is required for snowflake")
        out: dict[str, Any] = {
            "account": spec.account,
            "user": spec.username,
            "warehouse": spec.warehouse,
            "database": spec.database,
            "login_timeout": 30,
            "session_parameters": {"CLIENT_OUT_OF_BAND_TELEMETRY_ENABLED": False},
        }
        for key in ("role", "host", "port", "protocol"):
            if getattr(spec, key) is not None:
                out[key] = getattr(spec, key)
        if spec.schema_ is not None:
            out["schema"] = spec.schema_
        if spec.password_var or spec.password is not None:
            out = from_environment(
                self.name,
                {**out, "password": spec.password},
                {"password": (spec.password_var, "password_var")},
            )
        elif spec.private_key_path:
            out["private_key_file"] = str(self.root / spec.private_key_path)
        else:
            out["authenticator"] = "externalbrowser"  # Oxy's fallback: a browser login
        return out

    def filter_statements(self) -> list[str]:
        """`SET NAME = 'value'` for each filter, as Oxy sets them; over Snowflake's limit on
        the values' size the query is refused."""
        statements, size = [], 0
        for name, value in self.filters.items():
            if value is None:
                continue
            text = row_filters.session_value(value)
            size += len(text.encode())
            statements.append(f"SET {name.upper()} = '{text.replace(chr(39), chr(39) * 2)}'")
        if size > row_filters.SNOWFLAKE_LIMIT:
            raise ConfigError(
                f"database '{self.name}': the filters' values take {size} bytes, over "
                f"Snowflake's {row_filters.SNOWFLAKE_LIMIT} for session variables"
            )
        return statements

    def _run(self, sql: str, limit: int | None, interrupter: Interrupter) -> QueryResult:
        client_library(self.name, "snowflake", MODULE, EXTRA)
        import snowflake.connector as connector

        if self.spec.read_only:
            check_read(sql)
        statements = self.filter_statements()
        try:
            conn = connector.connect(**self.settings())
        except connector.Error as exc:
            raise QueryError(_message(exc)) from None
        try:
            cursor = conn.cursor()
            for statement in statements:
                cursor.execute(statement)
            # closing the session ends the statement it runs
            interrupter.arm(lambda: _abort(cursor))
            try:
                cursor.execute(sql)
            finally:
                interrupter.disarm()
            if cursor.description is None:
                return QueryResult([], [], sql)
            columns = [d[0] for d in cursor.description]
            rows = cursor.fetchmany(limit) if limit is not None else cursor.fetchall()
            return QueryResult(columns, [tuple(r) for r in rows], sql)
        except connector.Error as exc:
            raise QueryError(_message(exc)) from None
        finally:
            with contextlib.suppress(Exception):
                conn.close()

    async def query(self, sql: str, limit: int | None = None) -> QueryResult:
        return await in_thread(self._run, sql, limit)

    async def columns(self) -> QueryResult:
        return await self.query(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema <> 'INFORMATION_SCHEMA' ORDER BY table_name, ordinal_position"
        )

    async def validate(self, sql: str) -> None:
        if self.spec.read_only:
            check_read(sql)
        await self.query(f"EXPLAIN {sql.strip().rstrip(';')}")

    def close(self) -> None:
        return None


def _abort(cursor: Any) -> None:
    query_id = getattr(cursor, "sfqid", None)
    with contextlib.suppress(Exception):
        if query_id:
            cursor.connection.cursor().execute(f"SELECT SYSTEM$CANCEL_QUERY('{query_id}')")


def _message(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


register_database(DatabaseKind("snowflake", SnowflakeDatabase, Snowflake, library=(MODULE, EXTRA)))
