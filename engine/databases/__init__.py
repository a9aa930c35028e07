"""The project's databases. Each kind is one module that registers a `DatabaseKind`: its
config entry (a pydantic model), its driver (the `Database` protocol: query, columns, close,
dialect) and the files it reads. `duckdb` (dataset folders and files), `sqlite`,
`postgres` (and Redshift), `mysql`, `clickhouse`, `snowflake`, `bigquery`, and `remote`
(Oxy's types accord cannot reach). A kind whose client library is outside the main install
names the extra that installs it. A new database is one module here.
`project` holds the databases of a project (`Databases`).

Queries run in worker threads so independent SQL tasks overlap. A query whose task is
cancelled (its `timeout`, or fail-fast) is stopped in the database, not left running in its
thread. Databases are read-only unless their config entry says `read_only: false`.
"""

from . import bigquery, clickhouse, duckdb, filters, mysql, postgres, remote, snowflake, sqlite
from .base import (
    DATABASES,
    Database,
    DatabaseEntry,
    DatabaseKind,
    Interrupter,
    PathNeed,
    QueryError,
    QueryResult,
)
from .duckdb import DuckDBDatabase
from .mysql import MySQLDatabase
from .postgres import PostgresDatabase
from .project import Databases, DatabaseSpec, missing_library, unreachable
from .remote import RemoteDatabase
from .sqlite import SQLiteDatabase

__all__ = [
    "DATABASES",
    "Database",
    "DatabaseEntry",
    "DatabaseKind",
    "DatabaseSpec",
    "Databases",
    "DuckDBDatabase",
    "Interrupter",
    "MySQLDatabase",
    "PathNeed",
    "PostgresDatabase",
    "QueryError",
    "QueryResult",
    "RemoteDatabase",
    "SQLiteDatabase",
    "bigquery",
    "clickhouse",
    "duckdb",
    "filters",
    "missing_library",
    "mysql",
    "postgres",
    "remote",
    "snowflake",
    "sqlite",
    "unreachable",
]
