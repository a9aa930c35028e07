"""BigQuery through google-cloud-bigquery (the `bigquery` extra), with Oxy's keys: key_path
or key_path_var (a service-account key file: a path inside the project, or named by an
environment variable), dataset (the default dataset of unqualified table names), datasets
(schema browsing, accepted) and dry_run_limit (the most bytes a query may process, checked
by a dry run before it runs, as Oxy does). The project is the key file's `project_id`, as
Oxy reads it; accord's own `project` key names another.

BigQuery has no read-only session: on a read-only entry (the default) each statement is
first dry-run (BigQuery parses and plans it, runs nothing) and runs only when BigQuery calls
it a SELECT; any other statement type (DELETE, CREATE_TABLE, SCRIPT...) is refused. Give
the key's service account read roles only for BigQuery to enforce it too.

Oxy applies no row-level `filters` to BigQuery; neither does accord. `api_endpoint`
(accord's own key) reaches a private endpoint or an emulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ..errors import ConfigError
from ..specbase import Spec
from .base import (
    DatabaseKind,
    Interrupter,
    PathNeed,
    QueryError,
    QueryResult,
    client_library,
    from_environment,
    in_thread,
    read_only_advice,
    register_database,
)

MODULE, EXTRA = "google.cloud.bigquery", "bigquery"
QUERY_SECONDS = 600.0  # the longest a query is waited for


class BigQueryDatabase(Spec):
    """Google BigQuery (google-cloud-bigquery)."""

    name: str
    type: Literal["bigquery"]
    key_path: str | None = Field(
        None, description="Service-account key file (JSON), relative to the project root."
    )
    key_path_var: str | None = Field(None, description="Env var holding the key file's path.")
    dataset: str | None = Field(None, description="Default dataset of unqualified tables.")
    datasets: dict[str, list[str]] = Field(
        default_factory=dict, description="Datasets (and table patterns) for schema browsing."
    )
    dry_run_limit: int | None = Field(
        None, ge=1, description="The most bytes a query may process (checked by a dry run)."
    )
    project: str | None = Field(None, description="The project (default: the key file's).")
    api_endpoint: str | None = Field(None, description="An endpoint other than Google's.")
    read_only: bool = True
    max_concurrency: int | None = Field(None, ge=1)


class BigQuery:
    """BigQuery through google-cloud-bigquery; reads only, by dry run, unless
    `read_only: false`."""

    dialect = "bigquery"

    def __init__(self, spec: BigQueryDatabase, root: Path, datasets: tuple[Path, ...] = ()) -> None:
        self.spec = spec
        self.name = spec.name
        self.root = root

    def key_file(self) -> Path:
        """The service-account key file: `key_path` (relative to the project root), else the
        path `key_path_var` names. A path from the environment is never shown."""
        spec = self.spec
        if spec.key_path:
            path, said = self.root / spec.key_path, f"key_path '{spec.key_path}'"
        elif spec.key_path_var:
            given = from_environment(
                self.name, {}, {"key_path": (spec.key_path_var, "key_path_var")}
            )
            path = self.root / str(given["key_path"]).strip()
            said = f"the key file named by {spec.key_path_var} (key_path_var)"
        else:
            raise ConfigError(
                f"database '{self.name}': give 'key_path' (a service-account key file) or "
                "'key_path_var' for bigquery"
            )
        if not path.is_file():
            raise ConfigError(
                f"database '{self.name}': {said} is not a file (a path relative to the "
                "project root, the folder holding config.yml, or an absolute one)"
            )
        return path

    def client(self) -> Any:
        bigquery = client_library(self.name, "bigquery", MODULE, EXTRA)
        from google.oauth2 import service_account

        path = self.key_file()
        try:
            info = json.loads(path.read_text())
            make = service_account.Credentials.from_service_account_info
            credentials = make(  # type: ignore[no-untyped-call]
                info, scopes=["https://www.googleapis.com/auth/bigquery"]
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            # the file's content is never shown: only what kind of problem it has
            problem = type(exc).__name__
            if isinstance(exc, ValueError | KeyError) and not isinstance(exc, json.JSONDecodeError):
                problem = "not a service-account key (its type, client_email, private_key...)"
            elif isinstance(exc, json.JSONDecodeError):
                problem = "not JSON"
            raise ConfigError(
                f"database '{self.name}': the key file cannot be used: {problem}"
            ) from None
        project = self.spec.project or info.get("project_id")
        if not project:
            raise ConfigError(
                f"database '{self.name}': the key file names no project_id: give 'project'"
            )
        options = {"api_endpoint": self.spec.api_endpoint} if self.spec.api_endpoint else None
        return bigquery.Client(project=project, credentials=credentials, client_options=options)

    def job_config(self, client: Any, dry_run: bool) -> Any:
        from google.cloud import bigquery

        config = bigquery.QueryJobConfig(dry_run=dry_run, use_query_cache=not dry_run)
        if self.spec.dataset:
            dataset = self.spec.dataset
            config.default_dataset = dataset if "." in dataset else f"{client.project}.{dataset}"
        return config

    def dry_run(self, client: Any, sql: str) -> Any:
        """BigQuery's plan of `sql` (nothing runs); refused when it is not a read on a
        read-only entry, or when it would process more than `dry_run_limit` bytes."""
        job = client.query(sql, job_config=self.job_config(client, dry_run=True))
        kind = job.statement_type or "unknown"
        if self.spec.read_only and kind != "SELECT":
            raise QueryError(
                f"the database is read-only: BigQuery's dry run calls this statement "
                f"{kind}, and only SELECT statements run ({read_only_advice()})"
            )
        limit = self.spec.dry_run_limit
        processed = job.total_bytes_processed
        if limit is not None and processed is not None and processed > limit:
            raise QueryError(
                f"the query would process {processed} bytes, over the dry_run_limit of "
                f"{limit} bytes of database '{self.name}'"
            )
        return job

    def _run(self, sql: str, limit: int | None, interrupter: Interrupter) -> QueryResult:
        client = self.client()
        from google.api_core import exceptions

        try:
            if self.spec.read_only or self.spec.dry_run_limit is not None:
                self.dry_run(client, sql)
            job = client.query(sql, job_config=self.job_config(client, dry_run=False))
            interrupter.arm(lambda: job.cancel())
            try:
                result = job.result(timeout=QUERY_SECONDS, max_results=limit)
            finally:
                interrupter.disarm()
            columns = [field.name for field in result.schema or []]
            rows = []
            for row in result:
                rows.append(tuple(row.values()))
                if limit is not None and len(rows) >= limit:
                    break
            return QueryResult(columns, rows, sql)
        except exceptions.GoogleAPIError as exc:
            raise QueryError(_message(exc)) from None
        finally:
            client.close()

    def _validate(self, sql: str, limit: int | None, interrupter: Interrupter) -> QueryResult:
        client = self.client()
        from google.api_core import exceptions

        try:
            self.dry_run(client, sql)
            return QueryResult([], [], sql)
        except exceptions.GoogleAPIError as exc:
            raise QueryError(_message(exc)) from None
        finally:
            client.close()

    async def query(self, sql: str, limit: int | None = None) -> QueryResult:
        return await in_thread(self._run, sql, limit)

    async def columns(self) -> QueryResult:
        if not self.spec.dataset:
            return QueryResult(["table_name", "column_name", "data_type"], [], "")
        return await self.query(
            "SELECT table_name, column_name, data_type FROM "
            f"`{self.spec.dataset}`.INFORMATION_SCHEMA.COLUMNS "
            "ORDER BY table_name, ordinal_position"
        )

    async def validate(self, sql: str) -> None:
        await in_thread(self._validate, sql, None)

    def close(self) -> None:
        return None


def _message(exc: Exception) -> str:
    """BigQuery's own words: the first error's message, without the request's URL."""
    errors = getattr(exc, "errors", None) or []
    for error in errors:
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    text = getattr(exc, "message", None) or str(exc)
    return str(text).strip().splitlines()[0] if str(text).strip() else type(exc).__name__


def _needs(spec: BigQueryDatabase) -> list[PathNeed]:
    if spec.key_path is None:
        return []
    advice = "queries on it will fail; correct 'key_path' (relative to the project root)"
    return [PathNeed("key_path", spec.key_path, "file", "key file", advice, error=False)]


register_database(
    DatabaseKind("bigquery", BigQueryDatabase, BigQuery, _needs, library=(MODULE, EXTRA))
)
