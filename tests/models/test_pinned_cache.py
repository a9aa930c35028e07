"""Oxy's pinned task cache: reused while the file exists, kept when edited, stale on change."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from accord.cli import main
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI

WORKFLOW = """
tasks:
  - name: sql
    type: agent
    model: fake
    prompt: "Write SQL for {{ what }}"
    cache:
      enabled: true
      path: output/cache/{{ what }}.sql
  - name: show
    type: formatter
    template: "{{ sql }}"
variables:
  what: totals
"""


def run(path: Path, *args: str) -> dict[str, str]:
    result = CliRunner().invoke(
        main, ["run", str(path), "--cache", "off", "--format", "json", *args]
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["outputs"]  # type: ignore[no-any-return]


def test_pinned_output_is_reused_edited_and_invalidated(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.script("SELECT 1", "SELECT 3")
    (tmp_path / "config.yml").write_text(fake_model_config(fake_llm))
    path = tmp_path / "w.workflow.yml"
    path.write_text(WORKFLOW)
    assert run(path)["show"] == "SELECT 1"
    pinned = tmp_path / "output" / "cache" / "totals.sql"
    assert pinned.read_text() == "SELECT 1"
    assert run(path)["show"] == "SELECT 1" and len(fake_llm.requests) == 1
    pinned.write_text("SELECT 2 -- edited by hand")
    assert run(path)["show"] == "SELECT 2 -- edited by hand"
    assert len(fake_llm.requests) == 1
    path.write_text(WORKFLOW.replace("Write SQL", "Write DuckDB SQL"))
    assert run(path)["show"] == "SELECT 3"  # the prompt changed: the pinned file is stale
    assert len(fake_llm.requests) == 2
    assert run(path, "-v", "what=counts")["show"] == "echo: Write DuckDB SQL for counts"
