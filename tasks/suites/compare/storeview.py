"""The run store read-only: `accord runs compare` and `accord view` never write it.

The store is opened with SQLite's `mode=ro` URI, so neither a comparison nor the web page can
change a run, create the file, or take a write lock from a run in progress; a store a newer
accord wrote is refused, as every other command refuses it. Stored case results are read back
with the engine's codec (data by registered name, never code), every column through
engine.stored and every case value through intake.py: a tampered row reads with its bad
value missing (and the reason), never as a crash.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ....engine import codec, sqlite, stored
from ....engine.errors import ConfigError
from ....engine.store import run_from_row
from .intake import Intake
from .records import RunRecord, Sample

_REPEAT = re.compile(r"^(?P<base>.+)@(?P<n>\d+)$")
_REF = re.compile(r"^last(?:~(?P<back>\d+))?$")


@dataclass(frozen=True)
class RunRow:
    """A run's row: id, suite (the stored workflow name), times, status and summary, each
    checked (engine.stored): a start time that is not a time reads as None."""

    run_id: str
    suite: str
    path: str
    started: float | None
    finished: float | None
    status: str
    summary: dict[str, Any] | None


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
    conn.text_factory = sqlite.text_or_bytes  # bad UTF-8 reads as bytes, refused per value
    try:
        from ....engine.store import FORMAT, newer_format

        try:
            sqlite.format_of(conn, FORMAT)
        except sqlite.NewerFormat as exc:
            raise newer_format(path, exc.found) from None
        yield conn
    except sqlite3.Error as exc:
        raise ConfigError(f"cannot read the run store {path}: {exc}") from None
    finally:
        conn.close()


def list_rows(path: Path, limit: int = 1000, suite: str | None = None) -> list[RunRow]:
    """Runs newest first (of one suite); a run whose start time is not a number sorts last,
    one whose id is not text is left out."""
    query = "SELECT run_id, workflow, path, started, finished, status, error, summary FROM runs"
    args: tuple[Any, ...] = ()
    if suite is not None:
        query, args = query + " WHERE workflow = ?", (suite,)
    order = " ORDER BY typeof(started) IN ('integer', 'real') DESC, started DESC LIMIT ?"
    with read_only(path) as conn:
        rows = conn.execute(query + order, (*args, limit)).fetchall()
    return [row for row in map(_run_row, rows) if row is not None]


def _run_row(row: tuple[Any, ...]) -> RunRow | None:
    run = run_from_row(row)  # the store's own reading of a run row, every field checked
    if run is None:
        return None
    return RunRow(
        run.run_id, run.workflow, run.path, run.started, run.finished, run.status, run.summary
    )


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
            if (before is None or (r.started is not None and r.started < before))
            and (not suites or r.suite in suites)
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
    from ..core import cases  # noqa: F401
    from ..testing import outcomes  # noqa: F401

    with read_only(path) as conn:
        rows = conn.execute(
            "SELECT key, type, status, error, output FROM results WHERE run_id = ?"
            " ORDER BY written, rowid",
            (run_id,),
        ).fetchall()
    out = []
    for key, kind, status, error, text in rows:
        if not isinstance(key, str):
            continue  # a task key that is not text names no case
        value = None
        if isinstance(text, str):
            try:
                value = codec.loads(text)
            except codec.CodecError:
                value = None
        shown_error = None if error is None else stored.shown(error)
        out.append((key, stored.shown(kind), stored.shown(status), shown_error, value))
    return out


def case_base(key: str) -> tuple[str, int]:
    """A case node's key without its `.verdict`/`.target` and `@n` repeat suffix."""
    base = key.rsplit(".", 1)[0]
    match = _REPEAT.match(base)
    return (match.group("base"), int(match.group("n")) - 1) if match else (base, 0)


def load_run(path: Path, row: RunRow) -> RunRecord:
    """A stored run as a record: an eval suite's cases from their verdict nodes (a case whose
    target failed from that failure), or an `accord test` run's tests."""
    from .convert import outcome_tests

    record = RunRecord(label=row.run_id, started=row.started, run_ids=[row.run_id])
    intake = Intake(f"run {row.run_id}")
    results = stored_results(path, row.run_id)
    verdicts = {k: v for k, kind, _s, _e, v in results if kind == "eval_verdict"}
    if any(kind == "accord_test" for _k, kind, *_ in results):
        for _key, kind, _status, error, value in results:
            if kind == "accord_test":
                for test in outcome_tests(value, error):
                    suite = record.suite(str(test["name"]))
                    for case_id, sample in intake.test_cases(test, "a stored test"):
                        suite.add(case_id, sample)
        return intake.into(record)
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
            suite.add(*intake.case_result(value))
        elif node in errors:
            seen.add(node)
            suite.add(case_base(key)[0], Sample("error", None, error=errors[node]))
    suite.repeat = max((len(c.samples) for c in suite.cases.values()), default=1)
    return intake.into(record)
