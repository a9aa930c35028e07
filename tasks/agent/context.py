"""What an agent's system instructions can see: context files, databases, Oxy's names.

- `context.<name>`: a `file` entry's files (iterable; renders as their joined text), or a
  `semantic_model` entry's parsed model (`.table`, `.entities`, `.dimensions`, `.measures`,
  `.database.type`).
- `databases.<db>`: `dialect`, `schema` (CREATE TABLE text), `tables`, and Oxy's
  `datasets.<any>.{dataset, ddl, semantic_info}`.
- Names of Oxy features accord does not have (`tools.retrieval`, `dimensions.*`, `models.*`,
  `semantic_info.*`) render empty, with a warning that names them, so Oxy agent files run
  unchanged; every other undefined name is an error, as in every template.
"""

from __future__ import annotations

import glob
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ...engine import log
from ...engine.databases import DATABASES, QueryResult
from ...engine.errors import AccordError, TaskError
from ...engine.paths import inside, is_private
from ...engine.render import BUILTIN_NAMES, referenced_names
from ...engine.spec import AgentSpec

if TYPE_CHECKING:
    from ...engine.context import TaskContext

OXY_ONLY_NAMES = frozenset({"tools", "dimensions", "models"})


class ContextFiles(list[str]):
    """Contents of a context entry's files: iterable, and renders as the joined text."""

    def __str__(self) -> str:
        return "\n\n".join(self)


class YamlValue(list[Any]):
    """A list from a semantic model; renders as YAML, as Oxy shows it to the model."""

    def __str__(self) -> str:
        return yaml.safe_dump(list(self), sort_keys=False).strip()


class OxyUnavailable:
    """An Oxy value accord does not provide: any attribute of it is itself, it renders empty."""

    def __init__(self, path: str) -> None:
        self._path = path

    def __getattr__(self, name: str) -> OxyUnavailable:
        if name.startswith("_"):
            raise AttributeError(name)
        return OxyUnavailable(f"{self._path}.{name}")

    def __getitem__(self, key: object) -> OxyUnavailable:
        return OxyUnavailable(f"{self._path}[{key!r}]")

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        return ""


class DatasetView(Mapping[str, Any]):
    """Oxy's `databases.<db>.datasets.<name>`: any name gives the database's DDL."""

    def __init__(self, ddl: str, database: str) -> None:
        self._ddl = ddl
        self._database = database

    def __getitem__(self, key: str) -> Any:
        semantic = OxyUnavailable(f"databases.{self._database}.datasets.{key}.semantic_info")
        return {"dataset": key, "ddl": self._ddl, "semantic_info": semantic}

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def _ddl(result: QueryResult) -> str:
    tables: dict[str, list[str]] = {}
    for table, column, kind in result.rows:
        tables.setdefault(str(table), []).append(f"  {column} {kind}")
    return "\n".join(
        f"CREATE TABLE {name} (\n" + ",\n".join(cols) + "\n);" for name, cols in tables.items()
    )


async def database_views(ctx: TaskContext) -> dict[str, Any]:
    """`databases.<name>.{dialect, schema, tables, datasets}` for system instructions."""
    views: dict[str, Any] = {}
    for name, spec in ctx.run.project.databases.items():
        if DATABASES.get(spec.type).open is None:
            note = f"(schema not available: accord cannot connect to {spec.type} databases)"
            views[name] = {
                "dialect": spec.type,
                "schema": note,
                "tables": [],
                "datasets": DatasetView(note, name),
            }
            continue
        db = ctx.run.databases.get(name)
        columns = await db.columns()
        ddl = _ddl(columns)
        views[name] = {
            "dialect": db.dialect,
            "schema": ddl,
            "tables": sorted({str(r[0]) for r in columns.rows}),
            "datasets": DatasetView(ddl, name),
        }
    return views


def _semantic_model(path: Path, ctx: TaskContext) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise TaskError(ctx.key, f"semantic model {path.name} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise TaskError(ctx.key, f"semantic model {path.name} must be a mapping")
    database = str(data.get("database") or "")
    spec = ctx.run.project.databases.get(database)
    out: dict[str, Any] = {k: YamlValue(v) if isinstance(v, list) else v for k, v in data.items()}
    out["database"] = {"name": database, "type": getattr(spec, "type", "")}
    return out


def context_paths(root: Path, pattern: str) -> list[Path]:
    """The files a context glob (relative to the project root) matches, sorted; a glob or a
    match that leads outside the root (absolute, `..`, a symbolic link) is a `PathError`."""
    inside(root, pattern, "agent context")
    found = [
        Path(match)
        for match in sorted(glob.glob(str(root / pattern), recursive=True))
        if Path(match).is_file() and not is_private(root, Path(match))  # never .env, .accord/
    ]
    for path in found:
        inside(root, path.relative_to(root), "agent context file")
    return found


def context_values(agent: AgentSpec, ctx: TaskContext) -> dict[str, Any]:
    """`context.<name>` for each context entry of the agent."""
    out: dict[str, Any] = {}
    for entry in agent.context:
        paths: list[Path] = []
        for pattern in entry.globs:
            found = context_paths(ctx.root, pattern)
            if not found:
                raise AccordError(
                    f"agent context '{entry.name}': no file matches '{pattern}' (relative to "
                    f"the project root {ctx.root})"
                )
            paths += found
        if entry.type == "semantic_model":
            models = [_semantic_model(path, ctx) for path in paths]
            out[entry.name] = models[0] if len(models) == 1 else models
        else:
            out[entry.name] = ContextFiles(
                p.read_text(encoding="utf-8", errors="replace") for p in paths
            )
    return out


async def system_message(agent: AgentSpec, ctx: TaskContext, variables: dict[str, Any]) -> str:
    """The rendered system instructions ("" when the agent has none)."""
    source = agent.system_instructions
    if not source.strip():
        return ""
    names = referenced_names(source) - BUILTIN_NAMES
    extra: dict[str, Any] = dict(variables)
    if "context" in names:
        extra["context"] = context_values(agent, ctx)
    if "databases" in names:
        extra["databases"] = await database_views(ctx)
    for name in sorted((names & OXY_ONLY_NAMES) - set(extra)):
        log.get().warning(
            "oxy_name_unavailable",
            task=ctx.key,
            name=name,
            note="Oxy feature not provided by accord; rendered empty",
        )
        extra[name] = OxyUnavailable(name)
    return ctx.render(source, extra)
