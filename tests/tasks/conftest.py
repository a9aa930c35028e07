"""Fixtures for the task tests: a project folder in `tmp_path`, run through the real CLI.

Every test writes a workflow file and runs `accord run --format json` in-process with click's
`CliRunner`, so the whole path (load, compile, schedule, task, export) is exercised on real
DuckDB and SQLite databases.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from accord.cli import main

SALES_CSV = """\
order_id,region,product,units,price
1,North,apple,3,1.5
2,North,pear,1,2.0
3,South,apple,5,1.5
4,South,kiwi,2,3.0
5,East,apple,1,1.5
6,East,pear,4,2.0
7,East,kiwi,6,3.0
8,West,pear,2,2.0
"""

REGIONS_CSV = """\
region,manager
North,Ada
South,Ben
East,Chloe
West,Dev
"""


@dataclass
class Run:
    """The outcome of one CLI invocation."""

    exit_code: int
    stdout: str
    stderr: str
    _doc: Any = field(default=None, repr=False)

    @property
    def doc(self) -> dict[str, Any]:
        if self._doc is None:
            assert self.stdout.strip(), f"no JSON on stdout; stderr:\n{self.stderr}"
            self._doc = json.loads(self.stdout)
        return self._doc  # type: ignore[no-any-return]

    @property
    def outputs(self) -> dict[str, Any]:
        assert self.exit_code == 0, f"exit {self.exit_code}\n{self.stderr}\n{self.stdout}"
        return self.doc["outputs"]  # type: ignore[no-any-return]

    def status(self, key: str) -> str:
        """The status of the task result named `key` (`loop[0].inner` for nested tasks)."""
        for result in self.doc["tasks"]:
            if result["task"] == key:
                return str(result["status"])
        raise KeyError(key)

    def finish_order(self) -> list[str]:
        """Task keys in the order their results were settled."""
        return [str(result["task"]) for result in self.doc["tasks"]]


def invoke(*args: str) -> Run:
    """`accord ARGS...` in-process."""
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)


class Project:
    """A project folder: config.yml, data files and workflow files written by the test."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, relative: str, text: str) -> Path:
        target = self.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return target

    def config(self, text: str) -> Path:
        return self.write("config.yml", text)

    def workflow(self, text: str, name: str = "main") -> Path:
        return self.write(f"{name}.workflow.yml", text)

    def run(self, text: str, *args: str, name: str = "main") -> Run:
        """Write `text` as a workflow and run it with `--format json`."""
        path = self.workflow(text, name)
        return invoke("run", str(path), "--format", "json", *args)

    def validate(self, text: str, name: str = "main") -> Run:
        return invoke("validate", str(self.workflow(text, name)))


@pytest.fixture
def empty_project(tmp_path: Path) -> Project:
    """A project folder with nothing in it yet."""
    return Project(tmp_path)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A DuckDB project: database `shop` over `data/` (sales.csv and regions.csv)."""
    proj = Project(tmp_path)
    proj.config(
        """
        databases:
          - name: shop
            type: duckdb
            dataset: data
        """
    )
    proj.write("data/sales.csv", SALES_CSV)
    proj.write("data/regions.csv", REGIONS_CSV)
    return proj
