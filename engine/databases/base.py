"""What every database kind provides: the `Database` protocol its driver follows, the
`DatabaseKind` it registers (config entry, driver, files it needs), and the pieces drivers
share: query results, interrupting a query from the event loop, running it in a thread.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import Field

from ..errors import AccordError, ConfigError
from ..registry import Registry
from ..render import TableView
from ..specbase import Spec


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


class DatabaseEntry(Protocol):
    """What every database entry of config.yml has, whatever its kind."""

    @property
    def name(self) -> str: ...

    @property
    def type(self) -> str: ...


class ServerEntry(Spec):
    """A config.yml entry of a database server reached by host, port, user, password and
    database, each also given by a variable (Oxy's `*_var` keys): PostgreSQL, Redshift and
    MySQL write the same keys; each kind names its `type` and its default `port`."""

    name: str
    type: str
    host: str = "localhost"
    port: int
    user: str | None = None
    password_var: str | None = Field(None, description="Env var holding the password.")
    database: str | None = None
    host_var: str | None = Field(None, description="Env var holding the host (Oxy).")
    port_var: str | None = Field(None, description="Env var holding the port (Oxy).")
    user_var: str | None = Field(None, description="Env var holding the user (Oxy).")
    database_var: str | None = Field(None, description="Env var holding the database (Oxy).")
    read_only: bool = True
    max_concurrency: int | None = Field(None, ge=1)


class Database(Protocol):
    """A connection to one configured database (connected on first use)."""

    name: str
    dialect: str

    async def query(self, sql: str, limit: int | None = None) -> QueryResult:
        """Run `sql`; at most `limit` rows. Stops the query in the database if cancelled."""

    async def columns(self) -> QueryResult:
        """Every (table, column, type) of the database, for an agent's schema listing."""

    async def validate(self, sql: str) -> None:
        """Parse and plan one statement without running it; `QueryError` says what is wrong."""

    def close(self) -> None:
        """Release the connection, interrupting a query still running."""


@dataclass(frozen=True)
class PathNeed:
    """A file or folder a database entry reads, checked by `validate` (field, kind, advice)."""

    field: str
    given: str
    want: Literal["file", "folder"]
    label: str
    advice: str
    error: bool = True  # else a warning


@dataclass(frozen=True)
class DatabaseKind:
    """A registered database type: its config entry, how to open it, what it reads on disk.

    `open` is None for types accord knows of (Oxy's) but cannot connect to; `unavailable`
    then says what to do.
    """

    name: str
    spec: type[Any]
    open: Callable[[Any, Path, tuple[Path, ...]], Database] | None  # (spec, root, datasets)
    needs: Callable[[Any], list[PathNeed]] = lambda spec: []
    unavailable: str = ""
    # (module, extra): the client library a kind connects with and the extra installing it
    library: tuple[str, str] | None = None


DATABASES: Registry[DatabaseKind] = Registry("database type", plugins=False)


def register_database(kind: DatabaseKind) -> DatabaseKind:
    return DATABASES.add(kind.name, kind)


class Interrupter:
    """The way to stop one query running in a worker thread, set by the thread once the
    query has a connection; fired from the event loop when the awaiting task is cancelled.

    A database's interrupt only stops a statement already running: one sent while the query
    is still starting (a cursor made, `execute` not yet begun) does nothing, and the query
    then ran to its end, with Ctrl-C lost. So a fired interrupter keeps interrupting, at
    growing intervals, until the worker disarms it (the query is over, however it ended).
    """

    FIRST_GAP = 0.02  # seconds between interrupts, doubling up to LAST_GAP
    LAST_GAP = 0.5

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stop: Callable[[], None] | None = None
        self._over = threading.Event()
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
            self._over.set()

    def fire(self) -> None:
        with self._lock:
            if self.fired or self._over.is_set():
                return
            self.fired = True
        self._interrupt()
        threading.Thread(
            target=self._keep_interrupting, name="accord-interrupt", daemon=True
        ).start()

    def _interrupt(self) -> None:
        with self._lock:
            if self._stop is None:
                return
            try:
                self._stop()
            except Exception:
                # the handle closed under the stop (the query ended and its connection was
                # closed between two repeats): there is nothing left to stop
                self._stop = None
                self._over.set()

    def _keep_interrupting(self) -> None:
        gap = self.FIRST_GAP
        while not self._over.wait(gap):
            self._interrupt()
            gap = min(gap * 2, self.LAST_GAP)


async def in_thread(
    run: Callable[[str, int | None, Interrupter], QueryResult], sql: str, limit: int | None
) -> QueryResult:
    """Run a blocking query in a worker thread; cancelling the awaiting task interrupts it."""
    import asyncio  # not at import: `accord validate` never runs a query

    interrupter = Interrupter()

    def run_to_its_end() -> QueryResult:
        try:
            return run(sql, limit, interrupter)
        finally:
            interrupter.disarm()  # also when it failed before arming: the stop is over

    try:
        return await asyncio.to_thread(run_to_its_end)
    except asyncio.CancelledError:
        interrupter.fire()
        raise


def read_only_advice() -> str:
    return "set read_only: false on its entry in config.yml to allow writes"


def read_statement(
    sql: str, reads: frozenset[str], comment: re.Pattern[str], string: re.Pattern[str]
) -> str:
    """The statement with its strings emptied and its comments gone, once its first word is
    one of `reads` (a read, for a database with no read-only session to refuse the rest);
    else QueryError. `comment` and `string` are the database's own syntax of them."""
    bare = comment.sub(" ", string.sub("''", sql)).strip()
    first = re.match(r"\(|[A-Za-z]+", bare)
    word = first.group(0).upper() if first else ""
    if word not in reads:
        raise QueryError(
            f"the database is read-only: {word or 'this'} statements are not allowed "
            f"({read_only_advice()})"
        )
    return bare


def sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def client_library(database: str, kind: str, module: str, extra: str) -> Any:
    """The client library `module` of a database kind, imported; when it is not installed a
    `ConfigError` names the extra that installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(missing_library_message(database, kind, module, extra)) from None


def missing_library_message(database: str, kind: str, module: str, extra: str) -> str:
    return (
        f"database '{database}' is of type {kind}, whose client library ({module}) is not "
        f"installed: install it with pip install 'accord[{extra}]'"
    )


def library_missing(module: str) -> bool:
    """True when `module` cannot be imported (checked without importing it)."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):
        return True


def from_environment(
    database: str, given: dict[str, Any], variables: dict[str, tuple[str | None, str]]
) -> dict[str, Any]:
    """Connection settings with Oxy's `*_var` indirections read: `variables` maps a setting to
    (the variable its entry names, the entry's field). A secret (a field holding `password`,
    `token` or `key`) is read through engine/keys, so it is masked wherever it could show."""
    from .. import keys

    out = dict(given)
    for setting, (var, field) in variables.items():
        if not var:
            continue
        secret = any(word in field for word in ("password", "token", "key"))
        value = keys.read(var) if secret else os.environ.get(var)
        if value is None:
            raise ConfigError(
                f"database '{database}': environment variable {var} ({field}) is not set: "
                "set it, or give the value in config.yml"
            )
        out[setting] = value
    return out
