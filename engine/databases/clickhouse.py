"""ClickHouse through clickhouse-connect (the `clickhouse` extra), over its HTTP interface,
with Oxy's keys: host (a URL, `host:port` or a bare host, as Oxy accepts them), user,
password_var, database, their `*_var` forms, `role`, and row-level `filters` sent as query
settings named `settings_prefix` + name, which the server's row policies read
(`getSetting('SQL_tenant_id')`). A read-only entry (the default) sends `readonly = 2`: the
server refuses every write and DDL statement, and the query may still carry the filter
settings (a settings profile's constraints keep a query from changing them)."""

from __future__ import annotations

import contextlib
import uuid
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

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
    read_only_advice,
    register_database,
)

MODULE, EXTRA = "clickhouse_connect", "clickhouse"


class ClickHouseDatabase(Spec):
    """ClickHouse server (clickhouse-connect, HTTP)."""

    name: str
    type: Literal["clickhouse"]
    host: str | None = Field(
        None,
        description="URL, host:port or host (port 8123 by default); chdb:///folder for chDB "
        "(ClickHouse's engine in the process, the chdb package).",
    )
    host_var: str | None = None
    user: str | None = None
    user_var: str | None = None
    password_var: str | None = Field(None, description="Env var holding the password.")
    database: str | None = None
    database_var: str | None = None
    role: str | None = None
    settings_prefix: str | None = Field(None, description="Prefix of the filters' settings.")
    filters: dict[str, Any] = Field(default_factory=dict, description="Row-level filters.")
    read_only: bool = True
    max_concurrency: int | None = Field(None, ge=1)
    schemas: Any = oxy_ignored()


def endpoint(host: str) -> tuple[str, str, int]:
    """(scheme, host, port) of Oxy's `host:` forms: a URL, `host:port`, or a bare host."""
    text = host.strip()
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    scheme = parts.scheme or "http"
    port = parts.port or (8443 if scheme == "https" else 8123)
    return scheme, parts.hostname or "localhost", port


class ClickHouse:
    """ClickHouse through clickhouse-connect; `readonly = 2` unless `read_only: false`."""

    dialect = "clickhouse"

    def __init__(
        self, spec: ClickHouseDatabase, root: Path, datasets: tuple[Path, ...] = ()
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self.filters: dict[str, Any] = {}

    def use_filters(self, values: dict[str, Any]) -> None:
        self.filters = values

    def settings(self) -> dict[str, Any]:
        spec = self.spec
        out = from_environment(
            self.name,
            {"host": spec.host, "user": spec.user, "password": "", "database": spec.database},
            {
                "host": (spec.host_var, "host_var"),
                "user": (spec.user_var, "user_var"),
                "database": (spec.database_var, "database_var"),
                "password": (spec.password_var, "password_var"),
            },
        )
        if not out["host"]:
            raise ConfigError(f"database '{self.name}': give 'host' (or 'host_var')")
        if str(out["host"]).startswith("chdb:"):
            # chDB, ClickHouse's engine in the process, through the same client (its folder)
            embedded: dict[str, Any] = {"dsn": out["host"]}
            if out["database"]:
                embedded["database"] = out["database"]
            return embedded
        scheme, host, port = endpoint(str(out["host"]))
        connect = {
            "host": host,
            "port": port,
            "secure": scheme == "https",
            "username": out["user"] or "default",
            "password": out["password"] or "",
            "connect_timeout": 10,
            # the server's own settings list is not read at connect time (a role may not see it)
            "autogenerate_session_id": False,
        }
        if out["database"]:
            connect["database"] = out["database"]
        return connect

    def query_settings(self) -> dict[str, Any]:
        """The settings sent with every query: the filters (as Oxy names them), the role,
        and `readonly` last, so the filters are set before it takes effect."""
        out: dict[str, Any] = {}
        prefix = self.spec.settings_prefix or ""
        for name, value in self.filters.items():
            if value is not None:
                out[f"{prefix}{name}"] = row_filters.session_value(value)
        if self.spec.read_only:
            out["readonly"] = 2
        return out

    def _run(self, sql: str, limit: int | None, interrupter: Interrupter) -> QueryResult:
        connect = client_library(self.name, "clickhouse", MODULE, EXTRA)
        from clickhouse_connect.driver.exceptions import ClickHouseError

        try:
            client = connect.get_client(**self.settings())
        except ClickHouseError as exc:
            raise QueryError(_message(exc, self.spec.read_only)) from None
        query_id = f"accord-{uuid.uuid4()}"
        try:
            if self.spec.role:
                client.set_client_setting("role", self.spec.role)
            interrupter.arm(lambda: self._kill(connect, query_id))
            try:
                result = client.query(sql, settings={**self.query_settings(), "query_id": query_id})
            finally:
                interrupter.disarm()
            columns = list(result.column_names)
            rows = [tuple(r) for r in result.result_rows]
            return QueryResult(columns, rows[:limit] if limit is not None else rows, sql)
        except ClickHouseError as exc:
            raise QueryError(_message(exc, self.spec.read_only)) from None
        finally:
            with contextlib.suppress(Exception):
                client.close()

    def _kill(self, connect: Any, query_id: str) -> None:
        with contextlib.suppress(Exception):
            client = connect.get_client(**self.settings())
            try:
                client.command(f"KILL QUERY WHERE query_id = '{query_id}' ASYNC")
            finally:
                client.close()

    async def query(self, sql: str, limit: int | None = None) -> QueryResult:
        return await in_thread(self._run, sql, limit)

    async def columns(self) -> QueryResult:
        return await self.query(
            "SELECT table, name, type FROM system.columns WHERE database = currentDatabase() "
            "ORDER BY table, position"
        )

    async def validate(self, sql: str) -> None:
        await self.query(f"EXPLAIN {sql.strip().rstrip(';')}")

    def close(self) -> None:
        return None


def _message(exc: Exception, read_only: bool) -> str:
    text = str(exc).strip()
    first = next((line for line in text.splitlines() if "Code:" in line), text)
    if read_only and "readonly mode" in text:
        first += f" (the database is read-only: {read_only_advice()})"
    return first


register_database(
    DatabaseKind("clickhouse", ClickHouseDatabase, ClickHouse, library=(MODULE, EXTRA))
)
