"""The database servers of these tests (tests/databases/servers.py)."""

from tests.databases.servers import fakesnow_server, mariadb, postgres_server

__all__ = ["fakesnow_server", "mariadb", "postgres_server"]
