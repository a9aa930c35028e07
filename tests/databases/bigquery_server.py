"""A loopback HTTP server speaking the REST calls google-cloud-bigquery makes, answering
queries from DuckDB: the tests point the real client at it (`api_endpoint`) with a
service-account key file of their own whose `token_uri` is this server too.

Calls answered: the OAuth token exchange (the key's signed JWT, checked against the key's
public half), jobs.insert (query jobs, dry-run or run), jobs.getQueryResults (paged),
jobs.get, jobs.cancel and tabledata.list. Every API call must carry the token handed out.

BigQuery SQL is turned into DuckDB's by sqlglot (backtick names, TIMESTAMP_TRUNC(x, MONTH)
as date_trunc, a WEEK from Sunday as BigQuery's, `project.dataset.table` names as DuckDB's
catalog.schema.table); the one mapping of the fake's own is a dataset's
INFORMATION_SCHEMA.COLUMNS, read from DuckDB's duckdb_columns(). A dry run parses and plans
the statement (EXPLAIN) without running it and reports BigQuery's `statementType` from
sqlglot's parse, with bytes processed estimated as 8 per cell of the tables read. Projects
are DuckDB catalogs (attached in memory), datasets their schemas. Values are sent as
BigQuery sends them: every cell a string, typed by the schema (INT64, FLOAT64, NUMERIC,
BOOL, STRING, DATE, TIMESTAMP).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import duckdb

PROJECT = "accord-test"
TOKEN_PATH = "/oauth2/token"

# BigQuery's statementType of each statement sqlglot parses
_STATEMENT_TYPES = {
    "Select": "SELECT", "Union": "SELECT", "Intersect": "SELECT", "Except": "SELECT",
    "Subquery": "SELECT", "Insert": "INSERT", "Update": "UPDATE", "Delete": "DELETE",
    "Merge": "MERGE", "Drop": "DROP_TABLE", "TruncateTable": "TRUNCATE_TABLE",
    "Alter": "ALTER_TABLE",
}  # fmt: skip


@dataclass
class Job:
    project: str
    job_id: str
    resource: dict[str, Any]
    columns: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)


class FakeBigQuery:
    """The server's state: DuckDB holding the projects' data, the jobs, the calls seen."""

    def __init__(self, public_key_pem: bytes) -> None:
        self.duck = duckdb.connect()
        self.duck.execute(f"ATTACH ':memory:' AS \"{PROJECT}\"")
        self.lock = threading.Lock()
        self.public_key = public_key_pem
        self.token = f"token-{uuid.uuid4()}"
        self.jobs: dict[str, Job] = {}
        self.calls: list[tuple[str, str, dict[str, Any]]] = []  # (method, path, body)
        self.httpd: ThreadingHTTPServer | None = None

    @property
    def endpoint(self) -> str:
        assert self.httpd is not None
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def load(self, *statements: str) -> None:
        """Run DuckDB statements on the data (in catalog PROJECT: `CREATE SCHEMA shop`...)."""
        with self.lock:
            self.duck.execute(f'USE "{PROJECT}"')
            for statement in statements:
                self.duck.execute(statement)

    def queries(self) -> list[dict[str, Any]]:
        """The query configurations of every jobs.insert seen, in order."""
        return [b["configuration"] for m, p, b in self.calls if p.endswith("/jobs") and m == "POST"]

    # --- the calls ------------------------------------------------------------------------

    def token_exchange(self, form: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        import google.auth.jwt

        assertion = (form.get("assertion") or [""])[0]
        try:
            google.auth.jwt.decode(assertion, certs=self.public_key, verify=True)
        except ValueError as exc:
            return 400, {"error": "invalid_grant", "error_description": str(exc)}
        return 200, {"access_token": self.token, "expires_in": 3600, "token_type": "Bearer"}

    def insert(self, project: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        config = body.get("configuration", {})
        query = config.get("query", {})
        reference = dict(body.get("jobReference") or {})
        reference.setdefault("jobId", str(uuid.uuid4()))
        reference.setdefault("projectId", project)
        reference.setdefault("location", "US")
        dry = bool(config.get("dryRun"))
        try:
            statements = _parse(_information_schema(query.get("query", "")))
        except Exception as exc:  # sqlglot's ParseError and kin
            return _error(400, "invalidQuery", f"Syntax error: {exc}")
        kind = "SCRIPT" if len(statements) > 1 else _statement_type(statements[0])
        job = Job(project, reference["jobId"], {})
        with self.lock:
            try:
                self._use(query.get("defaultDataset"))
                translated = [s.sql("duckdb") for s in statements]
                if dry:
                    for sql in translated:
                        self.duck.execute("EXPLAIN " + sql)
                    processed = self._bytes_read(statements)
                else:
                    processed = self._bytes_read(statements)
                    for sql in translated:
                        relation = self.duck.sql(sql)
                    if relation is not None:
                        job.columns = list(relation.columns)
                        job.types = [_bq_type(str(t)) for t in relation.types]
                        job.rows = relation.fetchall()
            except duckdb.Error as exc:
                return _error(400, "invalidQuery", str(exc).splitlines()[0])
        now = str(int(dt.datetime.now(dt.UTC).timestamp() * 1000))
        statistics: dict[str, Any] = {
            "creationTime": now, "startTime": now, "endTime": now,
            "totalBytesProcessed": str(processed),
            "query": {"statementType": kind, "totalBytesProcessed": str(processed)},
        }  # fmt: skip
        if not dry:
            statistics["query"]["schema"] = self._schema(job)
        job.resource = {
            "kind": "bigquery#job",
            "id": f"{project}:US.{reference['jobId']}",
            "jobReference": reference,
            "configuration": config,
            "status": {"state": "DONE"},
            "statistics": statistics,
        }
        if not dry:
            self.jobs[reference["jobId"]] = job
        return 200, job.resource

    def results(self, job_id: str, params: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        job = self.jobs.get(job_id)
        if job is None:
            return _error(404, "notFound", f"Not found: Job {PROJECT}:US.{job_id}")
        start = int((params.get("pageToken") or params.get("startIndex") or ["0"])[0])
        size = int((params.get("maxResults") or [str(len(job.rows))])[0])
        int64_times = (params.get("formatOptions.useInt64Timestamp") or ["false"])[
            0
        ].lower() == "true"
        page = job.rows[start : start + size]
        out: dict[str, Any] = {
            "kind": "bigquery#getQueryResultsResponse",
            "jobReference": job.resource["jobReference"],
            "jobComplete": True,
            "schema": self._schema(job),
            "totalRows": str(len(job.rows)),
            "rows": [_row(r, job.types, int64_times) for r in page],
        }
        if start + size < len(job.rows):
            out["pageToken"] = str(start + size)
        return 200, out

    # --- helpers --------------------------------------------------------------------------

    def _use(self, dataset: dict[str, str] | None) -> None:
        if dataset:
            self.duck.execute(f'USE "{dataset["projectId"]}"."{dataset["datasetId"]}"')
        else:
            self.duck.execute(f'USE "{PROJECT}"')

    def _bytes_read(self, statements: list[Any]) -> int:
        import sqlglot.expressions as exp

        total = 0
        for statement in statements:
            for table in statement.find_all(exp.Table):
                name = exp.table_name(table, dialect="duckdb")
                name = ".".join(f'"{part}"' for part in name.replace('"', "").split("."))
                try:
                    cells = self.duck.execute(f"SELECT count(*) FROM {name}").fetchone()
                    width = len(self.duck.execute(f"SELECT * FROM {name} LIMIT 0").description)
                except duckdb.Error:
                    continue  # a CTE's name, or a table the statement creates
                total += int(cells[0] if cells else 0) * width * 8
        return total

    @staticmethod
    def _schema(job: Job) -> dict[str, Any]:
        return {
            "fields": [
                {"name": c, "type": t, "mode": "NULLABLE"}
                for c, t in zip(job.columns, job.types, strict=True)
            ]
        }


_COLUMNS = re.compile(r"`?([\w-]+)`?\.INFORMATION_SCHEMA\.COLUMNS\b", re.IGNORECASE)


def _information_schema(sql: str) -> str:
    """The one mapping beyond sqlglot's: a dataset's INFORMATION_SCHEMA.COLUMNS view (which
    DuckDB has once, for all schemas) as DuckDB's columns of that schema."""
    return _COLUMNS.sub(
        lambda m: (
            "(SELECT table_name, column_name, data_type, column_index AS "
            f"ordinal_position FROM duckdb_columns() WHERE schema_name = '{m.group(1)}' "
            "AND database_name = current_database())"
        ),
        sql,
    )


def _parse(sql: str) -> list[Any]:
    import sqlglot

    statements = [s for s in sqlglot.parse(sql, read="bigquery") if s is not None]
    if not statements:
        raise ValueError("empty query")
    return statements


def _statement_type(statement: Any) -> str:
    name = type(statement).__name__
    if name == "Create":
        kind = str(statement.args.get("kind") or "TABLE").upper()
        select = statement.args.get("expression") is not None and kind == "TABLE"
        return f"CREATE_{kind}" + ("_AS_SELECT" if select else "")
    return _STATEMENT_TYPES.get(name, name.upper())


def _bq_type(duck: str) -> str:
    duck = duck.upper()
    if duck in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UBIGINT", "UINTEGER"):
        return "INT64"  # BigQuery's SUM of INT64 is INT64
    if duck in ("FLOAT", "DOUBLE", "REAL"):
        return "FLOAT64"
    if duck.startswith("DECIMAL"):
        return "NUMERIC"
    if duck == "BOOLEAN":
        return "BOOL"
    if duck == "DATE":
        return "DATE"
    if duck.startswith("TIMESTAMP"):
        return "TIMESTAMP"
    return "STRING"


def _cell(value: Any, kind: str, int64_times: bool) -> Any:
    if value is None:
        return None
    if kind == "BOOL":
        return "true" if value else "false"
    if kind == "TIMESTAMP":
        moment = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        micros = int(moment.timestamp() * 1_000_000)
        return str(micros) if int64_times else str(micros / 1_000_000)
    if kind == "FLOAT64":
        return repr(float(value))
    if isinstance(value, Decimal | int):
        return str(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def _row(values: tuple[Any, ...], types: list[str], int64_times: bool) -> dict[str, Any]:
    return {"f": [{"v": _cell(v, t, int64_times)} for v, t in zip(values, types, strict=True)]}


def _error(code: int, reason: str, message: str) -> tuple[int, dict[str, Any]]:
    status = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND"}[code]
    errors = [{"reason": reason, "message": message, "domain": "global"}]
    return code, {"error": {"code": code, "message": message, "errors": errors, "status": status}}


def _handler(fake: FakeBigQuery) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _reply(self, code: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _route(self, method: str) -> None:
            parts = urlsplit(self.path)
            params = parse_qs(parts.query)
            raw = self._body() if method == "POST" else b""
            if parts.path == TOKEN_PATH:
                self._reply(*fake.token_exchange(parse_qs(raw.decode())))
                return
            body = json.loads(raw) if raw else {}
            fake.calls.append((method, parts.path, body))
            if self.headers.get("Authorization") != f"Bearer {fake.token}":
                self._reply(*_error(401, "unauthorized", "Request had invalid credentials."))
                return
            path = parts.path.removeprefix("/bigquery/v2").strip("/").split("/")
            # projects/{p}/jobs | projects/{p}/jobs/{id}[/cancel] | projects/{p}/queries/{id}
            # | projects/{p}/datasets/{d}/tables/{t}/data
            if method == "POST" and path[2:] == ["jobs"]:
                self._reply(*fake.insert(path[1], body))
            elif method == "GET" and len(path) == 4 and path[2] == "queries":
                self._reply(*fake.results(path[3], params))
            elif len(path) >= 4 and path[2] == "jobs" and path[3] in fake.jobs:
                resource = fake.jobs[path[3]].resource
                self._reply(200, {"job": resource} if path[4:] == ["cancel"] else resource)
            elif method == "GET" and len(path) == 7 and path[6] == "data":
                job = next((j for j in fake.jobs.values() if path[5] == j.job_id), None)
                if job is None:
                    self._reply(*_error(404, "notFound", f"Not found: Table {path[5]}"))
                else:
                    code, out = fake.results(job.job_id, params)
                    self._reply(code, {"totalRows": out["totalRows"], "rows": out["rows"]})
            else:
                self._reply(*_error(404, "notFound", f"not served by this fake: {self.path}"))

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

    return Handler


def service_account_key(token_uri: str) -> tuple[dict[str, Any], bytes]:
    """A service-account key file's content (a fresh RSA key) and its public key (PEM)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    key = {
        "type": "service_account",
        "project_id": PROJECT,
        "private_key_id": uuid.uuid4().hex,
        "private_key": pem,
        "client_email": f"reader@{PROJECT}.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": token_uri,
    }
    return key, public


@dataclass
class Served:
    fake: FakeBigQuery
    key: dict[str, Any]


def serve() -> Iterator[Served]:
    """The fake on a free loopback port, with a key file's content its token exchange
    accepts; shut down when the generator is closed."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = httpd.server_address[1]
    key, public = service_account_key(f"http://127.0.0.1:{port}{TOKEN_PATH}")
    fake = FakeBigQuery(public)
    httpd.RequestHandlerClass = _handler(fake)
    fake.httpd = httpd
    thread = threading.Thread(target=httpd.serve_forever, name="fake-bigquery", daemon=True)
    thread.start()
    try:
        yield Served(fake, key)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
        fake.duck.close()
