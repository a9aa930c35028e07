"""Results of tasks and runs."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Status(enum.StrEnum):
    """A task's final state."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"
    CANCELLED = "cancelled"


@dataclass
class TaskResult:
    """What one node of the run produced."""

    key: str
    type: str
    status: Status
    output: Any = None
    error: str | None = None
    started: float | None = None
    finished: float | None = None
    attempts: int = 0
    top_level: bool = False

    def __repr__(self) -> str:  # outputs can be large tables: keep reprs (and tracebacks) short
        return f"TaskResult({self.key!r}, {self.status.value})"

    @property
    def duration(self) -> float:
        if self.started is None or self.finished is None:
            return 0.0
        return self.finished - self.started


@dataclass
class RunResult:
    """A whole run: every task's result in the order they finished, and the outputs."""

    run_id: str
    workflow: str
    status: Status
    results: list[TaskResult] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    started: float = 0.0
    finished: float = 0.0
    error: str | None = None
    failed_task: str | None = None
    usage: Any = None
    stats: dict[str, int] = field(default_factory=dict)
    resumed_from: str | None = None
    files: list[str] = field(default_factory=list)  # written by the run, as the user opens them
    # counts by status of results a run in parts handed on without keeping (runner.PlanParts)
    earlier: dict[str, int] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"RunResult({self.run_id!r}, {self.status.value}, {len(self.results)} results)"

    @property
    def duration(self) -> float:
        return self.finished - self.started

    def counts(self) -> dict[str, int]:
        out = {s.value: self.earlier.get(s.value, 0) for s in Status}
        for result in self.results:
            out[result.status.value] += 1
        return out
