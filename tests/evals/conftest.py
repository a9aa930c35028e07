"""Helpers for evaluation tests: a project with the fake model, and `accord eval` in-process."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from accord.cli import main
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI


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


@pytest.fixture
def project(tmp_path: Path, fake_llm: FakeOpenAI) -> Callable[..., Path]:
    """Write files into a project whose config points `fake` (the judge) at the fake server."""

    def make(files: dict[str, str], **model: Any) -> Path:
        config = fake_model_config(fake_llm, **model) + "defaults:\n  judge_model: fake\n"
        (tmp_path / "config.yml").write_text(config)
        for name, text in files.items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return tmp_path

    return make
