"""Database types Oxy supports that accord cannot connect to: their config entries load (so an
Oxy project validates), and a task using one is refused with what to do instead."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

from .base import DatabaseKind, register_database


class RemoteDatabase(BaseModel):
    """A database type Oxy supports and accord cannot reach; using it is an error."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str
    type: Literal[
        "domo",
        "airhouse",
        "databricks",
        "motherduck",
        "mssql",
    ]


REMOTE_TYPES: tuple[str, ...] = get_args(RemoteDatabase.model_fields["type"].annotation)

for _type in REMOTE_TYPES:
    register_database(
        DatabaseKind(
            _type,
            RemoteDatabase,
            None,
            unavailable="map it to a duckdb, sqlite or postgres database in config.yml",
        )
    )
