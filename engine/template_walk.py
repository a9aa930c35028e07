"""Plain templates rendered by walking their syntax tree, with no Python code generated.

Most templates of a workflow are text with expressions: `{{ name }}`, `{{ a.b }}`,
`{{ t.col[0] }}`, `{{ x | length }}`, `{{ (a | length) + (b | length) }}`, `{{ a ~ ' / ' ~ b }}`.
Jinja turns every template into Python source and compiles it (about 0.5 ms each, most of
what a formatter task costs); a run of thousands of distinct templates spent nearly all its
time there. A plain template is instead rendered from its syntax tree through the same
sandboxed environment, as the code Jinja would generate does: names resolve as Jinja resolves
them (the values, then the environment's globals), attributes and items go through the
sandbox's `getattr` and `getitem`, filters through `call_filter`, the operators the sandbox
intercepts through `call_binop` (accord's size and power limits), `~` through `str_join` and
the size check accord's code generator adds, and every value is written with `str()`, so an
undefined name fails exactly as in Jinja. Anything else (statements, tests, comparisons,
conditionals, calls, literals of lists and dicts, filters that need the template context) is
left to Jinja.

The walk first writes an outline of the template as plain data, then builds its render
functions from it; the template cache keeps the outline, so a second run builds the template
without parsing it.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Callable, Mapping
from typing import Any

from jinja2 import nodes
from jinja2.optimizer import optimize
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import _PassArg

Value = Callable[[Mapping[str, Any]], Any]


# A plain template's outline: its parts as plain data (strings, numbers, tuples), so the
# template cache can keep it and a second run builds the template without parsing it. A part
# is text, or an expression: ("name", NAME), ("const", VALUE), ("attr", EXPR, NAME),
# ("item", EXPR, EXPR) or ("filter", NAME, EXPR, (EXPR, ...), ((KEY, EXPR), ...)).
Outline = tuple[Any, ...]
_CONSTANTS = (str, int, float, bool, type(None))
# Jinja's arithmetic operators, and its unary ones, as Python's (an intercepted one goes
# through the sandbox's `call_binop` instead)
_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
}
_UNARY: dict[str, Callable[[Any], Any]] = {"-": operator.neg, "+": operator.pos}


class PlainTemplate:
    """A template of text and plain expressions; `render` is Jinja's, without codegen."""

    __slots__ = ("_parts", "outline")

    def __init__(self, parts: list[str | Value], outline: Outline) -> None:
        self._parts = parts
        self.outline = outline

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
    outline: list[Any] = []
    for statement in ast.body:
        if not isinstance(statement, nodes.Output):
            return None
        for child in statement.nodes:
            if isinstance(child, nodes.TemplateData):
                outline.append(child.data)
                continue
            if isinstance(child, nodes.Const):
                # text the template itself holds, folded by Jinja's optimizer (TemplateData
                # becomes a Const): written as Jinja writes a constant, and never a value
                # filled in from data, which a path template checks
                outline.append(str(child.value))
                continue
            part = _outline(env, child)
            if part is None:
                return None
            outline.append(part)
    return from_outline(env, tuple(outline))


def from_outline(env: SandboxedEnvironment, outline: Outline) -> PlainTemplate | None:
    """The template an outline describes (None for one this version cannot build: an entry
    the cache kept is then a miss)."""
    parts: list[str | Value] = []
    for part in outline:
        if isinstance(part, str):
            parts.append(part)
            continue
        value = _build(env, part)
        if value is None:
            return None
        parts.append(value)
    return PlainTemplate(parts, outline)


def _outline(env: SandboxedEnvironment, node: nodes.Node) -> Outline | None:
    if isinstance(node, nodes.Name) and node.ctx == "load":
        return ("name", node.name)
    if isinstance(node, nodes.Const) and isinstance(node.value, _CONSTANTS):
        return ("const", node.value)
    if isinstance(node, nodes.Getattr) and node.ctx == "load":
        owner = _outline(env, node.node)
        return None if owner is None else ("attr", owner, node.attr)
    if isinstance(node, nodes.Getitem) and node.ctx == "load":
        if isinstance(node.arg, nodes.Slice):
            return None
        owner, key = _outline(env, node.node), _outline(env, node.arg)
        return None if owner is None or key is None else ("item", owner, key)
    if isinstance(node, nodes.Filter):
        return _filter_outline(env, node)
    if isinstance(node, nodes.BinExpr) and node.operator in _BINARY:
        left, right = _outline(env, node.left), _outline(env, node.right)
        return None if left is None or right is None else ("binop", node.operator, left, right)
    if isinstance(node, nodes.Neg | nodes.Pos):
        operand = _outline(env, node.node)
        return None if operand is None else (node.operator, operand)
    if isinstance(node, nodes.Concat):
        joined = tuple(_outline(env, item) for item in node.nodes)
        return None if None in joined else ("concat", joined)
    return None


def _filter_outline(env: SandboxedEnvironment, node: nodes.Filter) -> Outline | None:
    if node.node is None or node.dyn_args is not None or node.dyn_kwargs is not None:
        return None
    function = env.filters.get(node.name)
    if function is None or _PassArg.from_obj(function) is _PassArg.context:
        return None  # unknown (Jinja's error message), or it needs the template's context
    subject = _outline(env, node.node)
    args = [_outline(env, arg) for arg in node.args]
    kwargs = [(str(pair.key), _outline(env, pair.value)) for pair in node.kwargs]
    if subject is None or None in args or any(v is None for _k, v in kwargs):
        return None
    return ("filter", node.name, subject, tuple(args), tuple(kwargs))


def _build(env: SandboxedEnvironment, part: Any) -> Value | None:
    """The function that evaluates an outlined expression against a context, through the
    sandboxed environment as Jinja's compiled code does."""
    if not isinstance(part, tuple) or not part:
        return None
    kind = part[0]
    if kind == "name" and len(part) == 2 and isinstance(part[1], str):
        return _name(env, part[1])
    if kind == "const" and len(part) == 2 and isinstance(part[1], _CONSTANTS):
        constant = part[1]
        return lambda context: constant
    if kind == "attr" and len(part) == 3 and isinstance(part[2], str):
        return _build_attr(env, _build(env, part[1]), part[2])
    if kind == "item" and len(part) == 3:
        return _build_item(env, _build(env, part[1]), _build(env, part[2]))
    if kind == "filter" and len(part) == 5:
        return _build_filter(env, part)
    if kind == "binop" and len(part) == 4 and part[1] in _BINARY:
        return _build_binop(env, part[1], _build(env, part[2]), _build(env, part[3]))
    if kind in _UNARY and len(part) == 2:
        return _build_unary(_UNARY[kind], _build(env, part[1]))
    if kind == "concat" and len(part) == 2 and isinstance(part[1], tuple):
        return _build_concat(env, [_build(env, item) for item in part[1]])
    return None


def _build_binop(
    env: SandboxedEnvironment, op: str, left: Value | None, right: Value | None
) -> Value | None:
    """As Jinja's code generator writes `a + b` in a sandbox: an intercepted operator goes
    through the environment's `call_binop` (accord's size and power limits), any other is
    Python's own."""
    if left is None or right is None:
        return None
    if op in env.intercepted_binops:
        return lambda context: env.call_binop(None, op, left(context), right(context))  # type: ignore[arg-type]
    apply = _BINARY[op]
    return lambda context: apply(left(context), right(context))


def _build_unary(apply: Callable[[Any], Any], operand: Value | None) -> Value | None:
    if operand is None:
        return None
    return lambda context: apply(operand(context))


def _build_concat(env: SandboxedEnvironment, items: list[Value | None]) -> Value | None:
    """`a ~ b`: Jinja's `str_join` of the values, its size checked as accord's code
    generator checks it (`checked_text`)."""
    if any(item is None for item in items):
        return None
    values: list[Value] = [item for item in items if item is not None]
    checked = getattr(env, "checked_text", lambda text: text)
    return lambda context: checked("".join([str(v(context)) for v in values]))


def _build_attr(env: SandboxedEnvironment, owner: Value | None, attribute: str) -> Value | None:
    if owner is None:
        return None
    return lambda context: env.getattr(owner(context), attribute)


def _build_item(env: SandboxedEnvironment, owner: Value | None, key: Value | None) -> Value | None:
    if owner is None or key is None:
        return None
    return lambda context: env.getitem(owner(context), key(context))


def _build_filter(env: SandboxedEnvironment, part: Outline) -> Value | None:
    _kind, name, subject_part, arg_parts, kwarg_parts = part
    function = env.filters.get(name) if isinstance(name, str) else None
    if function is None or _PassArg.from_obj(function) is _PassArg.context:
        return None
    if not isinstance(arg_parts, tuple) or not isinstance(kwarg_parts, tuple):
        return None
    subject = _build(env, subject_part)
    args = [_build(env, a) for a in arg_parts]
    kwargs = {
        k: _build(env, v)
        for k, v in (p for p in kwarg_parts if isinstance(p, tuple) and len(p) == 2)
        if isinstance(k, str)
    }
    if (
        subject is None
        or None in args
        or None in kwargs.values()
        or len(kwargs) != len(kwarg_parts)
    ):
        return None
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


def _name(env: SandboxedEnvironment, name: str) -> Value:
    globals_ = env.globals

    def load(context: Mapping[str, Any]) -> Any:
        if name in context:
            return context[name]
        if name in globals_:
            return globals_[name]
        return env.undefined(name=name)

    return load


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


def free_names(
    env: SandboxedEnvironment, ast: nodes.Template, found: list[nodes.Node] | None = None
) -> frozenset[str] | None:
    """The names a template takes from its caller, read from the tree when it binds none of
    its own (no `set`, `for`, `macro`, `with`, `import`); None otherwise (Jinja's
    `meta.find_undeclared_variables` then runs its code generator over the tree to find
    them). Like Jinja's, the environment's globals are left out. `found`: the tree's nodes
    (`tree_nodes`), when the caller has them."""
    names: set[str] = set()
    for node in tree_nodes(ast) if found is None else found:
        if not isinstance(node, _NAMELESS):
            return None
        if isinstance(node, nodes.Name):
            if node.ctx != "load" or node.name in _SPECIAL:
                return None
            names.add(node.name)
        elif isinstance(node, nodes.Tuple) and node.ctx != "load":
            return None
    return frozenset(names.difference(env.globals))


def tree_nodes(ast: nodes.Node) -> list[nodes.Node]:
    """Every node under `ast` (not `ast` itself) in the order of `ast.find_all(nodes.Node)`,
    depth first and fields in order: one loop, where `find_all` nests a generator per node
    (checking a template's names and sandbox walked its tree three times so, a third of a
    first run's check of each template)."""
    found: list[nodes.Node] = []
    stack = _children(ast)
    stack.reverse()
    while stack:
        node = stack.pop()
        found.append(node)
        children = _children(node)
        children.reverse()
        stack.extend(children)
    return found


def _children(node: nodes.Node) -> list[nodes.Node]:
    """`node.iter_child_nodes()`, as a list."""
    children: list[nodes.Node] = []
    for field in node.fields:
        value = getattr(node, field, None)
        if isinstance(value, list):
            children.extend(item for item in value if isinstance(item, nodes.Node))
        elif isinstance(value, nodes.Node):
            children.append(value)
    return children


# expressions Jinja folds though an operand is not constant: `'x' if true else a`,
# `false and a`, `true or a`, `2 < 1 < a`
_SHORT_CIRCUITS = (nodes.CondExpr, nodes.And, nodes.Or, nodes.Compare)


def fold_constants(
    env: SandboxedEnvironment, ast: nodes.Template, found: list[nodes.Node]
) -> list[nodes.Node]:
    """Fold the template's constant expressions in place as Jinja's optimizer does (so that
    `x['__cl' ~ 'ass__']` reads `x['__class__']`), and return the nodes of the folded tree.

    Most templates hold no expression of constants alone; the optimizer's one change to them
    is each piece of the template's text made a `Const`, which is done here without its pass
    over the whole tree (a fifth of a first run's check of each template). An expression
    that might fold is left to the optimizer: the lowest expression Jinja folds has only
    constant operands, or short-circuits (`_SHORT_CIRCUITS`), or has none at all."""
    if any(_may_fold(node) for node in found):
        optimize(ast, env)
        return tree_nodes(ast)
    made: dict[int, nodes.Node] = {}
    for node in found:
        if isinstance(node, nodes.Output):
            node.nodes[:] = [_text_const(env, child, made) for child in node.nodes]
    if sum(isinstance(node, nodes.TemplateData) for node in found) != len(made):
        optimize(ast, env)  # text outside an output (not something Jinja's parser makes)
        return tree_nodes(ast)
    return [made.get(id(node), node) for node in found]


def _text_const(env: SandboxedEnvironment, node: nodes.Node, made: dict[int, nodes.Node]) -> Any:
    """The optimizer's fold of a piece of text: the `Const` of its value."""
    if not isinstance(node, nodes.TemplateData):
        return node
    const: nodes.Expr = node
    with contextlib.suppress(nodes.Impossible):
        const = nodes.Const.from_untrusted(node.as_const(), lineno=node.lineno, environment=env)
    made[id(node)] = const
    return const


def _may_fold(node: nodes.Node) -> bool:
    if not isinstance(node, nodes.Expr) or isinstance(
        node, nodes.Name | nodes.Const | nodes.TemplateData
    ):
        return False
    if isinstance(node, _SHORT_CIRCUITS):
        return True
    return all(_constant(child) for child in _children(node))


def _constant(node: nodes.Node) -> bool:
    """A literal, or a helper of literals (a keyword argument, a dict's pair, a comparison's
    operand)."""
    if isinstance(node, nodes.Const | nodes.TemplateData):
        return True
    return isinstance(node, nodes.Helper) and all(_constant(child) for child in _children(node))
