"""The database servers of these tests (tests/databases/servers.py)."""

from tests.databases.servers import bigquery_server, fakesnow_server, mariadb, postgres_server

__all__ = ["bigquery_server", "fakesnow_server", "mariadb", "postgres_server"]
