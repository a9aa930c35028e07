"""The run store read-only: `accord runs compare` and `accord view` never write it.

The store is opened with SQLite's `mode=ro` URI, so neither a comparison nor the web page can
change a run, create the file, or take a write lock from a run in progress. Stored case
results are read back with the engine's codec (data by registered name, never code).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accord.engine import codec
from accord.engine.errors import ConfigError
from accord.tasks.suites.compare.records import (
    RunRecord,
    Sample,
    samples_of_test,
)

_REPEAT = re.compile(r"^(?P<base>.+)@(?P<n>\d+)$")
_REF = re.compile(r"^last(?:~(?P<back>\d+))?$")


@dataclass(frozen=True)
class RunRow:
    """A run's row: id, suite (the stored workflow name), times, status and summary."""

    run_id: str
    suite: str
    path: str
    started: float
    finished: float | None
    status: str
    summary: dict[str, Any]


@contextmanager
def read_only(path: Path) -> Iterator[sqlite3.Connection]:
    if not path.is_file():
        raise ConfigError(
            f"no run store at {path}: run `accord eval` or `accord test` in this project "
            "first, or give --project the project's folder"
        )
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
    except sqlite3.Error as exc:
        raise ConfigError(f"cannot open the run store {path}: {exc}") from None
    try:
        yield conn
    except sqlite3.Error as exc:
        raise ConfigError(f"cannot read the run store {path}: {exc}") from None
    finally:
        conn.close()


def list_rows(path: Path, limit: int = 1000, suite: str | None = None) -> list[RunRow]:
    """Runs newest first (of one suite)."""
    query = "SELECT run_id, workflow, path, started, finished, status, summary FROM runs"
    args: tuple[Any, ...] = ()
    if suite is not None:
        query, args = query + " WHERE workflow = ?", (suite,)
    with read_only(path) as conn:
        rows = conn.execute(query + " ORDER BY started DESC LIMIT ?", (*args, limit)).fetchall()
    return [RunRow(r[0], r[1], r[2], r[3], r[4], r[5], _json_object(r[6])) for r in rows]


def _json_object(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def find_row(
    path: Path, ref: str, before: float | None = None, suites: tuple[str, ...] = ()
) -> RunRow:
    """The run `ref` names: an id or unique prefix, `last` (the newest), or `last~N` (N runs
    before it). `before` and `suites` narrow what `last` counts: runs started before a time,
    of these suites."""
    rows = list_rows(path, limit=100000)
    if not rows:
        raise ConfigError(f"no runs recorded yet in {path}")
    match = _REF.match(ref)
    if match:
        pool = [
            r for r in rows
            if (before is None or r.started < before) and (not suites or r.suite in suites)
        ]  # fmt: skip
        back = int(match.group("back") or 0)
        if back >= len(pool):
            of = f" of suite {', '.join(suites)}" if suites else ""
            raise ConfigError(
                f"'{ref}': only {len(pool)} earlier run(s){of} recorded in {path} "
                f"(recent runs: {_recent(rows)})"
            )
        return pool[back]
    found = [r for r in rows if r.run_id == ref] or [r for r in rows if r.run_id.startswith(ref)]
    if len(found) != 1:
        what = "matches several runs" if found else "is not a recorded run"
        raise ConfigError(
            f"'{ref}' {what} (recent runs: {_recent(rows)}; or use 'last', 'last~1', or a "
            "results file written by --format json)"
        )
    return found[0]


def _recent(rows: list[RunRow]) -> str:
    return ", ".join(f"{r.run_id} ({r.suite})" for r in rows[:5])


def stored_results(path: Path, run_id: str) -> list[tuple[str, str, str, str | None, Any]]:
    """(key, type, status, error, output) of every task of a run; output decoded or None."""
    # the case, finding and test outcome types register with the codec where they are defined
    import accord.tasks.suites.core.cases
    import accord.tasks.suites.core.outcomes  # noqa: F401

    with read_only(path) as conn:
        rows = conn.execute(
            "SELECT key, type, status, error, output FROM results WHERE run_id = ?"
            " ORDER BY written, rowid",
            (run_id,),
        ).fetchall()
    out = []
    for key, kind, status, error, text in rows:
        value = None
        if isinstance(text, str):
            try:
                value = codec.loads(text)
            except codec.CodecError:
                value = None
        out.append((str(key), str(kind), str(status), error, value))
    return out


def case_base(key: str) -> tuple[str, int]:
    """A case node's key without its `.verdict`/`.target` and `@n` repeat suffix."""
    base = key.rsplit(".", 1)[0]
    match = _REPEAT.match(base)
    return (match.group("base"), int(match.group("n")) - 1) if match else (base, 0)


def load_run(path: Path, row: RunRow) -> RunRecord:
    """A stored run as a record: an eval suite's cases from their verdict nodes (a case whose
    target failed from that failure), or an `accord test` run's tests."""
    from accord.tasks.suites.compare.convert import case_result_sample, outcome_tests

    record = RunRecord(label=row.run_id, started=row.started, run_ids=[row.run_id])
    results = stored_results(path, row.run_id)
    verdicts = {k: v for k, kind, _s, _e, v in results if kind == "eval_verdict"}
    if any(kind == "accord_test" for _k, kind, *_ in results):
        for _key, kind, _status, error, value in results:
            if kind == "accord_test":
                for test in outcome_tests(value, error):
                    suite = record.suite(str(test["name"]))
                    for case_id, sample in samples_of_test(test):
                        suite.add(case_id, sample)
        return record
    suite = record.suite(row.suite)
    errors: dict[str, str] = {}
    for key, kind, status, error, _value in results:
        if kind == "eval_target" and status != "succeeded":
            errors[key.rsplit(".", 1)[0]] = error or status
    seen: set[str] = set()
    for key, kind, _status, _error, _value in results:
        if kind not in ("eval_target", "eval_verdict"):
            continue
        node = key.rsplit(".", 1)[0]
        if node in seen:
            continue
        value = verdicts.get(f"{node}.verdict")
        if value is not None:
            seen.add(node)
            case_id, sample = case_result_sample(value)
            suite.add(case_id, sample)
        elif node in errors:
            seen.add(node)
            suite.add(case_base(key)[0], Sample("error", None, error=errors[node]))
    suite.repeat = max((len(c.samples) for c in suite.cases.values()), default=1)
    return record
