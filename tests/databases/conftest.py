"""The database servers of these tests (tests/databases/servers.py)."""

from tests.databases.servers import mariadb, postgres_server

__all__ = ["mariadb", "postgres_server"]
