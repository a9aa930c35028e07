"""B23: the evaluation wing's layout, from the code's own imports (an AST pass over engine/,
tasks/ and src/accord/*.py; nothing is run).

Prints: lines per package of tasks/suites; the import graph's cycles (imports inside
functions and type-only imports counted, `from pkg import module` read as importing the
module), the largest, and any that holds modules of two front-ends; the imports from
promptfoo's modules into AgentV's; and the `dialect ==` / `dialect !=` tests outside a class
whose name ends in `Dialect`.

Then the walk of one load (this part runs code): a promptfoo config and an AgentV 4 file of a
few tests each are loaded through their front-end, once to import everything and once under
a profiler, which counts the accord modules whose functions run (modules walked through), the
moves from one module to another (stays), and the times a YAML document is parsed.

Targets (issue 42): no module of promptfoo's imports an AgentV module; no `dialect ==` test
outside a dialect class; no import cycle of more than 10 modules, and none across two
front-ends; a promptfoo config's load walks through at most 15 modules, an AgentV 4 file's
through at most 20, and each file is parsed once.
"""

from __future__ import annotations

import ast
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
SUITES = "accord.tasks.suites."
# the packages of the formats users bring (a module of two of them in one cycle is a fault)
FRONTENDS = ("promptfoo", "agentv", "scenarios", "conversations", "oxy", "evalfile", "pyapi")


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for top in ("engine", "tasks"):
        for path in (ROOT / top).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found["accord." + name.removesuffix(".__init__")] = path
    for path in (ROOT / "src" / "accord").glob("*.py"):
        found["accord." + path.stem.removesuffix("__init__").rstrip(".") or "accord"] = path
    return {name.rstrip("."): path for name, path in found.items()}


def absolute(module: str, node: ast.ImportFrom) -> str:
    """The dotted name an import names, relative imports resolved against `module`."""
    if not node.level:
        return node.module or ""
    package = module.split(".")
    base = package[: len(package) - node.level]
    return ".".join([*base, node.module] if node.module else base)


def graph(known: dict[str, Path]) -> tuple[nx.DiGraph, int]:
    edges: nx.DiGraph = nx.DiGraph()
    inside = 0
    for module, path in known.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        stack: list[tuple[ast.AST, bool]] = [(tree, False)]
        while stack:
            node, in_function = stack.pop()
            for child in ast.iter_child_nodes(node):
                nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                stack.append((child, nested))
                hits: list[str] = []
                if isinstance(child, ast.Import):
                    hits = [alias.name for alias in child.names if alias.name in known]
                elif isinstance(child, ast.ImportFrom):
                    # `.x` in a package's __init__ is relative to the package itself
                    base = absolute(module + ".__init__" if is_package else module, child)
                    for alias in child.names:
                        named = f"{base}.{alias.name}"  # `from pkg import module`
                        hits += [named] if named in known else [base] if base in known else []
                for target in hits:
                    edges.add_edge(module, target)
                inside += bool(hits) and in_function
    edges.remove_edges_from(nx.selfloop_edges(edges))
    return edges, inside


def frontend(module: str) -> str | None:
    if not module.startswith(SUITES):
        return None
    rest = module.removeprefix(SUITES).split(".")
    if rest[0] == "frontends" and len(rest) > 1:
        rest = rest[1:]
    for name in FRONTENDS:
        if rest[0].startswith(name):
            return name
    return None


def is_agentv(module: str) -> bool:
    return frontend(module) == "agentv" or (
        frontend(module) == "promptfoo" and "agentv" in module.rsplit(".", 1)[-1]
    )


def owner(module: str) -> str | None:
    """The format a module serves (AgentV 4's modules inside promptfoo's package: AgentV)."""
    return "agentv" if is_agentv(module) else frontend(module)


def dialect_tests(known: dict[str, Path]) -> list[str]:
    """`dialect ==` / `!=` comparisons outside a class named `...Dialect`, as file:line."""
    found = []
    for path in sorted(set(known.values())):
        if "suites" not in path.parts:
            continue  # the formats' dialects (SQL's have theirs in tasks/semantic)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        stack: list[tuple[ast.AST, bool]] = [(tree, False)]
        while stack:
            node, in_dialect = stack.pop()
            for child in ast.iter_child_nodes(node):
                inner = in_dialect or (
                    isinstance(child, ast.ClassDef) and child.name.endswith("Dialect")
                )
                stack.append((child, inner))
                if not isinstance(child, ast.Compare) or in_dialect:
                    continue
                if not all(isinstance(op, ast.Eq | ast.NotEq) for op in child.ops):
                    continue
                for side in (child.left, *child.comparators):
                    name = side.attr if isinstance(side, ast.Attribute) else getattr(side, "id", "")
                    if name == "dialect":
                        found.append(f"{path.relative_to(ROOT)}:{child.lineno}")
                        break
    return found


def main() -> None:
    load = os.getloadavg()[0]
    known = modules()
    edges, inside = graph(known)
    print(f"B23 layout of the evaluation wing ({len(known)} modules; load {load:.2f})")
    sizes: Counter[str] = Counter()
    for module, path in known.items():
        if module.startswith(SUITES):
            part = module.removeprefix(SUITES).split(".")
            key = "/".join(part[:2] if part[0] == "frontends" and len(part) > 2 else part[:1])
            sizes[key] += len(path.read_text(encoding="utf-8").splitlines())
    total = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in set(known.values()))
    print(f"  lines: {total:,} in all; tasks/suites by package:")
    for key, lines in sizes.most_common():
        print(f"    {key:<28} {lines:>7,}")
    cycles = sorted(
        (sorted(c) for c in nx.strongly_connected_components(edges) if len(c) > 1),
        key=len,
        reverse=True,
    )
    print(f"  imports inside functions: {inside}")
    print(f"  import cycles: {[len(c) for c in cycles]}")
    across = [c for c in cycles if len({owner(m) for m in c} - {None}) > 1]
    worst = len(cycles[0]) if cycles else 0
    print(
        f"  largest cycle: {worst} modules (target <= 10: {'met' if worst <= 10 else 'NOT met'})"
        + (f", {cycles[0][0]} ..." if cycles else "")
    )
    print(
        f"  cycles across two front-ends: {len(across)} "
        f"(target 0: {'met' if not across else 'NOT met'})"
    )
    for cycle in across:
        print(f"    {sorted({owner(m) for m in cycle} - {None})}: {len(cycle)} modules")
    into = sorted(
        (a, b)
        for a, b in edges.edges
        if frontend(a) == "promptfoo" and not is_agentv(a) and is_agentv(b)
    )
    print(
        f"  imports from promptfoo's modules into AgentV's: {len(into)} "
        f"(target 0: {'met' if not into else 'NOT met'})"
    )
    tests = dialect_tests(known)
    print(
        f"  `dialect ==` tests outside a dialect class: {len(tests)} "
        f"(target 0: {'met' if not tests else 'NOT met'})"
    )
    by_file = Counter(t.split(":")[0] for t in tests)
    for file, count in by_file.most_common(5):
        print(f"    {file}: {count}")


PROMPTFOO_CONFIG = """\
description: a promptfoo config of a few tests
prompts:
  - "Answer in one word: {{question}}"
providers:
  - echo
defaultTest:
  assert:
    - {type: regex, value: "^.{0,200}$"}
tests:
  - vars: {question: What is the capital of France?}
    assert:
      - {type: icontains, value: paris}
  - vars: {question: What is 2 + 2?}
    assert:
      - {type: contains-any, value: ["4", four]}
      - {type: llm-rubric, value: gives a number}
"""

AGENTV4_FILE = """\
name: a few AgentV 4 tests
providers:
  - echo
prompts:
  - "{{ input }}"
tests:
  - id: capital
    vars: {input: What is the capital of France?}
    assert:
      - {type: contains, value: Paris}
      - The answer names the capital of France.
  - id: sum
    vars: {input: What is 2 + 2?}
    assert:
      - {type: trajectory:tool-used, value: {name: calculator, min: 1}}
"""


def walk(name: str, text: str) -> tuple[int, int, int]:
    """(modules, stays, YAML parses) of one load of `text` through its front-end."""
    from accord.tasks.suites.core.frontend import Request, Source, frontends

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_text(text, encoding="utf-8")
        (Path(folder) / "config.yml").write_text("models: []\n", encoding="utf-8")
        chosen = next(f for f in frontends() if f.claims(Source(path)))
        chosen.load(Source(path), Request(judge_model="openai/gpt-4o-mini"))  # imports
        visits: list[str] = []
        parses = 0

        def profile(frame: Any, event: str, _arg: Any) -> None:
            nonlocal parses
            if event != "call":
                return
            module = frame.f_globals.get("__name__", "")
            if module.startswith("accord."):
                if not visits or visits[-1] != module:
                    visits.append(module)
                if module == "accord.engine.yamlmarks" and frame.f_code.co_name == "parse_yaml":
                    parses += frame.f_locals.get("path") == path  # this file, not config.yml
            elif module == "yaml" and frame.f_code.co_name == "load":
                parses += frame.f_locals.get("stream") == text

        sys.setprofile(profile)
        try:
            chosen.load(Source(path), Request(judge_model="openai/gpt-4o-mini"))
        finally:
            sys.setprofile(None)
    return len(set(visits)), len(visits), parses


def walks() -> None:
    for label, name, text, target in (
        ("promptfoo config", "promptfooconfig.yaml", PROMPTFOO_CONFIG, 15),
        ("AgentV 4 file", "answers.suite.yaml", AGENTV4_FILE, 20),
    ):
        modules, stays, parses = walk(name, text)
        met = "met" if modules <= target and parses == 1 else "NOT met"
        print(
            f"  load of a {label}: {modules} modules, {stays} stays, parsed {parses} time(s) "
            f"(target <= {target} modules, parsed once: {met})"
        )


if __name__ == "__main__":
    main()
    walks()
