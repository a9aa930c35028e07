"""Oxy's semantic layer files: `.view.yml` (a table as entities, dimensions and measures) and
`.topic.yml` (the views a query may join), as pydantic models, and the project's set of them.

Keys Oxy uses that accord does not need (descriptions, synonyms, samples) are accepted and
ignored, as everywhere in Oxy's files; a misspelt key is an error.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import Field, model_validator

from ...engine.errors import AccordError, Issue, ValidationError
from ...engine.loader import Loaded, load_spec
from ...engine.spec import NAME_PATTERN, Spec, oxy_ignored

VIEW_SUFFIXES = (".view.yml", ".view.yaml")
TOPIC_SUFFIXES = (".topic.yml", ".topic.yaml")
# folders never searched for views and topics: outputs, environments, version control
_SKIPPED = {"node_modules", "output", "__pycache__", "site-packages"}

Name = Annotated[str, Field(pattern=NAME_PATTERN, description="Letters, digits and '_'.")]


class EntitySpec(Spec):
    """A view's primary entity (what one row is) or a foreign one (a key into another view's
    primary entity of the same name): the join edges of the semantic layer."""

    name: Name
    type: Literal["primary", "foreign"]
    key: str | None = Field(None, description="The dimension holding the key.")
    keys: list[str] | None = Field(None, min_length=1, description="A composite key.")
    description: Any = oxy_ignored()
    parent: Any = oxy_ignored()

    @model_validator(mode="after")
    def _one_key(self) -> EntitySpec:
        if (self.key is None) == (self.keys is None):
            raise ValueError("give exactly one of 'key' (a dimension) or 'keys' (a list)")
        return self

    @property
    def key_names(self) -> list[str]:
        return [self.key] if self.key is not None else list(self.keys or [])


class DimensionSpec(Spec):
    """An attribute to group and filter by: `expr` is SQL over the view's table (default:
    the column of the dimension's name); `{{other}}` names another dimension of the view."""

    name: Name
    type: Literal["string", "number", "date", "datetime", "timestamp", "boolean", "time"] = "string"
    expr: str | None = Field(None, description="SQL over the table; default: the name.")
    description: Any = oxy_ignored()
    label: Any = oxy_ignored()
    synonyms: Any = oxy_ignored()
    samples: Any = oxy_ignored()
    primary_key: Any = oxy_ignored()
    format: Any = oxy_ignored()

    @property
    def sql(self) -> str:
        return self.expr if self.expr is not None else self.name


class MeasureFilterSpec(Spec):
    """A condition on the rows a measure aggregates (SQL over the view's table)."""

    expr: str


class MeasureSpec(Spec):
    """An aggregate: `count` (rows, or non-null `expr`), `sum`, `average`, `min`, `max`,
    `count_distinct`, `median` over `expr`; `custom` / `number`: `expr` as written (it may
    name other measures as `{{view.measure}}`)."""

    name: Name
    type: Literal[
        "count",
        "sum",
        "average",
        "min",
        "max",
        "count_distinct",
        "median",
        "custom",
        "number",
    ]
    expr: str | None = None
    filters: list[MeasureFilterSpec] = Field(default_factory=list)
    description: Any = oxy_ignored()
    label: Any = oxy_ignored()
    synonyms: Any = oxy_ignored()
    samples: Any = oxy_ignored()
    format: Any = oxy_ignored()

    @model_validator(mode="after")
    def _needs_expr(self) -> MeasureSpec:
        if self.expr is None and self.type != "count":
            raise ValueError(f"a '{self.type}' measure needs 'expr' (the SQL it aggregates)")
        if self.filters and self.type in ("custom", "number"):
            raise ValueError(
                f"'filters' apply to aggregates, not to a '{self.type}' measure: write the "
                "condition into its expr"
            )
        return self


class ViewSpec(Spec):
    """A `.view.yml`: one table (or SQL query) of a database, as business fields."""

    name: Name
    datasource: str | None = Field(None, description="Database of config.yml (default one).")
    table: str | None = Field(None, description="Table (or a CSV/Parquet file of a dataset).")
    sql: str | None = Field(None, description="A query whose result is the view's table.")
    entities: list[EntitySpec] = Field(default_factory=list)
    dimensions: list[DimensionSpec] = Field(default_factory=list)
    measures: list[MeasureSpec] = Field(default_factory=list)
    description: Any = oxy_ignored()
    label: Any = oxy_ignored()
    segments: Any = oxy_ignored()
    meta: Any = oxy_ignored()

    @model_validator(mode="after")
    def _one_source(self) -> ViewSpec:
        if (self.table is None) == (self.sql is None):
            raise ValueError("give exactly one of 'table' or 'sql'")
        return self

    def dimension(self, name: str) -> DimensionSpec | None:
        return next((d for d in self.dimensions if d.name == name), None)

    def measure(self, name: str) -> MeasureSpec | None:
        return next((m for m in self.measures if m.name == name), None)

    @property
    def primary(self) -> EntitySpec | None:
        return next((e for e in self.entities if e.type == "primary"), None)


FilterOp = Literal[
    "eq", "neq", "gt", "gte", "lt", "lte", "contains", "in", "not_in", "in_date_range",
    "not_in_date_range",
]  # fmt: skip
FILTER_OPS: tuple[str, ...] = get_args(FilterOp)


class FilterSpec(Spec):
    """A query filter: `{field, op, value | values | from, to}`, or Oxy's forms
    `{field, filter_type: {op: {value ...}}}` and (a topic's default_filters, as Oxy parses
    them) `{field, op: {value ...}}` with the operator as its own key."""

    field: str = Field(description="'view.field' (a dimension, or a measure).")
    op: FilterOp | None = None
    value: Any = None
    values: list[Any] | None = None
    from_: Any = Field(None, alias="from")
    to: Any = None
    filter_type: dict[str, Any] | None = Field(None, description="Oxy's {op: {value}} form.")

    @model_validator(mode="before")
    @classmethod
    def _operator_key(cls, data: Any) -> Any:
        """Oxy's flattened form (`neq: {value: x}` beside `field`) as `filter_type`."""
        if not isinstance(data, dict) or "op" in data or "filter_type" in data:
            return data
        keys = [k for k in data if k in FILTER_OPS]
        if len(keys) != 1:
            return data
        rest = {k: v for k, v in data.items() if k != keys[0]}
        return {**rest, "filter_type": {keys[0]: data[keys[0]]}}

    @model_validator(mode="after")
    def _has_op(self) -> FilterSpec:
        if (self.op is None) == (self.filter_type is None):
            raise ValueError("give 'op' (eq, neq, gt, gte, lt, lte, contains, in, ...)")
        return self


class TopicSpec(Spec):
    """A `.topic.yml`: the views one subject's queries may use and join."""

    name: Name
    views: list[str] = Field(min_length=1)
    base_view: str | None = Field(None, description="Preferred root of a join.")
    default_filters: list[FilterSpec] = Field(default_factory=list)
    description: Any = oxy_ignored()
    label: Any = oxy_ignored()
    retrieval: Any = oxy_ignored()
    meta: Any = oxy_ignored()


@dataclass(frozen=True)
class ViewFile:
    """A loaded view with the marks of its file (for file:line messages)."""

    spec: ViewSpec
    loaded: Loaded

    def issue(self, loc: tuple[str | int, ...], message: str) -> Issue:
        return self.loaded.issue(loc, message)


@dataclass(frozen=True)
class TopicFile:
    spec: TopicSpec
    loaded: Loaded

    def issue(self, loc: tuple[str | int, ...], message: str) -> Issue:
        return self.loaded.issue(loc, message)


@dataclass
class SemanticLayer:
    """Every view and topic under a project root, by name; files that fail to load keep
    their issues (a broken view breaks the topics using it, not the others)."""

    root: Path
    views: dict[str, ViewFile] = field(default_factory=dict)
    topics: dict[str, TopicFile] = field(default_factory=dict)
    broken: dict[Path, list[Issue]] = field(default_factory=dict)
    duplicates: list[Issue] = field(default_factory=list)

    def topic(self, name: str) -> TopicFile:
        """The topic `name`, or an error saying why it is missing: the topic files that do
        not load (their own first problem, where it is), else where accord looked."""
        found = self.topics.get(name)
        if found is not None:
            return found
        broken = [(p, v) for p, v in self.broken.items() if p.name.endswith(TOPIC_SUFFIXES)]
        named = [(p, v) for p, v in broken if p.name.split(".")[0] == name]
        if named or broken:
            shown = "; ".join(v[0].render() for _p, v in (named or broken) if v)
            raise AccordError(
                f"topic '{name}' does not load: {shown}"
                if named
                else f"unknown topic '{name}'; these topic files do not load: {shown}"
            )
        known = ", ".join(sorted(self.topics)) or "none"
        raise AccordError(
            f"unknown topic '{name}': no .topic.yml under {self.root} names it (topics: "
            f"{known}){self.looked_in('topic')}"
        )

    def looked_in(self, kind: str) -> str:
        """Where the layer's files are looked for, when no config.yml says (the file's own
        folder is then the project root) and a parent folder holds some."""
        if (self.root / "config.yml").is_file():
            return ""
        parent = self.root.parent
        near = sorted(
            str(p.relative_to(parent))
            for pattern in (f"*.{kind}.yml", f"*/*.{kind}.yml")
            for p in parent.glob(pattern)
        )
        if not near:
            return ""
        return (
            f"; without a config.yml the project root is {self.root}, and {parent} holds "
            f"{', '.join(near[:3])}: put a config.yml in {parent}"
        )


def semantic_files(root: Path) -> list[Path]:
    """The .view.yml and .topic.yml files under `root` (hidden folders and outputs skipped)."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED)
        for name in sorted(files):
            if name.endswith(VIEW_SUFFIXES + TOPIC_SUFFIXES):
                found.append(Path(folder) / name)
    return found


_CACHE: dict[Path, tuple[tuple[tuple[str, float], ...], SemanticLayer]] = {}


def load_layer(root: Path) -> SemanticLayer:
    """The project's semantic layer, re-read when a file of it changes."""
    files = semantic_files(root)
    stamp = tuple((str(p), p.stat().st_mtime) for p in files)
    cached = _CACHE.get(root)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    layer = SemanticLayer(root)
    for path in files:
        _add_file(layer, path)
    _CACHE[root] = (stamp, layer)
    return layer


def _add_file(layer: SemanticLayer, path: Path) -> None:
    is_view = path.name.endswith(VIEW_SUFFIXES)
    try:
        if is_view:
            loaded = load_spec(path, ViewSpec, kind="view")
        else:
            loaded = load_spec(path, TopicSpec, kind="topic")
    except ValidationError as exc:
        layer.broken[path] = list(exc.issues)
        return
    table: dict[str, Any] = layer.views if is_view else layer.topics
    name = loaded.spec.name
    if name in table:
        first = table[name].loaded.path
        kind = "view" if is_view else "topic"
        layer.duplicates.append(
            loaded.issue(("name",), f"{kind} '{name}' is also defined in {first}: rename one")
        )
        return
    table[name] = ViewFile(loaded.spec, loaded) if is_view else TopicFile(loaded.spec, loaded)
