"""JSON references in a promptfoo config: `$ref: '#/assertionTemplates/name'`.

promptfoo 0.118 (`src/util/config/load.ts` `dereferenceConfig`) replaces every `$ref` of
the config by what it points at (json-schema-ref-parser's `dereference`), before it checks
the config; the keys beside a `$ref` are laid over the target (an "extended" reference).
Here the references inside the config itself (`#/...`) are resolved the same way; one to
another file is refused at its line, as is one whose target is missing or refers to itself.
A top-level key that only holds the targets (promptfoo's `assertionTemplates`, or any
other name) is accepted: promptfoo reads it through the references and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .....engine import budget
from .....engine.yamlmarks import Loc

Report = Callable[[Loc, str], None]
_DEPTH = 32  # deeper chains of references are a cycle


def resolve(data: dict[str, Any], report: Report) -> tuple[dict[str, Any], set[str]]:
    """The config with its `#/` references replaced, and the top-level keys they point
    into (the keys that only hold reference targets). Problems go to `report(loc, msg)`."""
    targets: set[str] = set()
    made = budget.Counter(
        "$ref references", advice="refer to the large parts fewer times, or write them out"
    )
    at: list[Loc] = [()]  # the reference being expanded, where the file writes it

    def follow(pointer: str, loc: Loc, depth: int) -> Any:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer[2:].split("/")]
        node: Any = data
        for part in parts:
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                report(loc, f"$ref '{pointer}': nothing at that place in the config: "
                       "point it at a key of the config ('#/assertionTemplates/X')")  # fmt: skip
                return None
        if parts and parts[0]:
            targets.add(parts[0])
        return walk(node, loc, depth + 1)

    def walk(node: Any, loc: Loc, depth: int) -> Any:
        made.spend(int(depth > 0))  # a value a reference makes: counted before it is built
        if depth > _DEPTH:
            report(loc, "$ref: the references lead back to themselves: break the cycle")
            return None
        if isinstance(node, list):
            return [walk(item, (*loc, i), depth) for i, item in enumerate(node)]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if ref is None:
            return {k: walk(v, (*loc, k), depth) for k, v in node.items()}
        if not isinstance(ref, str) or not ref.startswith("#/"):
            report(loc, f"$ref {ref!r}: accord resolves references inside the config "
                   "('#/KEY/...'), not to other files or URLs: copy the part in, or use a "
                   "file:// value where promptfoo takes one")  # fmt: skip
            return {k: v for k, v in node.items() if k != "$ref"}
        at[0] = loc
        target = follow(ref, loc, depth)
        rest = {k: walk(v, (*loc, k), depth) for k, v in node.items() if k != "$ref"}
        # `follow` built the target anew (`walk`), so it is no other place's value
        if rest and isinstance(target, dict):
            return {**target, **rest}
        return target if target is not None else rest or None

    if not _has_ref(data):
        return data, set()
    try:
        resolved = walk(data, (), 0)
    except budget.ExpansionError as exc:
        report(at[0], exc.message)
        return {k: v for k, v in data.items() if not _has_ref(v)}, targets
    return resolved, targets


def _has_ref(node: Any) -> bool:
    if isinstance(node, dict):
        return "$ref" in node or any(_has_ref(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_ref(v) for v in node)
    return False
