"""promptfoo's nunjucks templates rendered on accord's sandboxed Jinja.

promptfoo (0.118, `src/util/templates.ts`) renders prompts and vars with nunjucks, with
autoescape off, an undefined name rendered as empty text, a `load` filter (JSON text to a
value) and the `env` global. Where nunjucks and Jinja agree (`{{ x }}`, filters both have,
`{% if %}`, `{% for x in list %}`, `{% raw %}`), accord renders the template in its own
sandbox (`engine.render.AccordSandbox`, the same refusals of Python internals and resource
bombs) with the same lenient undefined; `.length` reads as JavaScript reads it. What reads
differently is named at load, never rendered differently: a syntax Jinja does not take, a
filter only nunjucks has, a JavaScript method (`name.toUpperCase()`), and
`{% for k, v in mapping %}` (nunjucks walks a mapping's pairs; Jinja needs `.items()`).
`env` holds the config's own `env:` values only: the process environment stays out of
templates, where a test file could print a secret into a prompt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

import jinja2
from jinja2 import nodes

from .....engine import render as accord_render

# JavaScript members nunjucks templates use on strings and arrays (`items.toUpperCase()`);
# Jinja finds no such attribute and would print nothing, so they are named at load.
# `.length` reads as JavaScript reads it instead (_Nunjucks.getattr)
JAVASCRIPT_MEMBERS = frozenset({
    "toUpperCase", "toLowerCase", "trim", "includes", "indexOf", "slice",
    "substring", "startsWith", "endsWith", "toString", "toFixed", "map", "filter",
})  # fmt: skip


class NunjucksDifference(ValueError):
    """A template construct nunjucks and Jinja read differently; `line` is the template's."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def _dump(value: Any, indent: int | None = None) -> str:
    """nunjucks's `dump`: JSON.stringify (compact unless an indent is given)."""
    separators = (",", ":") if indent is None else (",", ": ")
    return json.dumps(value, indent=indent, separators=separators, ensure_ascii=False)


def _load(text: Any) -> Any:
    """promptfoo's `load` filter: JSON text to the value it holds."""
    return json.loads(str(text))


class _Nunjucks(accord_render.AccordSandbox):
    """`x.length` as nunjucks evaluates it, JavaScript's: a string's UTF-16 length, a list's
    size, a mapping's `length` key (undefined when it has none)."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if attribute == "length" and isinstance(obj, str):
            return len(obj.encode("utf-16-le")) // 2
        if attribute == "length" and isinstance(obj, list | tuple):
            return len(obj)
        return super().getattr(obj, attribute)


@cache
def environment() -> accord_render.AccordSandbox:
    """accord's sandbox with nunjucks's leniency: an undefined name renders as ''."""
    env = _Nunjucks(
        undefined=jinja2.ChainableUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        extensions=["jinja2.ext.loopcontrols"],
    )
    env.filters.update(accord_render.ENV.filters)
    env.filters["dump"] = _dump
    env.filters["load"] = _load
    return env


@cache
def _parsed(source: str) -> tuple[jinja2.Template, tuple[tuple[str, int], ...]]:
    """The compiled template and its `{% for a, b in name %}` loops (name, line)."""
    env = environment()
    try:
        ast = env.parse(source)
    except jinja2.TemplateSyntaxError as exc:
        raise NunjucksDifference(
            f"template syntax accord's Jinja does not read: {exc.message}", exc.lineno
        ) from None
    problem = accord_render.sandbox_problem(ast)
    if problem is not None:
        raise NunjucksDifference(problem)
    for node in ast.find_all(nodes.Filter):
        if node.name not in env.filters:
            raise NunjucksDifference(
                f"the filter '{node.name}' is not one accord's Jinja has (nunjucks's own, or a "
                "custom nunjucksFilters one): rewrite the template without it",
                node.lineno,
            )
    for member in ast.find_all(nodes.Getattr):
        if member.attr in JAVASCRIPT_MEMBERS:
            fix = "a Jinja filter ('x | upper', 'x | trim', 'y in x', ...)"
            raise NunjucksDifference(
                f"'.{member.attr}' is JavaScript, which nunjucks reaches and Jinja does not "
                f"(it would render as nothing): write {fix}",
                member.lineno,
            )
    pairs = tuple(
        (loop.iter.name, loop.lineno)
        for loop in ast.find_all(nodes.For)
        if isinstance(loop.target, nodes.Tuple) and isinstance(loop.iter, nodes.Name)
    )
    return env.from_string(ast), pairs


def check(source: str) -> None:
    """Raise `NunjucksDifference` when `source` reads differently in Jinja."""
    if "{" in source:
        _parsed(source)


# `{{ name }}` alone: most prompts are text with such names in it
_NOT_NAMES = frozenset({"true", "false", "none", "True", "False", "None"})
_PLAIN_NAME = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def _substituted(source: str, context: Mapping[str, Any]) -> str | None:
    """A template of text and `{{ name }}`s whose names hold text (or nothing): the text
    with them put in, as Jinja renders it, without building a render context per case (a
    thousand cases' prompts). None for any other template."""
    parts = _PLAIN_NAME.split(source)
    out = []
    for index, part in enumerate(parts):
        if index % 2 == 0:
            if "{" in part or "}" in part:
                return None
            out.append(part)
            continue
        value = context.get(part, "")
        if not isinstance(value, str) or part in _NOT_NAMES or part in environment().globals:
            return None  # a literal (`true`), a global (`range`) or a value Jinja prints
        out.append(value)
    return "".join(out)


def render(source: str, context: Mapping[str, Any]) -> str:
    """`source` rendered with `context` as nunjucks renders it, or `NunjucksDifference`."""
    if "{" not in source:
        return source
    plain = _substituted(source, context)
    if plain is not None:
        return plain
    template, pairs = _parsed(source)
    for name, line in pairs:
        if isinstance(context.get(name), Mapping):
            raise NunjucksDifference(
                f"'{{% for k, v in {name} %}}' walks a mapping's pairs in nunjucks but its keys "
                f"in Jinja: write '{name}.items()'",
                line,
            )
    try:
        return template.render(context)
    except NunjucksDifference:
        raise
    except (jinja2.TemplateError, TypeError, ValueError, ArithmeticError) as exc:
        message = getattr(exc, "message", None) or str(exc)
        raise NunjucksDifference(
            f"the template does not render in accord's Jinja ({type(exc).__name__}: {message}); "
            "nunjucks evaluates some expressions as JavaScript does (adding text to a number, "
            "say): write it so both read it alike"
        ) from None


def render_vars(source: str, variables: Mapping[str, Any], env: Mapping[str, Any]) -> str:
    """A prompt rendered as promptfoo's `renderPrompt` does for a text prompt: each string
    var first rendered over the vars, then the prompt over the rendered vars (and `env`)."""
    # `env` as given, never copied: engine/keys.py's environment reads (and so masks) only
    # the values a template looks up
    context: dict[str, Any] = {"env": env, **variables}
    rendered = {
        key: render(value, context) if isinstance(value, str) else value
        for key, value in variables.items()
    }
    return render(source, {"env": env, **rendered})


def render_json_prompt(source: str, variables: Mapping[str, Any], env: Mapping[str, Any]) -> str:
    """A prompt whose raw text is JSON: each string inside rendered with the vars, then the
    whole written back as promptfoo writes it (JSON with two-space indents)."""
    context: dict[str, Any] = {"env": env, **variables}

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return render(value, context)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    return json.dumps(walk(json.loads(source)), indent=2, ensure_ascii=False)
