"""`--format json`: one JSON document on stdout and nothing else there."""

from __future__ import annotations

import json
from typing import Any

from ..masking import mask_data
from ..render import jsonable
from ..results import RunResult


def run_document(result: RunResult) -> dict[str, Any]:
    """The run as plain data: status, outputs of top-level tasks, every task's result."""
    usage = result.usage
    return {
        "run_id": result.run_id,
        "workflow": result.workflow,
        "status": result.status.value,
        "error": None
        if result.error is None
        else {"task": result.failed_task, "message": result.error},
        "outputs": jsonable(result.outputs),
        "tasks": [
            {
                "task": r.key,
                "type": r.type,
                "status": r.status.value,
                "seconds": round(r.duration, 6),
                "attempts": r.attempts,
                "error": r.error,
                **(
                    {"usage": usage.by_task[r.key].to_json()}
                    if usage is not None and r.key in usage.by_task
                    else {}
                ),
            }
            for r in result.results
        ],
        "summary": {
            "seconds": round(result.duration, 6),
            "tasks": result.counts(),
            "usage": usage.total.to_json() if usage is not None else None,
            "stats": result.stats,
            "resumed_from": result.resumed_from,
            "files": result.files,
        },
    }


def render_run(result: RunResult) -> str:
    return json.dumps(mask_data(run_document(result)), indent=2, ensure_ascii=False, default=str)
