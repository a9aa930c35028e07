"""Read-only databases are read-only at the engine level, for SQL tasks and for an agent's tools:
no statement can write a file, attach another database, load an extension or read a file
outside the project's dataset folders, and `validate_sql` runs nothing.

Each attempt below wrote or read something before (found by trying, issue "hostile input").
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from accord.cli import main
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "data").mkdir(parents=True)
    (root / "data" / "sales.csv").write_text("region,amount\nEU,10\nUS,20\n")
    conn = sqlite3.connect(str(root / "app.db"))
    conn.execute("CREATE TABLE t (a)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.commit()
    conn.close()
    (root / "config.yml").write_text(
        "databases:\n"
        "  - {name: duck, type: duckdb, dataset: data}\n"
        "  - {name: lite, type: sqlite, path: app.db}\n"
    )
    return root


def _sql_task(root: Path, database: str, sql: str) -> Any:
    path = root / "w.workflow.yml"
    quoted = sql.replace('"', '\\"')
    path.write_text(
        f"tasks:\n  - name: q\n    type: execute_sql\n    database: {database}\n"
        f'    sql_query: "{quoted}"\n'
    )
    return CliRunner().invoke(main, ["run", str(path)])


def _outside(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir(exist_ok=True)
    return folder


SQLITE_ATTACKS = [
    "ATTACH DATABASE 'file:{root}/app.db?mode=rw' AS w; DROP TABLE w.t",
    "VACUUM INTO '{out}/x.db'",
    "ATTACH 'file:{out}/x.db?mode=rwc' AS x",
    "DROP TABLE t",
    "PRAGMA journal_mode = DELETE",
    "SELECT load_extension('x')",
]

DUCKDB_ATTACKS = [
    "EXPLAIN ANALYZE COPY (SELECT 1) TO '{out}/x.sh'",
    "COPY (SELECT 1) TO '{out}/x.csv'",
    "COPY (SELECT 1) TO '{root}/data/x.csv'",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM read_csv('{root}/config.yml')",
    "ATTACH '{out}/x.duckdb' AS x",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
]


def _written(tmp_path: Path, root: Path) -> list[Path]:
    out = _outside(tmp_path)
    return [*out.iterdir(), *[p for p in (root / "data").iterdir() if p.name != "sales.csv"]]


@pytest.mark.parametrize("attack", SQLITE_ATTACKS)
def test_sqlite_read_only_refuses(tmp_path: Path, attack: str) -> None:
    root = _project(tmp_path)
    sql = attack.format(root=root, out=_outside(tmp_path))
    result = _sql_task(root, "lite", sql)
    assert result.exit_code == 1, result.output
    assert "read-only" in result.stderr
    assert _written(tmp_path, root) == []
    conn = sqlite3.connect(str(root / "app.db"))
    assert conn.execute("SELECT a FROM t").fetchall() == [(1,)]
    conn.close()


@pytest.mark.parametrize("attack", DUCKDB_ATTACKS)
def test_duckdb_read_only_refuses(tmp_path: Path, attack: str) -> None:
    root = _project(tmp_path)
    sql = attack.format(root=root, out=_outside(tmp_path))
    result = _sql_task(root, "duck", sql)
    assert result.exit_code == 1, result.output
    assert "read-only" in result.stderr or "Permission Error" in result.stderr
    assert "root:" not in result.output  # /etc/passwd was not read
    assert _written(tmp_path, root) == []


def test_reads_of_the_datasets_still_work(tmp_path: Path) -> None:
    root = _project(tmp_path)
    for sql in ("SELECT SUM(amount) FROM sales", "SELECT * FROM 'sales.csv'",
                f"SELECT * FROM read_csv('{root}/data/sales.csv')"):  # fmt: skip
        result = _sql_task(root, "duck", sql)
        assert result.exit_code == 0, (sql, result.output)
    assert _sql_task(root, "lite", "SELECT * FROM t").exit_code == 0


def test_an_agent_s_tools_cannot_write_or_read_outside(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    root = _project(tmp_path)
    out = _outside(tmp_path)
    (root / "config.yml").write_text(
        (root / "config.yml").read_text() + fake_model_config(fake_llm)
    )
    (root / "a.agent.yml").write_text(
        "model: fake\ntools:\n"
        "  - {name: run_lite, type: execute_sql, database: lite}\n"
        "  - {name: run_duck, type: execute_sql, database: duck}\n"
        "  - {name: check_duck, type: validate_sql, database: duck}\n"
        "  - {name: check_lite, type: validate_sql, database: lite}\n"
    )
    script = [
        Reply.tool("run_lite", {"sql": f"ATTACH DATABASE 'file:{root}/app.db?mode=rw' AS w"}),
        Reply.tool("run_lite", {"sql": f"VACUUM INTO '{out}/x.db'"}),
        Reply.tool("run_duck", {"sql": f"EXPLAIN ANALYZE COPY (SELECT 1) TO '{out}/x.sh'"}),
        Reply.tool("run_duck", {"sql": "SELECT * FROM read_csv('/etc/passwd')"}),
        Reply.tool("check_duck", {"sql": f"COPY (SELECT 1) TO '{out}/y.csv'"}),
        Reply.tool("check_lite", {"sql": f"VACUUM INTO '{out}/y.db'"}),
        Reply.tool("check_duck", {"sql": "SELECT region FROM sales"}),
    ]

    def respond(body: dict[str, Any]) -> Reply:
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        return script[done] if done < len(script) else Reply(text="done")

    fake_llm.responder = respond
    path = root / "w.workflow.yml"
    path.write_text("tasks:\n  - name: ask\n    type: agent\n    agent_ref: a.agent.yml\n"
                    "    prompt: go\n")  # fmt: skip
    result = CliRunner().invoke(main, ["run", str(path), "--cache", "off"])
    assert result.exit_code == 0, result.output
    answers = [m["content"] for m in fake_llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert len(answers) == len(script)
    assert all(a.startswith("error:") for a in answers[:6]), answers
    assert answers[6] == "valid"
    assert list(out.iterdir()) == []
    assert not any("root:" in a for a in answers)
