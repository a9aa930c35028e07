"""The join graph of a topic: an edge from view A to view B when A has a foreign entity named
like B's primary entity (A.keys = B.keys, many rows of A to one of B).

A query joins from a root view along the shortest path to each view it needs: first along
edges (many-to-one, which never repeats a row of the root), else against them. Two shortest
paths of the same length are ambiguous, and an error names both.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .model import ViewSpec


class JoinError(Exception):
    """No join path, or more than one: the message says which views and what to add."""


@dataclass(frozen=True)
class Edge:
    """`source` joins `target` on source.source_keys = target.target_keys (dimension names);
    `entity` names the link."""

    source: str
    target: str
    source_keys: tuple[str, ...]
    target_keys: tuple[str, ...]
    entity: str
    forward: bool = True  # many-to-one (foreign -> primary)

    def reversed(self) -> Edge:
        return Edge(
            self.target, self.source, self.target_keys, self.source_keys, self.entity, False
        )


@dataclass(frozen=True)
class JoinGraph:
    views: dict[str, ViewSpec]
    edges: tuple[Edge, ...]

    def out(self, view: str, directed: bool) -> list[Edge]:
        found = [e for e in self.edges if e.source == view]
        if not directed:
            found += [e.reversed() for e in self.edges if e.target == view]
        return found

    def path(self, root: str, target: str) -> list[Edge]:
        """The edges from `root` to `target`: the shortest many-to-one path, else the shortest
        path at all; JoinError when there is none or when two are equally short."""
        if root == target:
            return []
        for directed in (True, False):
            paths = self._shortest(root, target, directed)
            if len(paths) > 1:
                shown = " and ".join(_show(p) for p in paths[:2])
                raise JoinError(
                    f"ambiguous join from view '{root}' to view '{target}': {shown} are "
                    "equally short; remove one of the entities, or query through one view"
                )
            if paths:
                return paths[0]
        raise JoinError(
            f"view '{target}' cannot be joined to view '{root}': no chain of entities links "
            "them in the topic (give one a foreign entity named like the other's primary one)"
        )

    def _shortest(self, root: str, target: str, directed: bool) -> list[list[Edge]]:
        """Every shortest path (at most 2 are kept: 2 are enough to be ambiguous)."""
        best: dict[str, int] = {root: 0}
        ways: dict[str, list[list[Edge]]] = {root: [[]]}
        queue = deque([root])
        while queue:
            view = queue.popleft()
            if target in best and best[view] >= best[target]:
                break
            for edge in self.out(view, directed):
                depth = best[view] + 1
                if edge.target not in best:
                    best[edge.target] = depth
                    ways[edge.target] = []
                    queue.append(edge.target)
                if best[edge.target] == depth:
                    extended = [[*p, edge] for p in ways[view]]
                    ways[edge.target] = (ways[edge.target] + extended)[:2]
        return ways.get(target, [])

    def reaches_all(self, root: str, targets: set[str]) -> bool:
        """Whether every target is on a many-to-one path from `root`."""
        seen, queue = {root}, deque([root])
        while queue:
            for edge in self.out(queue.popleft(), True):
                if edge.target not in seen:
                    seen.add(edge.target)
                    queue.append(edge.target)
        return targets <= seen

    def tree(self, root: str, targets: list[str]) -> list[Edge]:
        """The joins from `root` to every target, each view joined once, in join order."""
        joined = {root}
        out: list[Edge] = []
        for target in targets:
            for edge in self.path(root, target):
                if edge.target not in joined:
                    joined.add(edge.target)
                    out.append(edge)
        return out


def _show(path: list[Edge]) -> str:
    return " -> ".join([path[0].source, *(e.target for e in path)])


def build_graph(views: dict[str, ViewSpec]) -> tuple[JoinGraph, list[str]]:
    """The topic's join graph, and its problems (an entity that is the primary one of two
    views, keys of different lengths)."""
    problems: list[str] = []
    owners: dict[str, str] = {}
    for name, view in views.items():
        primary = view.primary
        if primary is None:
            continue
        if primary.name in owners:
            problems.append(
                f"entity '{primary.name}' is the primary entity of both view "
                f"'{owners[primary.name]}' and view '{name}': joins to it are ambiguous; "
                "rename one"
            )
            continue
        owners[primary.name] = name
    edges: list[Edge] = []
    for name, view in views.items():
        for entity in view.entities:
            owner = owners.get(entity.name)
            if entity.type != "foreign" or owner is None or owner == name:
                continue
            target_keys = views[owner].primary.key_names  # type: ignore[union-attr]
            if len(entity.key_names) != len(target_keys):
                problems.append(
                    f"view '{name}': foreign entity '{entity.name}' has "
                    f"{len(entity.key_names)} key(s) but view '{owner}' has "
                    f"{len(target_keys)}: give the same number, in the same order"
                )
                continue
            edges.append(
                Edge(name, owner, tuple(entity.key_names), tuple(target_keys), entity.name)
            )
    return JoinGraph(views, tuple(edges)), problems


def entity_owners(views: dict[str, ViewSpec]) -> dict[str, str]:
    """Primary entity name -> its view (first one wins)."""
    owners: dict[str, str] = {}
    for name, view in views.items():
        if view.primary is not None:
            owners.setdefault(view.primary.name, name)
    return owners
