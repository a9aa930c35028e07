"""`accord validate` on an agent file's tools: semantic tools naming a topic that does not
exist, retrieval tools with bad settings, SQL tools on a database accord cannot reach, and Oxy
tools accord does not offer, each at its line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...engine.errors import AccordError, Issue, ValidationError
from ...engine.kinds import register_file_check
from ...engine.yamlmarks import parse_yaml, read_text
from ..semantic.model import SemanticLayer, load_layer
from .retrieval_tool import settings_problems

UNSUPPORTED_TOOLS = {
    "create_data_app": "the data-app tool",
    "edit_data_app": "the data-app tool",
    "read_data_app": "the data-app tool",
    "create_v0_app": "the v0 app tool",
    "omni_query": "the Omni tool",
    "looker_query": "the Looker tool",
    "save_automation": "the automation tool",
    "dbt_run": "the dbt tool",
    "dbt_compile": "the dbt tool",
    "retrieval_sql": "the retrieval tool",
}
_SQL_TOOLS = ("execute_sql", "validate_sql")


def check_agent_tools(path: Path) -> str | None:
    """The check of an agent file's tools (None for a file that is not an agent file)."""
    if not path.name.endswith((".agent.yml", ".agent.yaml")):
        return None
    return _tool_problems(path)


def _tool_problems(path: Path) -> str | None:
    """Semantic tools whose topic does not exist; tools accord does not offer, by line."""
    try:
        data, marks = parse_yaml(read_text(path), path)
    except AccordError:
        return None  # the agent check reports it
    tools = data.get("tools") if isinstance(data, dict) else None
    if not isinstance(tools, list):
        return None
    notes: list[str] = []
    issues: list[Issue] = []
    layer: SemanticLayer | None = None
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict):
            continue
        kind = tool.get("type")
        line, _ = marks.find(("tools", index, "type"))
        if kind in UNSUPPORTED_TOOLS:
            notes.append(
                f"line {line}: {UNSUPPORTED_TOOLS[kind]} ({kind}) is not supported: not offered "
                "to the model"
            )
        if kind == "retrieval":
            for field, message in settings_problems(tool):
                at = marks.find(("tools", index, field))
                place = at if at[0] else (line, None)
                issues.append(Issue(path, place[0], place[1], f"tools[{index}].{field}", message))
        if kind in _SQL_TOOLS:
            note = _unreachable_tool_database(path, tool)
            if note is not None:
                where = marks.find(("tools", index, "database"))[0] or line
                notes.append(f"line {where}: {note}")
        if kind == "semantic_query":
            if layer is None:
                from ...engine.project import find_root

                layer = load_layer(find_root(path)[0])
            topic = str(tool.get("topic", ""))
            if topic not in layer.topics:
                known = ", ".join(sorted(layer.topics)) or "none"
                column = marks.find(("tools", index, "topic"))
                issues.append(
                    Issue(
                        path,
                        column[0],
                        column[1],
                        f"tools[{index}].topic",
                        f"unknown topic '{topic}' (topics: {known})",
                    )
                )
    if issues:
        raise ValidationError(issues)
    if notes:
        return "; ".join(notes)
    return None


def _unreachable_tool_database(path: Path, tool: dict[str, Any]) -> str | None:
    """An SQL tool on a database accord cannot connect to (Oxy's domo, databricks...): it
    is offered, and each of its calls fails."""
    from ...engine.databases import unreachable
    from ...engine.project import load_project

    try:
        project = load_project(path)
    except AccordError:
        return None  # the agent check reports it
    name = tool.get("database") or project.default_database
    spec = project.databases.get(str(name)) if name is not None else None
    problem = None if spec is None else unreachable(spec)
    if problem is None:
        return None
    return f"tool '{tool.get('name') or tool.get('type')}': {problem}; each call of it fails"


register_file_check("agent tools", check_agent_tools)
