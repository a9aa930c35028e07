"""Fixtures for the engine tests: a project folder in `tmp_path` and helpers to write files."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

WriteFile = Callable[[str, str], Path]

SALES_CSV = "region,amount\nEU,10\nUS,20\nAPAC,5\n"


@pytest.fixture
def write(tmp_path: Path) -> WriteFile:
    """Write a (dedented) file under the project folder and return its path."""

    def write_file(relative: str, text: str) -> Path:
        target = tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return target

    return write_file


@pytest.fixture
def duckdb_project(tmp_path: Path, write: WriteFile) -> Path:
    """A project with `config.yml` naming one DuckDB database `warehouse` over `data/`."""
    write(
        "config.yml",
        """
        databases:
          - name: warehouse
            type: duckdb
            dataset: data
        """,
    )
    write("data/sales.csv", SALES_CSV)
    return tmp_path
