"""Database servers the tests start on loopback, and end: MariaDB (Debian's mariadb-server),
PostgreSQL (Debian's postgresql, for Redshift's wire), and helpers to wait for them.

Each waits for an event (a line the server prints, a port accepting), never a fixed sleep;
where a server or client library is missing the tests skip, saying loudly what to install
(.ci/run installs the servers, the dev extra the libraries).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.bounds import PROCESS_SECONDS


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def missing(what: str, install: str) -> None:
    """Skip, saying loudly what is missing and what installs it."""
    pytest.skip(f"MISSING {what}: {install} (CI installs it through .ci/run)")


def start_watched(command: list[str], ready: str, **popen: Any) -> subprocess.Popen[bytes]:
    """Start a server and wait until it prints `ready` (on stdout or stderr): a thread reads
    its output as it comes, so the wait ends at that event, or when the server exits."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **popen)
    seen: list[bytes] = []
    printed = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:  # drained to the end, so the server never blocks on it
            seen.append(line)
            if ready.encode() in line:
                printed.set()
        printed.set()  # the server closed its output: it exited

    threading.Thread(target=read, daemon=True).start()
    if not printed.wait(PROCESS_SECONDS) or not any(ready.encode() in s for s in seen):
        stop(process)
        raise RuntimeError(f"server never printed {ready!r}: {b''.join(seen).decode()[-2000:]}")
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=PROCESS_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _as_user(user: str, command: list[str]) -> list[str]:
    # database servers refuse to run as root
    return ["runuser", "-u", user, "--", *command] if os.geteuid() == 0 else command


@dataclass(frozen=True)
class Server:
    port: int
    user: str
    database: str


@pytest.fixture(scope="session")
def mariadb() -> Iterator[Server]:
    """A MariaDB server on a free loopback port, with database `shop` and user `root` (no
    password), ended with the session."""
    install, server = shutil.which("mariadb-install-db"), shutil.which("mariadbd")
    server = server or ("/usr/sbin/mariadbd" if Path("/usr/sbin/mariadbd").exists() else None)
    if install is None or server is None:
        missing("MariaDB server", "apt-get install mariadb-server")
    pytest.importorskip("pymysql", reason="MISSING PyMySQL: pip install 'accord[mysql]'")
    base = Path(tempfile.mkdtemp(prefix="accord-mariadb-"))
    base.chmod(0o777)
    data = base / "data"
    user = "mysql" if os.geteuid() == 0 else os.environ.get("USER", "")
    subprocess.run(
        [install, f"--datadir={data}", "--auth-root-authentication-method=normal",
         "--skip-test-db", *([f"--user={user}"] if os.geteuid() == 0 else [])],
        check=True, capture_output=True, timeout=PROCESS_SECONDS,
    )  # fmt: skip
    port = free_port()
    process = start_watched(
        [server, "--no-defaults", f"--datadir={data}", f"--port={port}",
         "--bind-address=127.0.0.1", f"--socket={base / 'sock'}", "--skip-name-resolve",
         *([f"--user={user}"] if os.geteuid() == 0 else [])],
        "ready for connections",
    )  # fmt: skip
    try:
        import pymysql

        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
        with conn.cursor() as cursor:
            cursor.execute("CREATE DATABASE shop")
        conn.close()
        yield Server(port, "root", "shop")
    finally:
        stop(process)
        shutil.rmtree(base, ignore_errors=True)


def _postgres_binary(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Server]:
    """A PostgreSQL server on a free loopback port (user postgres, database postgres)."""
    initdb, pg_ctl = _postgres_binary("initdb"), _postgres_binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        missing("PostgreSQL server", "apt-get install postgresql")
    pytest.importorskip("psycopg", reason="MISSING psycopg: pip install 'accord[postgres]'")
    base = Path(tempfile.mkdtemp(prefix="accord-pg-"))
    base.chmod(0o777)
    data = base / "data"
    port = free_port()
    subprocess.run(
        _as_user("postgres", [initdb, "-D", str(data), "-U", "postgres", "-A", "trust"]),
        check=True, capture_output=True, timeout=PROCESS_SECONDS,
    )  # fmt: skip
    options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1"
    # -w: pg_ctl returns once the server accepts connections
    subprocess.run(
        _as_user("postgres", [pg_ctl, "-D", str(data), "-o", options, "-w", "start",
                              "-l", str(base / "log")]),
        check=True, capture_output=True, timeout=PROCESS_SECONDS,
    )  # fmt: skip
    try:
        yield Server(port, "postgres", "postgres")
    finally:
        subprocess.run(
            _as_user("postgres", [pg_ctl, "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True, timeout=PROCESS_SECONDS, check=False,
        )  # fmt: skip
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def fakesnow_server() -> Iterator[int]:
    """fakesnow's Snowflake emulator (its HTTP server over DuckDB) in a process of its own on
    a free loopback port: snowflake-connector-python talks to it as to Snowflake."""
    pytest.importorskip(
        "snowflake.connector",
        reason="MISSING snowflake-connector-python: pip install 'accord[snowflake]'",
    )
    pytest.importorskip("fakesnow", reason="MISSING fakesnow: pip install 'accord[dev]'")
    pytest.importorskip("uvicorn", reason="MISSING uvicorn (fakesnow[server]): 'accord[dev]'")
    import sys

    port = free_port()
    process = start_watched(
        [sys.executable, "-m", "fakesnow", "-s", "--port", str(port)], "Uvicorn running on"
    )
    try:
        yield port
    finally:
        stop(process)


@pytest.fixture(scope="session")
def bigquery_server() -> Iterator[Any]:
    """A loopback server speaking BigQuery's REST calls over DuckDB (bigquery_server.py),
    with a service-account key its token exchange accepts; ended with the session."""
    pytest.importorskip(
        "google.cloud.bigquery",
        reason="MISSING google-cloud-bigquery: pip install 'accord[bigquery]'",
    )
    pytest.importorskip("sqlglot", reason="MISSING sqlglot: pip install 'accord[dev]'")
    from tests.databases.bigquery_server import serve

    yield from serve()
