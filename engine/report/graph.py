"""`accord graph`: the compiled DAG as an indented text tree, Graphviz dot, or Mermaid."""

from __future__ import annotations

import re

from ..plan import Plan


def render(plan: Plan, fmt: str) -> str:
    if fmt == "dot":
        return _dot(plan)
    if fmt == "mermaid":
        return _mermaid(plan)
    return _text(plan)


def _text(plan: Plan, indent: str = "") -> str:
    lines = [] if indent else [f"{plan.name} ({plan.path.name})"]
    for task in plan.tasks:
        after = f"  <- {', '.join(task.deps)}" if task.deps else ""
        lines.append(f"{indent}- {task.name} [{task.type}]{after}")
        for label, child in task.children.items():
            lines.append(f"{indent}    {_label(label)}:")
            lines.append(_text(child, indent + "      "))
    return "\n".join(line for line in lines if line)


def _label(label: str) -> str:
    if label == "body":
        return "for each value"
    if label.startswith("if"):
        return f"branch {label}"
    return label


def _ident(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", "__".join(parts))


def _dot(plan: Plan) -> str:
    lines = ["digraph workflow {", "  rankdir=LR;", "  node [shape=box, fontname=Helvetica];"]
    _dot_scope(plan, "", lines, "  ")
    lines.append("}")
    return "\n".join(lines)


def _dot_scope(plan: Plan, prefix: str, lines: list[str], pad: str) -> None:
    for task in plan.tasks:
        ident = _ident(prefix, task.name)
        if task.children:
            lines.append(f"{pad}subgraph cluster_{ident} {{")
            lines.append(f'{pad}  label="{task.name} [{task.type}]";')
            lines.append(f'{pad}  {ident} [label="{task.name}", shape=oval];')
            for label, child in task.children.items():
                _dot_scope(child, f"{prefix}{task.name}_{label}", lines, pad + "  ")
                child_prefix = f"{prefix}{task.name}_{label}"
                for inner in child.tasks:
                    if not inner.deps:
                        target = _ident(child_prefix, inner.name)
                        lines.append(f"{pad}  {ident} -> {target} [style=dashed];")
            lines.append(f"{pad}}}")
        else:
            lines.append(f'{pad}{ident} [label="{task.name}\\n[{task.type}]"];')
        for dep in task.deps:
            lines.append(f"{pad}{_ident(prefix, dep)} -> {ident};")


def _mermaid(plan: Plan) -> str:
    lines = ["flowchart LR"]
    _mermaid_scope(plan, "", lines, "  ")
    return "\n".join(lines)


def _mermaid_scope(plan: Plan, prefix: str, lines: list[str], pad: str) -> None:
    for task in plan.tasks:
        ident = _ident(prefix, task.name)
        if task.children:
            lines.append(f'{pad}subgraph {ident}_group["{task.name} [{task.type}]"]')
            lines.append(f'{pad}  {ident}(["{task.name}"])')
            for label, child in task.children.items():
                _mermaid_scope(child, f"{prefix}{task.name}_{label}", lines, pad + "  ")
            lines.append(f"{pad}end")
        else:
            lines.append(f'{pad}{ident}["{task.name}<br/>{task.type}"]')
        for dep in task.deps:
            lines.append(f"{pad}{_ident(prefix, dep)} --> {ident}")
