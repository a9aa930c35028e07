"""Plain templates rendered by walking their syntax tree, with no Python code generated.

Most templates of a workflow are text with plain expressions: `{{ name }}`, `{{ a.b }}`,
`{{ t.col[0] }}`, `{{ x | length }}`, `{{ y | round(2) }}`. Jinja turns every template into
Python source and compiles it (about 0.5 ms each, most of what a formatter task costs); a run
of thousands of distinct templates spent nearly all its time there. A plain template is
instead rendered from the syntax tree that validation already parsed, through the same
sandboxed environment: names resolve as Jinja resolves them (the values, then the
environment's globals), attributes and items go through the sandbox's `getattr` and
`getitem`, filters through `call_filter`, and every value is written with `str()`, so an
undefined name fails exactly as in Jinja. Anything else (statements, tests, operators,
calls, filters that need the template context) is left to Jinja.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jinja2 import nodes
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import _PassArg

Value = Callable[[Mapping[str, Any]], Any]


class PlainTemplate:
    """A template of text and plain expressions; `render` is Jinja's, without codegen."""

    __slots__ = ("_parts",)

    def __init__(self, parts: list[str | Value]) -> None:
        self._parts = parts

    def render(self, context: Mapping[str, Any]) -> str:
        return "".join(
            part if isinstance(part, str) else str(part(context)) for part in self._parts
        )

    def filled(self, context: Mapping[str, Any]) -> tuple[str, list[str]]:
        """The rendered text and, apart, each value filled in (paths check them)."""
        values = [str(part(context)) for part in self._parts if not isinstance(part, str)]
        found = iter(values)
        text = "".join(part if isinstance(part, str) else next(found) for part in self._parts)
        return text, values


def plain_template(env: SandboxedEnvironment, ast: nodes.Template) -> PlainTemplate | None:
    """The template as a `PlainTemplate`, or None when it needs Jinja's compiler."""
    parts: list[str | Value] = []
    for statement in ast.body:
        if not isinstance(statement, nodes.Output):
            return None
        for child in statement.nodes:
            if isinstance(child, nodes.TemplateData):
                parts.append(child.data)
                continue
            if isinstance(child, nodes.Const) and isinstance(child.value, str):
                # text of the template itself: Jinja's optimizer (referenced_names folds the
                # cached tree in place) turns TemplateData into Const; a literal is no value
                # filled in from data, which paths check
                parts.append(child.value)
                continue
            value = _expression(env, child)
            if value is None:
                return None
            parts.append(value)
    return PlainTemplate(parts)


def _expression(env: SandboxedEnvironment, node: nodes.Node) -> Value | None:
    if isinstance(node, nodes.Name) and node.ctx == "load":
        return _name(env, node.name)
    if isinstance(node, nodes.Const):
        constant = node.value
        return lambda context: constant
    if isinstance(node, nodes.Getattr):
        return _getattr(env, node)
    if isinstance(node, nodes.Getitem):
        return _getitem(env, node)
    if isinstance(node, nodes.Filter):
        return _filter(env, node)
    return None


def _name(env: SandboxedEnvironment, name: str) -> Value:
    globals_ = env.globals

    def load(context: Mapping[str, Any]) -> Any:
        if name in context:
            return context[name]
        if name in globals_:
            return globals_[name]
        return env.undefined(name=name)

    return load


def _getattr(env: SandboxedEnvironment, node: nodes.Getattr) -> Value | None:
    owner = _expression(env, node.node)
    if owner is None or node.ctx != "load":
        return None
    attribute = node.attr
    return lambda context: env.getattr(owner(context), attribute)


def _getitem(env: SandboxedEnvironment, node: nodes.Getitem) -> Value | None:
    owner = _expression(env, node.node)
    key = _expression(env, node.arg) if not isinstance(node.arg, nodes.Slice) else None
    if owner is None or key is None or node.ctx != "load":
        return None
    return lambda context: env.getitem(owner(context), key(context))


def _filter(env: SandboxedEnvironment, node: nodes.Filter) -> Value | None:
    if node.node is None or node.dyn_args is not None or node.dyn_kwargs is not None:
        return None
    function = env.filters.get(node.name)
    if function is None or _PassArg.from_obj(function) not in (None, _PassArg.environment):
        return None  # unknown (Jinja's error message), or it needs the template's context
    subject = _expression(env, node.node)
    args = [_expression(env, arg) for arg in node.args]
    kwargs = {str(pair.key): _expression(env, pair.value) for pair in node.kwargs}
    if subject is None or None in args or None in kwargs.values():
        return None
    name = node.name
    arg_values: list[Value] = [a for a in args if a is not None]
    kwarg_values: dict[str, Value] = {k: v for k, v in kwargs.items() if v is not None}

    def apply(context: Mapping[str, Any]) -> Any:
        return env.call_filter(
            name,
            subject(context),
            [a(context) for a in arg_values],
            {k: v(context) for k, v in kwarg_values.items()},
        )

    return apply


# Nodes that bind no name and need no frame of their own: in a template made only of these,
# every name it loads comes from the caller's values or the environment's globals.
_NAMELESS = (
    nodes.Template,
    nodes.Output,
    nodes.TemplateData,
    nodes.Name,
    nodes.Const,
    nodes.Getattr,
    nodes.Getitem,
    nodes.Slice,
    nodes.Filter,
    nodes.Test,
    nodes.BinExpr,
    nodes.UnaryExpr,
    nodes.Compare,
    nodes.Operand,
    nodes.Concat,
    nodes.CondExpr,
    nodes.List,
    nodes.Tuple,
    nodes.Dict,
    nodes.Pair,
    nodes.Keyword,
    nodes.Call,
    nodes.If,
    nodes.ExprStmt,
)
# names Jinja gives a meaning of its own in some frames
_SPECIAL = frozenset({"self", "super", "loop", "caller", "varargs", "kwargs"})


def free_names(env: SandboxedEnvironment, ast: nodes.Template) -> frozenset[str] | None:
    """The names a template takes from its caller, read from the tree when it binds none of
    its own (no `set`, `for`, `macro`, `with`, `import`); None otherwise (Jinja's
    `meta.find_undeclared_variables` then runs its code generator over the tree to find
    them). Like Jinja's, the environment's globals are left out."""
    names: set[str] = set()
    for node in ast.find_all(nodes.Node):
        if not isinstance(node, _NAMELESS):
            return None
        if isinstance(node, nodes.Name):
            if node.ctx != "load" or node.name in _SPECIAL:
                return None
            names.add(node.name)
        elif isinstance(node, nodes.Tuple) and node.ctx != "load":
            return None
    return frozenset(names.difference(env.globals))
