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


TABLE_WORKFLOW = """
tasks:
  - name: totals
    type: execute_sql
    sql_query: SELECT 1 AS n
    cache: {enabled: true, path: output/totals.json}
  - name: show
    type: formatter
    template: "{{ totals.n[0] }}"
"""


def test_a_damaged_pinned_table_or_sidecar_runs_the_task_again(tmp_path: Path) -> None:
    (tmp_path / ".db").mkdir()
    (tmp_path / ".db" / "t.csv").write_text("a\n1\n")
    path = tmp_path / "w.workflow.yml"
    path.write_text(TABLE_WORKFLOW)
    assert run(path)["show"] == "1"
    pinned = tmp_path / "output" / "totals.json"
    sidecar = tmp_path / "output" / "totals.json.accord.json"
    for table, meta in [
        ('{"columns": "n"}', None),
        ('{"columns": ["n"], "rows": [[1, 2]]}', None),
        ("[" * 100_000, None),
        ("\udcff not utf-8", None),
        (None, '["not", "an", "object"]'),
        (None, "{garbage"),
    ]:
        if table is not None:
            pinned.write_bytes(table.encode("utf-8", "surrogateescape"))
        if meta is not None:
            sidecar.write_text(meta)
        assert run(path)["show"] == "1"  # run again and pinned anew, never a traceback
        assert json.loads(pinned.read_text()) == {"columns": ["n"], "rows": [[1]]}
