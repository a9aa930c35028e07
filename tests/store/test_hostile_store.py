"""The run store and the call cache hold data, not code.

A tampered `.accord/` folder (a repository shared with it, say) is planted with what it could
carry: pickles that run a command when loaded, tagged values naming modules, wrong shapes,
values nested 100,000 deep, huge values, garbage. None runs code or crashes accord: a bad
stored output is not reused (its task runs again, and the run's outputs equal an untampered
run's), an old store's pickles are deleted unread, a damaged database is refused with what
to do.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import os
import pickle
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from accord.cli import main
from accord.engine import codec
from accord.engine.databases import QueryResult
from accord.engine.render import TableView
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply

WORKFLOW = """
tasks:
  - name: totals
    type: execute_sql
    sql_query: |
      SELECT region, SUM(amount) AS amount, MIN(day) AS first_day,
             CAST(SUM(amount) AS DECIMAL(10, 2)) AS exact, NULL AS nothing
      FROM sales GROUP BY region ORDER BY region
  - name: per_region
    type: loop_sequential
    values: "{{ totals.region }}"
    tasks:
      - name: line
        type: formatter
        template: "{{ value }}: {{ totals.amount[0] }}"
  - name: report
    type: formatter
    template: "{{ totals }} {% for r in per_region %}{{ r.line }};{% endfor %}"
"""


class Planted(Exception):
    """Raised by no one: a payload that ran would create the marker file instead."""


def _project(tmp_path: Path) -> Path:
    (tmp_path / ".db").mkdir()
    (tmp_path / ".db" / "sales.csv").write_text(
        "region,amount,day\nEU,10,2024-01-02\nUS,20,2024-01-03\nEU,5,2024-02-01\n"
    )
    path = tmp_path / "w.workflow.yml"
    path.write_text(WORKFLOW)
    return path


def _run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def _store(tmp_path: Path) -> sqlite3.Connection:
    return sqlite3.connect(str(tmp_path / ".accord" / "runs.db"))


def _first_run(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    path = _project(tmp_path)
    first = _run("run", str(path), "--format", "json")
    assert first.exit_code == 0, first.output
    return path, json.loads(first.stdout)


class _RunsCommand:
    """A pickle payload that creates a marker file when unpickled."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


def test_every_output_type_round_trips_through_the_store(tmp_path: Path) -> None:
    path, first = _first_run(tmp_path)
    again = _run("run", str(path), "--format", "json", "--resume", "last")
    assert again.exit_code == 0, again.output
    doc = json.loads(again.stdout)
    # totals, the loop body's two lines and report (a loop's own result is its children's)
    assert doc["summary"]["stats"]["reused"] == 4
    assert doc["outputs"] == first["outputs"]


@pytest.mark.parametrize(
    "payload",
    [
        '{"$": "os.system", "v": "touch MARKER"}',
        '{"$": "accord.engine.models", "v": {"os": "system"}}',
        '{"$": "query_result", "v": {"columns": "x"}}',
        '{"$": "query_result", "v": {"columns": ["a"], "rows": [[1, 2]], "sql": "s"}}',
        '{"$": "datetime", "v": "not a date"}',
        '{"$": "tuple", "v": 5}',
        '{"$": "map", "v": [[[1], 2]]}',
        '{"$": "table", "v": {"columns": ["a"], "rows": [[1]]}, "extra": 1}',
        "[" * 100_000 + "]" * 100_000,
        '{"a": ' * 50_000 + "1" + "}" * 50_000,
        "not json at all",
        "",
    ],
)
def test_a_tampered_output_is_not_reused_and_runs_nothing(tmp_path: Path, payload: str) -> None:
    path, first = _first_run(tmp_path)
    marker = tmp_path / "MARKER"
    with _store(tmp_path) as conn:
        conn.execute(
            "UPDATE results SET output = ? WHERE key = 'totals'",
            (payload.replace("MARKER", str(marker)),),
        )
    again = _run("run", str(path), "--format", "json", "--resume", "last")
    assert again.exit_code == 0, again.output
    doc = json.loads(again.stdout)
    assert doc["outputs"] == first["outputs"]
    # `totals` ran again; the others' inputs include its output, which is the same again
    assert doc["summary"]["stats"]["reused"] == 3
    assert not marker.exists()
    assert "Traceback" not in again.output


def test_an_old_store_s_pickles_are_deleted_unread(tmp_path: Path) -> None:
    path, _first = _first_run(tmp_path)
    marker = tmp_path / "MARKER"
    run_id = _first["run_id"]
    with _store(tmp_path) as conn:  # what an earlier accord wrote, with a hostile payload
        conn.execute(
            "UPDATE results SET output = ? WHERE key = 'totals'",
            (pickle.dumps(_RunsCommand(marker)),),
        )
        conn.execute("PRAGMA user_version = 0")
    resumed = _run("run", str(path), "--resume", run_id)
    assert resumed.exit_code == 2
    assert f"run {run_id} was recorded by an earlier accord" in resumed.stderr
    assert "run without --resume" in resumed.stderr
    assert not marker.exists()
    with _store(tmp_path) as conn:
        kinds = {row[0] for row in conn.execute("SELECT typeof(output) FROM results")}
    assert "blob" not in kinds
    fresh = _run("run", str(path))
    assert fresh.exit_code == 0 and not marker.exists()


def test_a_huge_stored_value_is_read_back_as_data(tmp_path: Path) -> None:
    # a well-formed value is data: it is reused as the task's output (the input hash says
    # the inputs are the same), and 20 MB of it costs nothing worse than its size
    path, _first = _first_run(tmp_path)
    huge = "x" * 20_000_000
    with _store(tmp_path) as conn:
        conn.execute("UPDATE results SET output = ? WHERE key = 'report'", (json.dumps(huge),))
    again = _run("run", str(path), "--format", "json", "--resume", "last")
    assert again.exit_code == 0, again.output[-500:]
    assert json.loads(again.stdout)["outputs"]["report"] == huge


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_run_store_is_refused_with_what_to_do(tmp_path: Path, damage: str) -> None:
    path, _first = _first_run(tmp_path)
    db = tmp_path / ".accord" / "runs.db"
    for suffix in ("-wal", "-shm"):
        (tmp_path / ".accord" / f"runs.db{suffix}").unlink(missing_ok=True)
    data = db.read_bytes()
    db.write_bytes(os.urandom(len(data)) if damage == "garbage" else data[: len(data) // 2])
    for args in (["run", str(path)], ["runs", "list", "--project", str(tmp_path)]):
        result = _run(*args)
        assert result.exit_code == 2, result.output
        assert "is damaged" in result.stderr and "move it away" in result.stderr
        assert "Traceback" not in result.output


def test_a_damaged_cache_entry_is_a_miss(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.responder = lambda body: Reply(text="forty-two")
    (tmp_path / "config.yml").write_text(fake_model_config(fake_llm))
    path = tmp_path / "a.workflow.yml"
    path.write_text("tasks:\n  - name: ask\n    type: agent\n    model: fake\n    prompt: q\n")
    assert _run("run", str(path)).exit_code == 0
    with sqlite3.connect(str(tmp_path / ".accord" / "cache.db")) as conn:
        conn.execute("UPDATE calls SET value = ?", ('{"text": 1, "tool_calls": "x"}',))
    calls = len(fake_llm.requests)
    again = _run("run", str(path), "--format", "json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["outputs"]["ask"] == "forty-two"
    assert len(fake_llm.requests) == calls + 1  # asked again, and recorded anew
    (tmp_path / ".accord" / "cache.db").write_bytes(b"garbage" * 1000)
    for suffix in ("-wal", "-shm"):
        (tmp_path / ".accord" / f"cache.db{suffix}").unlink(missing_ok=True)
    broken = _run("run", str(path), "--cache", "on")
    assert broken.exit_code != 0
    assert "call cache" in broken.stderr and "is damaged" in broken.stderr


VALUES: list[Any] = [
    None,
    True,
    7,
    10**40,
    1.5,
    "text",
    [1, [2, [3]]],
    (1, "a"),
    {"a": 1, "b": {"c": [None]}},
    {1: "one", (2, 3): "pair"},
    {"$": "looks like a tag"},
    dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
    dt.date(2024, 1, 2),
    dt.time(3, 4, 5),
    dt.timedelta(days=2, seconds=3),
    decimal.Decimal("12.30"),
    uuid.UUID("12345678-1234-5678-1234-567812345678"),
    b"\x00\xff",
    float("inf"),
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_plain_values_round_trip(value: Any) -> None:
    back = codec.loads(codec.dumps(value))
    assert back == value and type(back) is type(value)


def test_nan_and_tables_round_trip() -> None:
    assert math.isnan(codec.loads(codec.dumps(float("nan"))))
    table = TableView(["a", "b"], [(1, dt.date(2024, 1, 1)), (None, "x")])
    back = codec.loads(codec.dumps(table))
    assert type(back) is TableView and back.columns == ["a", "b"] and back.rows == table.rows
    query = QueryResult(["n"], [(1,)], "SELECT 1 AS n")
    again = codec.loads(codec.dumps(query))
    assert type(again) is QueryResult and again.sql == "SELECT 1 AS n" and again.rows == [(1,)]


def test_a_value_of_an_unknown_class_is_not_stored() -> None:
    with pytest.raises(codec.CodecError, match="cannot be stored"):
        codec.dumps(Planted())


@pytest.mark.slow
def test_a_large_table_is_stored_once_and_shown_in_short(tmp_path: Path) -> None:
    # a 200k-row tool result was stored as 202 MB (a pickle plus a full display copy)
    (tmp_path / ".db").mkdir()
    path = tmp_path / "big.workflow.yml"
    path.write_text(
        "tasks:\n  - name: t\n    type: execute_sql\n"
        "    sql_query: SELECT range AS n, 'row ' || range AS label FROM range(200000)\n"
    )
    assert _run("run", str(path), "--quiet").exit_code == 0
    with _store(tmp_path) as conn:
        data, shown = conn.execute(
            "SELECT length(output), length(output_json) FROM results"
        ).fetchone()
    assert shown < 1_100_000  # the display copy is cut
    assert data < 12_000_000  # one compact copy: about 40 bytes a row
    again = _run("run", str(path), "--format", "json", "--resume", "last")
    assert json.loads(again.stdout)["summary"]["stats"]["reused"] == 1
