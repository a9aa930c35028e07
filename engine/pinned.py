"""Oxy's pinned task cache (`cache: {enabled: true, path}`), with invalidation.

The output is written to `path` and reused while the file exists, so a user can read and edit
it (the SQL an agent wrote, say). Unlike Oxy, a sidecar file records the hash of the task's
inputs: when an input changes, the pinned output is stale and the task runs again (with a log
line); an edit to the pinned file itself is kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import log
from .outputs import table_from_data
from .render import TableView


def sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".accord.json")


def read_pinned(path: Path, input_hash: str, key: str) -> tuple[bool, Any]:
    """(True, output) when `path` holds this task's output for the same inputs. A sidecar or
    a pinned table that is not what accord wrote (damaged, or edited into another shape) is
    not reused: the task runs again and writes it anew."""
    if not path.is_file():
        return False, None
    meta_path = sidecar(path)
    meta: Any = {}  # no sidecar: a cache Oxy wrote, reused as text
    if meta_path.is_file():
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            meta = None
        if not isinstance(meta, dict):
            log.get().warning("pinned_cache_unreadable", task=key, path=str(meta_path))
            return False, None
    if meta.get("input_hash") not in (None, input_hash):
        log.get().info("pinned_cache_stale", task=key, path=str(path))
        return False, None
    try:
        text = path.read_text(encoding="utf-8")
        if meta.get("kind") == "table":
            return True, table_from_data(json.loads(text))
    except (OSError, ValueError, TypeError, RecursionError) as exc:
        log.get().warning("pinned_cache_unreadable", task=key, path=str(path), error=str(exc))
        return False, None
    return True, text


def write_pinned(path: Path, output: Any, input_hash: str) -> None:
    """Write the output (text, or a table as JSON) and its sidecar."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(output, TableView):
        from .render import jsonable

        rows = [[jsonable(v) for v in row] for row in output.rows]
        path.write_text(json.dumps({"columns": output.columns, "rows": rows}), encoding="utf-8")
        kind = "table"
    else:
        path.write_text(str(output), encoding="utf-8")
        kind = "text"
    sidecar(path).write_text(json.dumps({"input_hash": input_hash, "kind": kind}), "utf-8")
