"""`accord runs list|show`: the run store as a table or as JSON."""

from __future__ import annotations

import datetime as dt
import io
import json
from typing import Any

from rich.console import Console
from rich.table import Table

from ..store import INTERRUPTED, StoredRun
from .terminal import printable, shown


def _when(timestamp: float | None) -> str:
    if timestamp is None:
        return ""
    try:
        return dt.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, ValueError, OSError):  # at the ends of what the local clock shows
        return ""


def _run_json(run: StoredRun) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "workflow": run.workflow,
        "path": run.path,
        "status": run.status,
        "started": _when(run.started),
        "finished": _when(run.finished),
        "error": run.error,
        "summary": run.summary,
    }


def _render(table: Table) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=120).print(table)
    return buffer.getvalue().rstrip()


def render_runs(runs: list[StoredRun], fmt: str) -> str:
    if fmt == "json":
        return json.dumps([_run_json(r) for r in runs], indent=2)
    if not runs:
        return "no runs recorded yet"
    table = Table("run", "workflow", "status", "started", "seconds", "tasks")
    for run in runs:
        summary = run.summary or {}
        tasks = summary.get("tasks") or {}
        counts = ", ".join(f"{v} {k}" for k, v in tasks.items() if v)
        seconds = summary.get("seconds")
        table.add_row(
            shown(run.run_id),
            shown(run.workflow),
            shown(run.status),
            _when(run.started),
            f"{seconds:.2f}" if seconds is not None else "",
            shown(counts),
        )
    return _render(table)


def render_run(run: StoredRun, results: list[dict[str, Any]], fmt: str) -> str:
    if fmt == "json":
        return json.dumps({**_run_json(run), "tasks": results}, indent=2, default=str)
    table = Table(
        "task",
        "type",
        "status",
        "seconds",
        "error",
        title=f"run {shown(run.run_id)}",
        title_justify="left",
    )
    for item in results:
        seconds = item["seconds"]
        table.add_row(
            shown(item["task"]),
            shown(item["type"]),
            "reused" if item.get("reused") else shown(item["status"]),
            f"{seconds:.3f}" if seconds is not None else "",
            shown(item["error"] or ""),
        )
    # printed as it is, not through rich: only control characters need neutralising
    head = f"{run.workflow} ({run.path}): {run.status}, started {_when(run.started)}"
    if run.status == INTERRUPTED:
        head += (
            f"\n{run.error or 'interrupted'}: `accord run {run.path} --resume "
            f"{run.run_id}` reuses its finished tasks"
        )
    return printable(head) + "\n" + _render(table)
