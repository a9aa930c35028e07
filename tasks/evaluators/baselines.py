"""Automatic battle baselines: for each (suite, case, evaluator), the best output seen so far,
kept in the project's run store beside the runs that produced it (`battle` reads and replaces
it; `accord runs baselines` lists and resets it)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ...engine import stored
from ...engine.store import connect, register_table

register_table(
    "baselines",
    """
CREATE TABLE IF NOT EXISTS baselines (
    suite TEXT NOT NULL,
    case_id TEXT NOT NULL,
    evaluator TEXT NOT NULL,
    output TEXT NOT NULL,
    run_id TEXT,
    updated REAL NOT NULL,
    PRIMARY KEY (suite, case_id, evaluator)
);
""",
)


def get_baseline(path: Path, suite: str, case_id: str, evaluator: str) -> str | None:
    conn = connect(path)
    try:
        row = conn.execute(
            "SELECT output FROM baselines WHERE suite = ? AND case_id = ? AND evaluator = ?",
            (suite, case_id, evaluator),
        ).fetchone()
    finally:
        conn.close()
    return None if row is None else stored.text(row[0])


def save_baseline(
    path: Path, suite: str, case_id: str, evaluator: str, output: str, run_id: str | None
) -> None:
    conn = connect(path)
    try:
        conn.execute(
            "INSERT OR REPLACE INTO baselines VALUES (?, ?, ?, ?, ?, ?)",
            (suite, case_id, evaluator, output, run_id, time.time()),
        )
        conn.commit()
    finally:
        conn.close()


def list_baselines(path: Path, suite: str | None = None) -> list[dict[str, Any]]:
    """Every saved baseline (of one suite), oldest suite first."""
    if not path.is_file():
        return []
    conn = connect(path)
    try:
        query = "SELECT suite, case_id, evaluator, output, run_id, updated FROM baselines"
        args: tuple[str, ...] = ()
        if suite is not None:
            query, args = query + " WHERE suite = ?", (suite,)
        rows = conn.execute(query + " ORDER BY suite, case_id, evaluator", args).fetchall()
    finally:
        conn.close()
    return [
        {
            "suite": stored.shown(suite),
            "case": stored.shown(case),
            "evaluator": stored.shown(evaluator),
            "output": stored.shown(output),
            "run_id": None if run is None else stored.shown(run),
            "updated": stored.timestamp(updated),
        }
        for suite, case, evaluator, output, run, updated in rows
    ]


def reset_baselines(path: Path, suite: str | None = None, case_id: str | None = None) -> int:
    """Delete baselines (all, a suite's, or one case's); how many were deleted."""
    if not path.is_file():
        return 0
    conn = connect(path)
    try:
        clauses, args = [], []
        for column, value in (("suite", suite), ("case_id", case_id)):
            if value is not None:
                clauses.append(f"{column} = ?")
                args.append(value)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        count = conn.execute(f"DELETE FROM baselines{where}", args).rowcount
        conn.commit()
    finally:
        conn.close()
    return int(count)
