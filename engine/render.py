"""The sandboxed Jinja environment, its filters, and the views of task outputs in templates.

A template is parsed once per process per source text: validation reads its free names from
that tree (`referenced_names`; the compiler turns them into the DAG's edges) and the run
renders from the same tree, walked (`template_walk`) or compiled by Jinja once; compiled code
is kept across runs in the project's `.accord/templates/` (`template_cache`), so a second run
of an unchanged workflow compiles nothing.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import operator
import re
from collections.abc import Callable, Iterator, Mapping
from functools import cache, lru_cache
from pathlib import Path
from types import CodeType
from typing import Any

import jinja2
from jinja2 import meta, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.environment import TemplateExpression
from jinja2.parser import Parser
from jinja2.sandbox import SandboxedEnvironment

from . import render_budget, template_cache, template_walk
from .errors import AccordError, did_you_mean
from .paths import check_filled_parts
from .template_walk import (
    PlainTemplate,
    fold_constants,
    free_names,
    from_outline,
    plain_template,
    tree_nodes,
)


class TemplateError(AccordError):
    """A template failed to parse or render."""


def sqlquote(value: Any) -> str:
    """`O'Brien` -> `'O''Brien'`: a single-quoted SQL string literal."""
    return "'" + str(value).replace("'", "''") + "'"


def to_json(value: Any, indent: int | None = None) -> str:
    """JSON text of a value; tables become lists of row objects."""
    if isinstance(indent, int) and indent > 100:
        raise render_budget.BudgetError(f"tojson: an indent of {indent} (at most 100)")
    return json.dumps(jsonable(value), indent=indent, ensure_ascii=False, default=str)


def now(utc: bool = False, fmt: str | None = None) -> str:
    """The current time, ISO 8601 unless `fmt` (strftime) is given."""
    moment = dt.datetime.now(dt.UTC if utc else None)
    return moment.strftime(fmt) if fmt else moment.isoformat(timespec="seconds")


class TableView:
    """A query result as templates see it.

    `t.col` is the list of that column's values, `{% for row in t %}` yields rows as
    mappings, `t | length` is the row count, and `{{ t }}` renders a Markdown table.
    """

    __slots__ = ("_columns", "_index", "_rows")

    def __init__(self, columns: list[str], rows: list[tuple[Any, ...]]) -> None:
        self._columns = list(columns)
        self._rows = rows
        self._index = {name: i for i, name in enumerate(self._columns)}

    @property
    def columns(self) -> list[str]:
        return self._columns

    @property
    def rows(self) -> list[tuple[Any, ...]]:
        return self._rows

    def column(self, name: str) -> list[Any]:
        position = self._index[name]
        return [row[position] for row in self._rows]

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self._columns, row, strict=True)) for row in self._rows]

    def __getattr__(self, name: str) -> list[Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self.column(name)
        except KeyError:
            raise AttributeError(
                f"table has no column '{name}' (columns: {', '.join(self._columns)})"
            ) from None

    def __getitem__(self, key: int | str) -> Any:
        if isinstance(key, str):
            return self.column(key)
        return dict(zip(self._columns, self._rows[key], strict=True))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for row in self._rows:
            yield dict(zip(self._columns, row, strict=True))

    def __len__(self) -> int:
        return len(self._rows)

    def __bool__(self) -> bool:
        return bool(self._rows)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TableView)
            and other._columns == self._columns
            and other._rows == self._rows
        )

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return markdown_table(self._columns, self._rows)

    def __repr__(self) -> str:
        return f"TableView({len(self._rows)} rows x {len(self._columns)} columns)"


def float_text(value: float) -> str:
    """A double as people read it: the shortest text that gives back the value rounded to
    15 significant digits. 15 digits survive any decimal -> double -> decimal trip, so what
    is cut is only the binary noise of arithmetic (a sum of 1700.11 computed as
    1700.1099999999997 shows as 1700.11); DECIMAL values are not floats and stay exact."""
    if not math.isfinite(value):
        return str(value)
    return repr(float(f"{value:.15g}"))


def format_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return float_text(value)
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(columns: list[str], rows: list[tuple[Any, ...]]) -> str:
    """A GitHub-flavoured Markdown table."""
    head = "| " + " | ".join(columns) + " |"
    rule = "|" + "|".join("---" for _ in columns) + "|"
    body = ["| " + " | ".join(format_cell(v) for v in row) + " |" for row in rows]
    return "\n".join([head, rule, *body])


def jsonable(value: Any) -> Any:
    """Task outputs as JSON-compatible data."""
    if isinstance(value, TableView):
        return [{k: jsonable(v) for k, v in r.items()} for r in value.records()]
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if hasattr(value, "to_json"):
        return value.to_json()
    if hasattr(value, "__float__") and not isinstance(value, complex):
        number = float(value)
        return int(number) if number.is_integer() and "." not in str(value) else number
    return str(value)


_ORDERING: dict[str, Callable[[Any, Any], Any]] = {
    "lt": operator.lt,
    "lteq": operator.le,
    "gt": operator.gt,
    "gteq": operator.ge,
}


class _CodeGenerator(CodeGenerator):
    """Routes a single ordering comparison (`a > b`) through `environment.compare`, ticks
    the render budget at every block (loop bodies included), and checks the size of `~`."""

    def blockvisit(self, nodes: Any, frame: Frame) -> None:
        self.writeline("environment.tick()")
        super().blockvisit(nodes, frame)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.checked_text(")
        super().visit_Concat(node, frame)
        self.write(")")

    def visit_Compare(self, node: nodes.Compare, frame: Frame) -> None:
        if len(node.ops) != 1 or node.ops[0].op not in _ORDERING:
            super().visit_Compare(node, frame)
            return
        self.write(f"environment.compare({node.ops[0].op!r}, ")
        self.visit(node.expr, frame)
        self.write(", ")
        self.visit(node.ops[0].expr, frame)
        self.write(")")


MAX_RESULT_SIZE = 10_000_000  # items of a repeated string or list
MAX_POWER_BITS = 100_000  # about 30,000 digits: far more than a template can print


class AccordSandbox(SandboxedEnvironment):
    """Sandbox that names the blocked attribute in its error, and refuses the one-line
    resource bombs (`{{ 10 ** 10 ** 10 }}`, `{{ 'x' * 10 ** 12 }}`) that would otherwise
    compute for hours or exhaust memory inside one render."""

    code_generator_class = _CodeGenerator
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def tick(self) -> None:
        render_budget.tick()

    def checked_text(self, text: Any) -> Any:
        if isinstance(text, str):
            render_budget.check_size(len(text), "joining text with '~'")
        return text

    def wrap_str_format(self, value: Any) -> Any:
        """`str.format` in a template: widths checked, and no width taken from arguments."""
        wrapped = super().wrap_str_format(value)
        if wrapped is not None:
            import string

            for _text, field, spec, _conversion in string.Formatter().parse(value.__self__):
                if field is not None and spec:
                    if "{" in spec:
                        raise render_budget.BudgetError(
                            "str.format: a width taken from an argument is not allowed here"
                        )
                    render_budget.format_width(spec, "str.format")
        return wrapped

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(left, int) and isinstance(right, int):
            bits = right * max(abs(left), 1).bit_length()
            if right > 0 and abs(left) > 1 and bits > MAX_POWER_BITS:
                raise TemplateError(
                    f"{left} ** {right} is too large to compute in a template (sandbox limit)"
                )
        if operator == "+" and isinstance(left, str | list | tuple) and hasattr(right, "__len__"):
            render_budget.check_size(len(left) + len(right), "'+'")
        if operator == "%" and isinstance(left, str):
            render_budget.percent_widths(left, "'%' formatting")
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if (
                    isinstance(seq, str | list | tuple)
                    and isinstance(times, int)
                    and len(seq) * times > MAX_RESULT_SIZE
                ):
                    raise TemplateError(
                        f"repeating a value {times} times is too large for a template "
                        f"(sandbox limit: {MAX_RESULT_SIZE:,} items)"
                    )
        return super().call_binop(context, operator, left, right)

    def compare(self, op: str, left: Any, right: Any) -> Any:
        """`<`, `<=`, `>`, `>=`; like Oxy's minijinja, none orders below every other value, so
        `{% if pct > 15 %}` is false for a NULL instead of an error."""
        try:
            return _ORDERING[op](left, right)
        except TypeError:
            if left is None or right is None:
                return _ORDERING[op](left is not None, right is not None)
            raise

    def getitem(self, obj: Any, argument: Any) -> Any:
        # Oxy's `{% if t.col[i] %}` past the end of a column: undefined and falsy, an error
        # only where it is printed
        if (
            isinstance(obj, list | tuple)
            and isinstance(argument, int)
            and not isinstance(argument, bool)
            and not -len(obj) <= argument < len(obj)
        ):
            return _PastTheEnd(obj=obj, name=str(argument))
        return super().getitem(obj, argument)

    def getattr(self, obj: Any, attribute: str) -> Any:
        # a column called `rows` or `columns` must not be shadowed by the view's own API
        if isinstance(obj, TableView) and attribute in obj.columns:
            return obj.column(attribute)
        if isinstance(attribute, str) and _INTERNAL_NAME.match(attribute):
            # refused whether or not the object has it: the message says why, not "undefined"
            return self.unsafe_undefined(obj, attribute)
        return super().getattr(obj, attribute)

    def unsafe_undefined(self, obj: Any, attribute: str) -> jinja2.Undefined:
        raise TemplateError(
            f"access to '{attribute}' is not allowed in templates (sandboxed environment)"
        )


@jinja2.pass_environment
def _attr(environment: jinja2.Environment, obj: Any, name: str) -> Any:
    """Jinja's `attr` filter, refusing internal names even where the object lacks them."""
    if isinstance(name, str) and _INTERNAL_NAME.match(name):
        raise TemplateError(
            f"access to '{name}' is not allowed in templates (sandboxed environment)"
        )
    return jinja2.filters.do_attr(environment, obj, name)


class _Missing(jinja2.StrictUndefined):
    """StrictUndefined whose message for a missing column or key lists what there is."""

    __slots__ = ()

    @property
    def _undefined_message(self) -> str:
        owner, name = self._undefined_obj, self._undefined_name
        if isinstance(name, str) and isinstance(owner, TableView):
            return f"the table has no column '{name}'{_choices(name, owner.columns, 'columns')}"
        if isinstance(name, str) and isinstance(owner, Mapping):
            names = [k for k in owner if isinstance(k, str)]
            return f"no '{name}' in this mapping{_choices(name, names, 'it has')}"
        return str(super()._undefined_message)


class _PastTheEnd(_Missing):
    """An index past the end of a list: false in `{% if %}`, replaced by `default`, an
    error when printed or computed with."""

    __slots__ = ()

    def __bool__(self) -> bool:  # type: ignore[override]
        return False

    @property
    def _undefined_message(self) -> str:
        size = len(self._undefined_obj)
        return (
            f"index {self._undefined_name} is past the end of a list of {size} value"
            f"{'' if size == 1 else 's'}: test it first ({{% if x[i] is defined %}}) or give a "
            "default (`| default('')`)"
        )


def _choices(name: str, names: list[str], label: str) -> str:
    hint = did_you_mean(name, names)
    shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
    return f"{hint} ({label}: {shown or 'none'})"


def number(value: Any, decimals: int | None = None, separator: str = ",") -> str:
    """`{{ 763888.75 | number }}` -> `763,888.75`; `| number(0)` -> `763,889`; `| number(1,
    " ")` -> `763 888.8`. Thousands separated, `decimals` fixed (default: as the value has
    them, at most 2); text that is not a number is left as it is."""
    try:
        amount = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(amount):
        return str(value)
    if decimals is None:
        decimals = 0 if amount == int(amount) else 2
    text = f"{amount:,.{max(0, int(decimals))}f}"
    return text.replace(",", separator) if separator != "," else text


def _build_env() -> SandboxedEnvironment:
    env = AccordSandbox(
        undefined=_Missing,
        autoescape=False,
        keep_trailing_newline=True,
        extensions=["jinja2.ext.loopcontrols", "jinja2.ext.do"],
    )
    env.filters["sqlquote"] = sqlquote
    env.filters["attr"] = _attr
    env.filters["tojson"] = to_json
    env.filters["number"] = number
    env.globals["now"] = now
    render_budget.guard_filters(env.filters)
    env.globals["lipsum"] = render_budget.lipsum_guard(env.globals["lipsum"])  # type: ignore[arg-type]
    return env


ENV = _build_env()
BUILTIN_NAMES = frozenset(ENV.globals) | {"current_date"}


_PARSED: dict[str, nodes.Template] = {}  # the trees parsed in this process, by their text
_PARSED_LIMIT = 65536


def _parse(source: str) -> nodes.Template:
    ast = _PARSED.get(source)
    if ast is None:
        ast = ENV.parse(source)
        if len(_PARSED) >= _PARSED_LIMIT:
            _PARSED.clear()
        _PARSED[source] = ast
    return ast


@cache
def _fingerprint() -> str:
    # the modules whose code decides what Jinja generates here: this one (the code
    # generator, the sandbox), the render budget it calls, and the cache's own format
    return template_cache.fingerprint(
        ENV, __file__, render_budget.__file__, template_walk.__file__, template_cache.__file__
    )


def use_template_cache(root: Path, writable: bool = True) -> None:
    """Keep compiled templates and checked templates' names under `root`'s
    `.accord/templates/` (compiling a workflow calls this; `accord validate` only reads)."""
    template_cache.use(root, _fingerprint(), ENV, writable)


def _code(kind: str, source: str, build: Callable[[], CodeType]) -> CodeType:
    cached = template_cache.active()
    return build() if cached is None else cached.code(kind, source, build)


@lru_cache(maxsize=65536)
def compile_template(source: str) -> jinja2.Template | PlainTemplate:
    """A template ready to render, cached by its source text: plain text-and-expression
    templates are walked from their syntax tree (`template_walk`), or built from the outline
    the template cache kept of it; the rest are compiled by Jinja from that same tree, or
    loaded from the template cache."""
    cached = template_cache.active()
    code = None
    ast = None
    if cached is not None:
        outline = cached.outline(source)  # in memory: asked before the code's own file
        kept = None if outline is None else from_outline(ENV, outline)
        if kept is not None:
            return kept
        # checked in this process (a first run): a plain template needs no look for its
        # code's file (2,000 failed opens in a first run of B16)
        ast = _PARSED.get(source)
        plain = None if ast is None else plain_template(ENV, ast)
        if plain is not None:
            cached.store_outline(source, plain.outline)
            return plain
        code = cached.cached_code("template", source)
    if code is None:
        if ast is None:
            ast = _parse(source)
            plain = plain_template(ENV, ast)
            if plain is not None:
                if cached is not None:
                    cached.store_outline(source, plain.outline)
                return plain
        code = ENV.compile(ast)
        if cached is not None:
            cached.store_code("template", source, code)
    return ENV.template_class.from_code(ENV, code, ENV.make_globals(None), None)


@lru_cache(maxsize=65536)
def referenced_names(source: str) -> frozenset[str]:
    """Free names of a template (from Jinja's AST), or raise `TemplateError` on bad syntax
    or on an attempt to reach Python internals the sandbox refuses at run time."""
    if "{" not in source:
        return frozenset()
    cached = template_cache.active()
    if cached is not None:
        known = cached.names(source)
        if known is not None:
            return known  # checked before, this very text: nothing to parse
    names = _checked_names(source)
    if cached is not None:
        cached.store_names(source, names)
    return names


def _checked_names(source: str) -> frozenset[str]:
    try:
        ast = _parse(source)
        tree = tree_nodes(ast)
        found = free_names(ENV, ast, tree)
        if found is None:
            # Jinja's code generator walks the tree for them, folding constants in it as it
            # goes, and reports an unknown filter or test (TemplateAssertionError)
            names = frozenset(meta.find_undeclared_variables(ast))
            tree = tree_nodes(ast)
        else:
            names = found
            # folded in place as the code generator would: `x['__cl' ~ 'ass__']` must read
            # `x['__class__']` for `sandbox_problem`
            tree = fold_constants(ENV, ast, tree)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(
            f"template syntax error on its line {exc.lineno}: {exc.message}"
        ) from None
    except RecursionError:
        raise TemplateError("template nested too deeply to parse: simplify it") from None
    problem = sandbox_problem(ast, tree) or _unknown_filter_or_test(tree)
    if problem is not None:
        raise TemplateError(problem)
    return names


def _unknown_filter_or_test(tree: list[nodes.Node]) -> str | None:
    """Jinja reports an unknown filter or test inside `{% if %}` only when it renders."""
    for node in tree:
        if not isinstance(node, nodes.Filter | nodes.Test):
            continue
        known = ENV.filters if isinstance(node, nodes.Filter) else ENV.tests
        if node.name not in known:
            kind = "filter" if isinstance(node, nodes.Filter) else "test"
            advice = did_you_mean(node.name, known, before=": ")
            return f"template line {node.lineno}: no {kind} named '{node.name}'{advice}"
    return None


_FORMAT_FIELD_INTERNALS = re.compile(r"\{[^{}]*(\.|\[)_")
# `__class__`, and Python's mangled private names (`_TemplateReference__context`); a column
# called `_id` stays usable as `t._id`
_INTERNAL_NAME = re.compile(r"__|_[A-Za-z0-9]+__")


def sandbox_problem(ast: nodes.Node, tree: list[nodes.Node] | None = None) -> str | None:
    """Why the template tries to escape the sandbox, seen statically; None when it does not.

    Catches `x.__class__`, `x['__globals__']`, `x | attr('__dict__')` and format strings
    that reach attributes (`'{0.__class__}'.format(x)`), so `accord validate` refuses them
    before anything runs; the sandbox refuses them again at run time. `tree`: the nodes of
    `ast` (`template_walk.tree_nodes`), when the caller has them.
    """
    for node in tree_nodes(ast) if tree is None else tree:
        if not isinstance(node, nodes.Getattr | nodes.Getitem | nodes.Filter | nodes.Const):
            continue
        name: Any = None
        if isinstance(node, nodes.Getattr):
            name = node.attr
        elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
            name = node.arg.value
        elif isinstance(node, nodes.Filter) and node.name == "attr" and node.args:
            first = node.args[0]
            name = first.value if isinstance(first, nodes.Const) else None
        elif (
            isinstance(node, nodes.Const)
            and isinstance(node.value, str)
            and _FORMAT_FIELD_INTERNALS.search(node.value)
        ):
            return (
                f"the format string {node.value!r} reaches attributes starting with '_': "
                "not allowed in templates (sandboxed environment)"
            )
        if isinstance(name, str) and _INTERNAL_NAME.match(name):
            return f"access to '{name}' is not allowed in templates (sandboxed environment)"
    return None


# what a bad value or a hostile template (a macro that calls itself) raises while rendering
_RENDER_ERRORS = (
    TypeError,
    ValueError,
    ArithmeticError,
    LookupError,
    AttributeError,
    RecursionError,
)
_TEMPLATE_FAILURES = (jinja2.TemplateError, *_RENDER_ERRORS)
_SINGLE_EXPR = re.compile(r"^\s*\{\{(?P<expr>.*?)\}\}\s*$", re.DOTALL)


def single_expression(source: str) -> str | None:
    """The expression of a template that is exactly one `{{ ... }}`, else None."""
    match = _SINGLE_EXPR.match(source)
    if match is None or "{{" in match.group("expr") or "}}" in match.group("expr"):
        return None
    return match.group("expr").strip()


@lru_cache(maxsize=1024)
def _compile_expression(expr: str) -> Any:
    """`ENV.compile_expression(expr, undefined_to_none=False)`, its code kept in the cache."""
    code = _code("expression", expr, lambda: ENV.compile(_expression_tree(expr)))
    template = ENV.template_class.from_code(ENV, code, ENV.make_globals(None), None)
    return TemplateExpression(template, undefined_to_none=False)


def _expression_tree(expr: str) -> nodes.Template:
    """The tree `Environment.compile_expression` compiles: `result = <expr>`."""
    parser = Parser(ENV, expr, state="variable")
    try:
        node = parser.parse_expression()
        if not parser.stream.eos:
            raise jinja2.TemplateSyntaxError(
                "chunk after expression", parser.stream.current.lineno, None, None
            )
        node.set_environment(ENV)
    except jinja2.TemplateSyntaxError:
        ENV.handle_exception(source=expr)
    body = [nodes.Assign(nodes.Name("result", "store"), node, lineno=1)]
    return nodes.Template(body, lineno=1)


def evaluate(source: str, context: Mapping[str, Any]) -> Any:
    """Evaluate a value template keeping its type when it is one `{{ expression }}`.

    `"{{ t.col }}"` yields the list itself; any other template renders to text.
    """
    expr = single_expression(source)
    if expr is None:
        return render(source, context)
    try:
        value = _compile_expression(expr)(**context)
        if isinstance(value, jinja2.Undefined):
            # a bare undefined name comes back as an Undefined object instead of raising
            value._fail_with_undefined_error()
        return value
    except _TEMPLATE_FAILURES as exc:
        quoted = f"'{source.strip()}'"
        raise _template_error(
            exc,
            undefined=f"undefined name in {quoted}",
            syntax=f"expression syntax error in {quoted}",
            failed=f"cannot evaluate {quoted}",
        ) from None


def evaluate_condition(source: str, context: Mapping[str, Any]) -> bool:
    """A conditional's `if:`, written bare (`x > 3`) or wrapped (`{{ x > 3 }}`)."""
    expr = single_expression(source) or source.strip()
    try:
        return bool(_compile_expression(expr)(**context))
    except _TEMPLATE_FAILURES as exc:
        raise _template_error(
            exc,
            undefined=f"undefined name in condition '{expr}'",
            syntax=f"condition syntax error in '{expr}'",
            failed=f"cannot evaluate condition '{expr}'",
        ) from None


def _template_error(
    exc: Exception, *, undefined: str, syntax: str, failed: str, whole_template: bool = False
) -> TemplateError:
    """The `TemplateError` for what evaluating or rendering raised, worded by the caller: an
    undefined name, a syntax error, a sandbox block, or any other failure. A `whole_template`
    message gives the line of a syntax error and the type of a bad value's error."""
    if isinstance(exc, jinja2.UndefinedError):
        return TemplateError(f"{undefined}: {exc.message}")
    if isinstance(exc, jinja2.TemplateSyntaxError):
        line = f" on its line {exc.lineno}" if whole_template else ""
        return TemplateError(f"{syntax}{line}: {exc.message}")
    if isinstance(exc, jinja2.exceptions.SecurityError):
        return TemplateError(f"blocked by the template sandbox: {exc}")
    if isinstance(exc, _RENDER_ERRORS) and whole_template:
        return TemplateError(f"{failed}: {type(exc).__name__}: {exc}")
    return TemplateError(f"{failed}: {exc}")


def condition_names(source: str) -> frozenset[str]:
    """Free names of a condition expression."""
    expr = single_expression(source) or source.strip()
    return referenced_names("{{ " + expr + " }}")


def render_path(source: str, context: Mapping[str, Any], what: str) -> str:
    """Render a path template; the values filled in may not name other folders (`..`, `/`),
    so data or a model's answer cannot steer where a file goes."""
    if "{" not in source:
        return source
    with _rendering():
        template = compile_template(source)
        if isinstance(template, PlainTemplate):
            text, values = template.filled(context)
            check_filled_parts(values, what, source)
            return text
        return template.render(context)


def render(source: str, context: Mapping[str, Any], seconds: float | None = None) -> str:
    """Render a template to text; undefined names and sandbox escapes raise `TemplateError`,
    a render past its budget (`seconds`, at most `render_budget.RENDER_SECONDS`, and
    `render_budget.MAX_TEXT` characters) `BudgetError`."""
    if "{" not in source:
        return source
    token = render_budget.start(seconds)
    try:
        with _rendering():
            template = compile_template(source)
            if isinstance(template, PlainTemplate):
                return template.render(context)
            return render_budget.bounded_output(template.generate(context))
    finally:
        render_budget.finish(token)


@contextlib.contextmanager
def _rendering() -> Iterator[None]:
    """What rendering raises, as the `TemplateError` a user reads (an unknown test, say, is
    reported only when rendered)."""
    try:
        yield
    except _TEMPLATE_FAILURES as exc:
        raise _template_error(
            exc,
            undefined="undefined name",
            syntax="template syntax error",
            failed="cannot render template",
            whole_template=True,
        ) from None
    except MemoryError:
        raise TemplateError("cannot render template: it needs more memory than there is") from None
    except RecursionError:
        raise TemplateError("cannot render template: it recurses too deeply") from None
