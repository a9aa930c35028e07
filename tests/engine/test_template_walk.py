"""Plain templates, walked from the syntax tree, render exactly as Jinja's compiled code does:
the same text, the same errors (undefined names, missing columns, sandbox refusals)."""

from __future__ import annotations

from typing import Any

import jinja2
import pytest
from jinja2.nodes import Node
from jinja2.optimizer import optimize

from accord.engine.render import ENV, TableView, compile_template
from accord.engine.template_walk import PlainTemplate, fold_constants, tree_nodes

TABLE = TableView(["region", "revenue"], [("EU", 10.5), ("US", None)])
VALUES: dict[str, Any] = {
    "name": "world",
    "n": 3,
    "f": 2.71828,
    "none": None,
    "items": [1, "two", {"k": "v"}],
    "mapping": {"a": 1, "b": {"c": [5, 6]}},
    "t": TABLE,
    "text": "  Mixed Case  ",
}

PLAIN = [
    "hello {{ name }}",
    "{{ n }} and {{ f }} and {{ none }}",
    "{{ items }} {{ items[1] }} {{ items[2].k }} {{ items[2]['k'] }}",
    "{{ mapping.b.c[1] }} {{ mapping['a'] }}",
    "{{ t }}",
    "{{ t.region }} {{ t.region[0] }} {{ t.revenue[1] }} {{ t | length }}",
    "{{ f | round(2) }} {{ f | round(1, 'floor') }} {{ text | trim | upper }}",
    "{{ items | length }} {{ items | first }} {{ t.region | last }} {{ n | string }}",
    "{{ mapping | tojson }} {{ name | sqlquote }} {{ missing | default('fallback') }}",
    "{{ 'const' }} {{ 42 }}\ntrailing newline kept\n",
    "{{ range }}",
    # arithmetic and `~` as realistic workflows write them (B16's realistic shape)
    "{{ n + 1 }} {{ (items | length) + (name | length) }} {{ n * 2 }} {{ f / 2 }}",
    "{{ n // 2 }} {{ n % 2 }} {{ n ** 2 }} {{ -n }} {{ +f }} {{ n - 10 }} {{ 'ab' * 2 }}",
    "{{ name ~ ' / ' ~ n }} {{ (name ~ '!') | truncate(60) }} {{ name ~ none }}",
    "{{ name | upper | replace('O', 'o') }} {{ t.region | join(', ') }}",
    "{{ name | wordcount }} words, {{ '%.1f' | format((name | length) / 3) }}",
    "{{ '%s!' % name }} {{ '%05.1f' % f }}",
]

FAILING = [
    "{{ missing }}",
    "{{ mapping.nope }}",
    "{{ t.nope }}",
    "{{ items[7] }}",
    "{{ name.__class__ }}",
    "{{ name | attr('__class__') }}",
    "{{ none.x }}",
    "{{ 'x' * 100000000 }}",
    "{{ 2 ** 10 ** 7 }}",
    "{{ name + 1 }}",
    "{{ n / 0 }}",
    "{{ missing + 1 }}",
    "{{ missing ~ 'x' }}",
    "{{ -name }}",
    "{{ items * 10000000 }}",
]


def _jinja(source: str) -> jinja2.Template:
    return ENV.from_string(source)


def _outcome(render: Any) -> tuple[str, str]:
    try:
        return "ok", render(VALUES)
    except Exception as exc:  # the same class and message either way
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("source", PLAIN + FAILING)
def test_a_plain_template_renders_as_jinja_does(source: str) -> None:
    walked = compile_template(source)
    assert isinstance(walked, PlainTemplate), "expected the plain path for this template"
    assert _outcome(walked.render) == _outcome(_jinja(source).render)


@pytest.mark.parametrize(
    "source",
    [
        "{% for r in t %}{{ r.region }}{% endfor %}",
        "{{ name if n else 'x' }}",
        "{{ name is defined }}",
        "{{ now() }}",
        "{{ items[0:2] }}",
        "{{ items | map('string') | join }}",
        "{{ items | map('string') | join }} {{ n > 1 }}",  # a context filter, a comparison
    ],
)
def test_anything_else_is_compiled_by_jinja(source: str) -> None:
    compiled = compile_template(source)
    assert not isinstance(compiled, PlainTemplate)
    assert _outcome(compiled.render) == _outcome(_jinja(source).render)


FOLDED = [
    *PLAIN,
    "{{ x['__cl' ~ 'ass__'] }} {{ 1 + 2 }} {{ [1, 2][0] }} {{ {'a': 1}.a }} {{ -1 }}",
    "{{ 'x' if true else a }} {{ false and a }} {{ true or a }} {{ 2 < 1 < a }}",
    "{{ a | default('x' ~ 'y') }} {{ a[1:2] }} {{ (1 + 2) * a }} {{ 'abc' | upper }}",
    "text {0._x} beside {{ a }}",  # the text becomes a constant, and is checked as one
    "{{ a(1, k=2) }} {{ a | replace('A', 'a') | truncate(20) }} {{ (a ~ ' / ' ~ b) }}",
]


@pytest.mark.parametrize("source", FOLDED)
def test_constants_fold_as_jinjas_optimizer_folds_them(source: str) -> None:
    """`fold_constants` skips the optimizer's pass where nothing but the text can fold: the
    tree it leaves, and the nodes it lists, are the optimizer's to the last node."""
    ours, jinjas = ENV.parse(source), ENV.parse(source)
    found = fold_constants(ENV, ours, tree_nodes(ours))
    optimize(jinjas, ENV)
    assert repr(ours) == repr(jinjas)
    assert [repr(node) for node in found] == [repr(node) for node in jinjas.find_all(Node)]
