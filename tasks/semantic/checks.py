"""`accord validate` for the semantic layer: view and topic files (keys naming no dimension,
columns missing from a CSV table, references to unknown fields, reference cycles, ambiguous
joins), `semantic_query` tasks, and the Oxy files accord does not support."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...engine.errors import AccordError, Issue, UnsupportedFeature, ValidationError
from .compile import REFERENCE, Compiler
from .joins import JoinError
from .model import TOPIC_SUFFIXES, VIEW_SUFFIXES, SemanticLayer, TopicFile, ViewFile, load_layer
from .query import CompileError

if TYPE_CHECKING:
    from .task import SemanticQueryTaskSpec

Loc = tuple[str | int, ...]
UNSUPPORTED_FILES = {
    ".aw.yml": "Oxy agentic workflows (.aw.yml)",
    ".agentic.yml": "Oxy agentic agents (.agentic.yml)",
}
_BARE = re.compile(r"^[A-Za-z_]\w*$")


def check_semantic_file(path: Path) -> str | None:
    """The `accord validate` check of views, topics and the Oxy files accord does not have
    (None for other files; an agent file's tools: `accord.tasks.agent.tool_checks`)."""
    name = path.name
    for suffix, feature in UNSUPPORTED_FILES.items():
        if name.endswith((suffix, suffix.replace(".yml", ".yaml"))):
            raise UnsupportedFeature(
                f"{path}:1: {feature} are not supported by accord; the file is not checked "
                "(write it as a .workflow.yml or an .agent.yml to run it with accord)"
            )
    if name.endswith(VIEW_SUFFIXES + TOPIC_SUFFIXES):
        return _check_layer_file(path)
    return None


def _check_layer_file(path: Path) -> str:
    from ...engine.project import load_project

    project = load_project(path)
    layer = load_layer(project.root)
    resolved = path.resolve()
    if resolved in {p.resolve() for p in layer.broken}:
        broken = next(v for p, v in layer.broken.items() if p.resolve() == resolved)
        raise ValidationError(broken)
    issues = [i for i in layer.duplicates if i.file and i.file.resolve() == resolved]
    view = next((v for v in layer.views.values() if v.loaded.path.resolve() == resolved), None)
    if view is not None:
        issues += view_issues(view, project)
        for topic in layer.topics.values():
            if view.spec.name in topic.spec.views:
                issues += [i for i in topic_issues(topic, layer) if i.file == view.loaded.path]
        summary = (
            f"view, {len(view.spec.dimensions)} dimensions, {len(view.spec.measures)} measures"
        )
    else:
        topic = next(t for t in layer.topics.values() if t.loaded.path.resolve() == resolved)
        issues += topic_issues(topic, layer)
        summary = f"topic, {len(topic.spec.views)} views"
    if issues:
        order = sorted(set(issues), key=lambda i: (str(i.file), i.line or 0, i.column or 0))
        raise ValidationError(order)
    return summary


def view_issues(view: ViewFile, project: Any) -> list[Issue]:
    """Problems of one view on its own: names, keys, references, columns, datasource."""
    spec = view.spec
    issues: list[Issue] = []
    dims = {d.name for d in spec.dimensions}
    fields = dims | {m.name for m in spec.measures}
    named: list[tuple[str, list[str]]] = [
        ("dimensions", [d.name for d in spec.dimensions]),
        ("measures", [m.name for m in spec.measures]),
    ]
    for kind, names in named:
        seen: set[str] = set()
        for index, name in enumerate(names):
            if name in seen or (kind == "measures" and name in dims):
                issues.append(view.issue((kind, index, "name"), f"'{name}' is defined twice"))
            seen.add(name)
    primaries = [i for i, e in enumerate(spec.entities) if e.type == "primary"]
    for index in primaries[1:]:
        issues.append(view.issue(("entities", index, "type"), "a view has one primary entity"))
    for index, entity in enumerate(spec.entities):
        field = "key" if entity.key is not None else "keys"
        for key in entity.key_names:
            if key not in dims:
                issues.append(
                    view.issue(
                        ("entities", index, field),
                        f"entity '{entity.name}': key '{key}' is not a dimension of the view "
                        f"(keys name dimensions, not columns; dimensions: {', '.join(dims)})",
                    )
                )
    issues += _reference_issues(view, fields)
    issues += _column_issues(view, project)
    databases = getattr(project, "databases", {})
    if project.config_path is not None and spec.datasource and spec.datasource not in databases:
        issues.append(
            view.issue(
                ("datasource",),
                f"unknown database '{spec.datasource}' (databases of config.yml: "
                f"{', '.join(sorted(databases)) or 'none'})",
            )
        )
    return issues


def _reference_issues(view: ViewFile, fields: set[str]) -> list[Issue]:
    """`{{name}}` references to fields the view does not have, and cycles."""
    issues: list[Issue] = []
    compiler = Compiler({view.spec.name: view.spec})
    items: list[tuple[str, int, Any]] = [
        *(("dimensions", i, d) for i, d in enumerate(view.spec.dimensions)),
        *(("measures", i, m) for i, m in enumerate(view.spec.measures)),
    ]
    for kind, index, item in items:
        texts = [item.expr or ""] + [f.expr for f in getattr(item, "filters", [])]
        for text in texts:
            for match in REFERENCE.finditer(text):
                if match.group(2) is None and match.group(1) not in fields:
                    issues.append(
                        view.issue(
                            (kind, index, "expr"),
                            f"{match.group(0)} names no dimension or measure of the view",
                        )
                    )
        try:
            if kind == "dimensions":
                compiler.dimension_sql(view.spec.name, item.name)
            else:
                compiler.measure_sql(view.spec.name, item)
        except CompileError as exc:
            if "cycle" in str(exc):
                issues.append(view.issue((kind, index, "expr"), str(exc)))
    return issues


def _column_issues(view: ViewFile, project: Any) -> list[Issue]:
    """Bare column names of dimensions and measures missing from a CSV table's header."""
    header = _csv_header(view, project)
    if header is None:
        return []
    lowered = {h.lower() for h in header}
    issues: list[Issue] = []
    exprs: list[tuple[str, int, str | None, bool]] = [
        *(("dimensions", i, d.sql, d.expr is None) for i, d in enumerate(view.spec.dimensions)),
        *(("measures", i, m.expr, False) for i, m in enumerate(view.spec.measures)),
    ]
    for kind, index, expr, by_name in exprs:
        if expr is not None and _BARE.match(expr) and expr.lower() not in lowered:
            issues.append(
                view.issue(
                    (kind, index, "name" if by_name else "expr"),
                    f"column '{expr}' is not in {view.spec.table} (columns: {', '.join(header)})",
                )
            )
    return issues


def _csv_header(view: ViewFile, project: Any) -> list[str] | None:
    table = view.spec.table
    if table is None or not table.lower().endswith(".csv") or "{" in table:
        return None
    db = project.databases.get(view.spec.datasource or project.default_database or "")
    folder = getattr(db, "dataset", None)
    if folder is None:
        return None
    path = project.root / folder / table
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            return next(csv.reader(handle), None)
    except (OSError, UnicodeDecodeError):
        return None


def topic_issues(topic: TopicFile, layer: SemanticLayer) -> list[Issue]:
    """Problems of a topic: unknown views, a base view outside it, references between its
    views, entities that make joins impossible or ambiguous, default filters."""
    spec = topic.spec
    issues: list[Issue] = []
    views = {}
    for index, name in enumerate(spec.views):
        found = layer.views.get(name)
        if found is None:
            known = ", ".join(sorted(layer.views)) or "none"
            # where to put config.yml is said once, at the first view missing
            hint = "" if issues else layer.looked_in("view")
            issues.append(
                topic.issue(
                    ("views", index),
                    f"unknown view '{name}': no .view.yml under {layer.root} names it (views: "
                    f"{known}){hint}",
                )
            )
        else:
            views[name] = found
    if spec.base_view is not None and spec.base_view not in spec.views:
        issues.append(topic.issue(("base_view",), f"'{spec.base_view}' is not in 'views'"))
    if issues:
        return issues
    try:
        compiler = Compiler({n: v.spec for n, v in views.items()})
    except CompileError as exc:
        return [topic.issue(("views",), str(exc))]
    for name, view in views.items():
        for index, measure in enumerate(view.spec.measures):
            try:
                compiler.measure_sql(name, measure)
            except CompileError as exc:
                issues.append(view.issue(("measures", index, "expr"), str(exc)))
    for source in views:
        for target in views:
            if source != target and compiler.graph.reaches_all(source, {target}):
                try:
                    compiler.graph.path(source, target)
                except JoinError as exc:
                    issues.append(topic.issue(("views",), str(exc)))
    for index, default in enumerate(spec.default_filters):
        try:
            compiler.split(default.field)
        except CompileError as exc:
            issues.append(topic.issue(("default_filters", index, "field"), str(exc)))
    return issues


def query_issues(spec: SemanticQueryTaskSpec, project: Any) -> Iterable[tuple[Loc, str]]:
    """What validate can tell of a `semantic_query` task: its topic, every field it names,
    and whether the query compiles (templated parts are left to run time)."""
    from .query import QuerySpec
    from .task import compiler_for, named_views, template_strings

    query = QuerySpec.model_validate(spec.query_data())
    if "{" in (spec.topic or "") or (
        spec.topic is None and any("{" in v for v in named_views(query))
    ):
        return
    layer = load_layer(project.root)
    try:
        if spec.topic is not None:
            layer.topic(spec.topic)
        compiler = compiler_for(layer, spec.topic, "duckdb", {}, query)
    except (CompileError, AccordError) as exc:
        loc: Loc = ("topic",) if spec.topic is not None else ()
        yield loc, exc.text if isinstance(exc, AccordError) else str(exc)
        return
    wrong = False
    refs: list[tuple[Loc, str, str | None]] = [
        *((("measures", i), r, "measure") for i, r in enumerate(spec.measures)),
        *((("dimensions", i), r, "dimension") for i, r in enumerate(spec.dimensions)),
        *(
            (("time_dimensions", i, "dimension"), t.dimension, "dimension")
            for i, t in enumerate(spec.time_dimensions)
        ),
        *((("filters", i, "field"), f.field, None) for i, f in enumerate(spec.filters)),
    ]
    for loc, ref, want in refs:
        if "{" in ref:
            return
        try:
            compiler.split(ref, want)
        except CompileError as exc:
            wrong = True
            yield loc, str(exc)
    # a filter's value may be a template (`"{{ controls.days }} days ago"`): what it means is
    # known once rendered, so the query is compiled at run time only
    filters = [f.model_dump() for f in spec.filters]
    templated = next(template_strings(filters, ()), None) is not None
    if wrong or any("{" in str(v) for v in spec.variables.values()) or templated:
        return
    compiler.variables = dict(spec.variables)
    try:
        compiled = compiler.compile(query)
    except CompileError as exc:
        yield (), str(exc)
        return
    if compiled.datasource is not None and compiled.datasource not in project.databases:
        yield (
            ("topic",),
            (
                f"the topic's views use database '{compiled.datasource}', which config.yml does "
                f"not declare (databases: {', '.join(sorted(project.databases)) or 'none'})"
            ),
        )
