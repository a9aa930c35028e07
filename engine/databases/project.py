"""A project's databases: the config entry of every registered kind (`DatabaseSpec`), and the
databases a run uses, connected on first use (`Databases`)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Union

from pydantic import Field

from ..errors import ConfigError, did_you_mean

# every built-in kind registers itself on import, before the union of entries is taken
from . import (  # noqa: F401
    bigquery,
    clickhouse,
    duckdb,
    mysql,
    postgres,
    remote,
    snowflake,
    sqlite,
)
from .base import DATABASES, Database, DatabaseEntry, library_missing, missing_library_message

if TYPE_CHECKING:
    DatabaseSpec = DatabaseEntry
else:  # the registered kinds' entries, told apart by `type`
    _SPECS = tuple(dict.fromkeys(kind.spec for _name, kind in DATABASES.items()))
    DatabaseSpec = Annotated[Union[_SPECS], Field(discriminator="type")]  # noqa: UP007


def unreachable(spec: Any) -> str | None:
    """Why accord cannot connect to the configured database `spec` (None: it can)."""
    kind = DATABASES.get(spec.type)
    if kind.open is not None:
        return None
    return (
        f"database '{spec.name}' is of type {spec.type}, which accord cannot connect to: "
        f"{kind.unavailable}"
    )


def missing_library(spec: Any) -> str | None:
    """What to install when the client library of `spec`'s kind is missing (None: it is
    there, or the kind needs none)."""
    kind = DATABASES.get(spec.type)
    if kind.library is None or not library_missing(kind.library[0]):
        return None
    return missing_library_message(spec.name, spec.type, *kind.library)


@dataclass
class Databases:
    """The project's databases by name, connected on first use."""

    root: Path
    specs: dict[str, Any]
    default: str | None
    # Oxy's row-level filter values of the run (`--filter`); None: the run gave none
    filters: dict[str, Any] | None = None

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
            return unreachable(self.specs[name])
        known = sorted(self.specs)
        hint = did_you_mean(name, known)
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
            opener = DATABASES.get(spec.type).open
            assert opener is not None  # `check` refused the others
            from ..executor import current
            from ..telemetry import traced_database

            local = opener(spec, self.root, self.datasets())
            self._apply_filters(name, spec, local)
            # the run's executor may run its queries elsewhere (a Ray actor holding it)
            db = current().database(local, spec, self.root, self.datasets())
            db = self._open[name] = traced_database(db, name, spec.type)
            return db

    def _apply_filters(self, name: str, spec: Any, db: Database) -> None:
        """The run's filter values, checked against the entry's `filters` as Oxy checks
        them, handed to a database that applies them (`use_filters`)."""
        declared = getattr(spec, "filters", None) or {}
        if self.filters is None:
            return
        if not declared:
            from .. import log

            log.get().warning(
                "filters_ignored",
                database=name,
                problem=f"database '{name}' declares no filters: the run's filters are not "
                "applied to it",
            )
            return
        from . import filters

        values = filters.process(name, declared, self.filters)
        use = getattr(db, "use_filters", None)
        if use is not None:
            use(values)

    def datasets(self) -> tuple[Path, ...]:
        """The project's dataset folders: what a read-only database may read files from."""
        folders = [getattr(spec, "dataset", None) for spec in self.specs.values()]
        return tuple((self.root / f).resolve() for f in folders if isinstance(f, str))

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
