"""Helpers for evaluation tests: `accord eval` in-process (the project with the fake model as\njudge is tests/conftest.py's `project`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from accord.cli import main


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    def doc(self) -> dict[str, Any]:
        return json.loads(self.stdout)  # type: ignore[no-any-return]

    def suite(self) -> dict[str, Any]:
        return self.doc()["suites"][0]  # type: ignore[no-any-return]


def accord(*args: str | Path) -> Run:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)
