"""`semantic_query`: measures and dimensions of a topic, compiled to SQL and run on the
views' database; its output is a table, exported like `execute_sql`'s."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pydantic
from pydantic import Field

from ...engine.databases import QueryError, QueryResult
from ...engine.errors import AccordError, TaskError
from ...engine.kinds import register_task
from ...engine.plan import PlannedTask
from ...engine.spec import TaskSpec, variable_templates
from .compile import Compiled, Compiler
from .model import SemanticLayer, load_layer
from .query import CompileError, QuerySpec

if TYPE_CHECKING:
    from ...engine.context import TaskContext

Loc = tuple[str | int, ...]
_VALUE_KEYS = {"value", "values", "from", "to", "date_range"}  # evaluated, keeping types


class SemanticQueryTaskSpec(TaskSpec, QuerySpec):
    """Oxy's `semantic_query` task: a topic's measures by its dimensions."""

    type: Literal["semantic_query"]
    topic: str | None = Field(
        None,
        description="Name of a .topic.yml of the project; default (as in Oxy): the views the "
        "query names.",
    )
    variables: dict[str, Any] = Field(
        default_factory=dict, description="Values of the views' {{ variables.NAME }}."
    )

    def query_data(self) -> dict[str, Any]:
        fields = set(QuerySpec.model_fields)
        return self.model_dump(include=fields, by_alias=True, exclude_none=True)

    def templates(self) -> Iterable[tuple[Loc, str]]:
        if self.topic is not None:
            yield ("topic",), self.topic
        yield from template_strings(self.query_data(), ())
        yield from variable_templates(self.variables)
        yield from super().templates()

    def project_issues(self, project: Any) -> Iterable[tuple[Loc, str]]:
        from .checks import query_issues

        return query_issues(self, project)

    def input_files(self, root: Path) -> Iterable[Path]:
        """The topic's file and its views' files (a rendered topic name: every layer file)."""
        from .model import load_layer

        layer = load_layer(root)
        topic = None if self.topic is None else layer.topics.get(self.topic)
        if topic is None:
            files = [v.loaded.path for v in layer.views.values()]
            return sorted([*files, *(t.loaded.path for t in layer.topics.values())])
        views = [layer.views[v].loaded.path for v in topic.spec.views if v in layer.views]
        return [topic.loaded.path, *sorted(views)]


def template_strings(data: Any, loc: Loc) -> Iterator[tuple[Loc, str]]:
    """The texts inside `data` rendered as templates at run time (`_rendered`), by place."""
    if isinstance(data, str):
        if "{" in data:
            yield loc, data
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from template_strings(value, (*loc, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from template_strings(value, (*loc, index))


def _rendered(data: Any, render: Callable[[str, bool], Any], value: bool = False) -> Any:
    if isinstance(data, str):
        return render(data, value) if "{" in data else data
    if isinstance(data, dict):
        return {k: _rendered(v, render, value or k in _VALUE_KEYS) for k, v in data.items()}
    if isinstance(data, list):
        return [_rendered(v, render, value) for v in data]
    return data


def named_views(query: QuerySpec) -> list[str]:
    """The views a query names (its topic when it has none, as Oxy infers one)."""
    refs = [
        *query.measures,
        *query.dimensions,
        *(t.dimension for t in query.time_dimensions),
        *(f.field for f in query.filters),
    ]
    return list(dict.fromkeys(ref.partition(".")[0] for ref in refs))


def compiler_for(
    layer: SemanticLayer,
    topic_name: str | None,
    dialect: str,
    variables: dict[str, Any],
    query: QuerySpec | None = None,
) -> Compiler:
    """A compiler over the views of the topic `topic_name`, or without one over the views
    `query` names."""
    if topic_name is None:
        names = named_views(query) if query is not None else list(layer.views)
        views = {}
        for name in names:
            found = layer.views.get(name)
            if found is None:
                raise CompileError(
                    f"view '{name}' is not defined by any .view.yml under {layer.root} "
                    f"(views: {', '.join(sorted(layer.views)) or 'none'})"
                )
            views[name] = found.spec
        return Compiler(views, dialect=dialect, variables=variables)
    topic = layer.topic(topic_name)
    views = {}
    for index, name in enumerate(topic.spec.views):
        found = layer.views.get(name)
        if found is None:
            line, _column = topic.loaded.marks.find(("views", index))
            where = f"{topic.loaded.path}:{line}"
            raise CompileError(
                f"topic '{topic_name}' ({where}) names view '{name}', which no .view.yml "
                f"under {layer.root} defines"
            )
        views[name] = found.spec
    return Compiler(
        views,
        dialect=dialect,
        base_view=topic.spec.base_view,
        variables=variables,
        default_filters=topic.spec.default_filters,
    )


def compile_query(
    root: Path,
    topic: str | None,
    query: QuerySpec,
    variables: dict[str, Any],
    dialect_of: Callable[[str | None], str],
) -> Compiled:
    """The SQL of `query` in the dialect of the database its views live on."""
    layer = load_layer(root)
    compiled = compiler_for(layer, topic, "duckdb", variables, query).compile(query)
    dialect = dialect_of(compiled.datasource)
    if dialect != "duckdb":
        compiled = compiler_for(layer, topic, dialect, variables, query).compile(query)
    return compiled


@register_task("semantic_query", SemanticQueryTaskSpec)
async def run_semantic_query(task: PlannedTask, ctx: TaskContext) -> QueryResult:
    spec = task.spec
    assert isinstance(spec, SemanticQueryTaskSpec)

    def render(text: str, value: bool) -> Any:
        return ctx.evaluate(text) if value else ctx.render(text)

    try:
        query = QuerySpec.model_validate(_rendered(spec.query_data(), render))
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise TaskError(ctx.key, f"{where}: {first['msg']}") from None
    topic = None if spec.topic is None else ctx.render(spec.topic)
    variables = ctx.evaluate_variables(spec.variables)
    try:
        compiled = compile_query(
            ctx.root, topic, query, variables, lambda name: ctx.database(name).dialect
        )
    except CompileError as exc:
        names = ", ".join(named_views(query))
        where = f"topic '{topic}'" if topic is not None else f"views {names}"
        raise TaskError(ctx.key, f"{where}: {exc}") from None
    except AccordError as exc:
        raise TaskError(ctx.key, exc.text) from None
    database = ctx.database(compiled.datasource)
    try:
        result = await database.query(compiled.sql)
    except QueryError as exc:
        raise TaskError(ctx.key, f"database '{database.name}': {exc.message}") from None
    return result
