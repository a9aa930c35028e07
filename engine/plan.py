"""The compiled, immutable form of a workflow: tasks, their edges and priorities."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import Issue
from .spec import TaskSpec, VariableSpec


@dataclass(frozen=True, eq=False)
class PlannedTask:
    """One task of a scope, ready to schedule.

    `deps` are names of tasks of the same scope that must finish first; `children` are the
    compiled nested scopes (a loop body, each branch of a conditional, a sub-workflow).
    `priority` is the length of the longest path from this task to the end of its scope.
    """

    name: str
    spec: TaskSpec
    order: int
    deps: tuple[str, ...]
    priority: int
    container: bool
    line: int | None
    children: Mapping[str, Plan] = field(default_factory=dict)

    @property
    def type(self) -> str:
        return self.spec.type


@dataclass(frozen=True, eq=False)
class Plan:
    """A compiled scope: the top of a workflow file, or a nested task list.

    `outer_refs` are the names this scope reads from enclosing scopes; the container task
    that owns it depends on them.
    """

    name: str
    path: Path
    root: Path
    tasks: tuple[PlannedTask, ...]
    variables: Mapping[str, VariableSpec]
    outer_refs: frozenset[str]
    workflow: Any = None
    description: str | None = None
    variable_lines: Mapping[str, int] = field(default_factory=dict)
    # what validate names without failing (Oxy accepts it; accord runs it only in part)
    notes: tuple[Issue, ...] = ()
    # the file's values of the sections plugins add to workflows (`registry.register_section`)
    sections: Mapping[str, Any] = field(default_factory=dict)

    @property
    def by_name(self) -> dict[str, PlannedTask]:
        return {t.name: t for t in self.tasks}

    def dependants(self) -> dict[str, list[str]]:
        """For each task, the tasks of this scope that wait for it."""
        out: dict[str, list[str]] = {t.name: [] for t in self.tasks}
        for task in self.tasks:
            for dep in task.deps:
                out[dep].append(task.name)
        return out

    def to_networkx(self) -> Any:
        """This scope's tasks as a networkx DiGraph (edges run dependency -> dependant); each
        node carries its PlannedTask as `task`."""
        import networkx as nx

        graph = nx.DiGraph()
        for task in self.tasks:
            graph.add_node(task.name, task=task)
        graph.add_edges_from((dep, task.name) for task in self.tasks for dep in task.deps)
        return graph

    def count_nodes(self) -> int:
        """Tasks in this plan and every static child plan."""
        total = 0
        for task in self.tasks:
            total += 1
            for child in task.children.values():
                total += child.count_nodes()
        return total
