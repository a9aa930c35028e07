"""Templates: filters, table views, strict undefined names, the sandbox, typed evaluation."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from accord.engine.errors import AccordError
from accord.engine.render import (
    TableView,
    TemplateError,
    evaluate,
    evaluate_condition,
    referenced_names,
    render,
    sqlquote,
)


@pytest.fixture
def sales() -> TableView:
    return TableView(["region", "amount"], [("EU", 10), ("US", 20.5), ("APAC", None)])


def test_sqlquote_doubles_embedded_quotes() -> None:
    assert render("{{ name | sqlquote }}", {"name": "O'Brien"}) == "'O''Brien'"
    assert sqlquote(3) == "'3'"
    assert sqlquote("it''s") == "'it''''s'"


def test_tojson_of_values_and_tables(sales: TableView) -> None:
    assert json.loads(render("{{ x | tojson }}", {"x": {"a": [1, "é"]}})) == {"a": [1, "é"]}
    assert json.loads(render("{{ t | tojson }}", {"t": sales})) == [
        {"region": "EU", "amount": 10},
        {"region": "US", "amount": 20.5},
        {"region": "APAC", "amount": None},
    ]
    day = dt.date(2024, 1, 15)
    assert render("{{ d | tojson }}", {"d": day}) == '"2024-01-15"'


def test_now_defaults_to_iso_and_takes_a_format() -> None:
    today = dt.date.today()
    text = render("{{ now() }}", {})
    parsed = dt.datetime.fromisoformat(text)
    assert abs((parsed.date() - today).days) <= 1
    assert render("{{ now(fmt='%Y') }}", {}) in {str(today.year), str(today.year + 1)}
    utc = dt.datetime.fromisoformat(render("{{ now(utc=true) }}", {}))
    assert utc.utcoffset() == dt.timedelta(0)


def test_undefined_name_is_an_error_not_empty_text() -> None:
    with pytest.raises(TemplateError, match="'missing' is undefined"):
        render("Hello {{ missing }}!", {})
    with pytest.raises(TemplateError, match="undefined"):
        render("{{ x.nope }}", {"x": {}})


def test_template_error_is_an_accord_error() -> None:
    assert issubclass(TemplateError, AccordError)


def test_table_column_access(sales: TableView) -> None:
    assert render("{{ t.region }}", {"t": sales}) == "['EU', 'US', 'APAC']"
    assert render("{{ t.region[0] }}/{{ t.amount[1] }}", {"t": sales}) == "EU/20.5"
    assert render("{{ t['region'][2] }}", {"t": sales}) == "APAC"


def test_table_rows_and_length(sales: TableView) -> None:
    out = render(
        "{% for row in t %}{{ row.region }}={{ row['amount'] }};{% endfor %}", {"t": sales}
    )
    assert out == "EU=10;US=20.5;APAC=None;"
    assert render("{{ t | length }} rows", {"t": sales}) == "3 rows"
    assert render("{% if t %}some{% else %}none{% endif %}", {"t": TableView(["a"], [])}) == "none"


def test_table_renders_as_markdown(sales: TableView) -> None:
    assert render("{{ t }}", {"t": sales}) == (
        "| region | amount |\n|---|---|\n| EU | 10 |\n| US | 20.5 |\n| APAC |  |"
    )


def test_markdown_escapes_pipes_and_newlines() -> None:
    table = TableView(["note"], [("a|b\nc",)])
    assert str(table).splitlines()[-1] == "| a\\|b c |"


def test_unknown_column_names_the_columns(sales: TableView) -> None:
    with pytest.raises(TemplateError) as info:
        render("{{ t.revenue }}", {"t": sales})
    assert "revenue" in info.value.message


@pytest.mark.parametrize(
    "source",
    [
        "{{ ''.__class__.__mro__ }}",
        "{{ x.__globals__ }}",
        "{{ x.__code__ }}",
        "{{ ().__class__.__base__.__subclasses__() }}",
        "{{ t._rows }}",
    ],
)
def test_sandbox_escapes_give_a_clear_template_error(source: str, sales: TableView) -> None:
    def helper() -> None:
        return None

    context: dict[str, Any] = {"x": helper, "t": sales}
    with pytest.raises(TemplateError) as info:
        render(source, context)
    assert "not allowed" in info.value.message or "sandbox" in info.value.message
    with pytest.raises(TemplateError):
        evaluate(source, context)


def test_sandbox_blocks_format_string_escape() -> None:
    with pytest.raises(TemplateError):
        render("{{ '{0.__class__}'.format(x) }}", {"x": 1})


def test_evaluate_keeps_type_of_single_expression(sales: TableView) -> None:
    assert evaluate("{{ t.amount }}", {"t": sales}) == [10, 20.5, None]
    assert evaluate("  {{ 1 + 2 }} ", {}) == 3
    assert evaluate("{{ [1, 'a'] }}", {}) == [1, "a"]
    assert evaluate("{{ t }}", {"t": sales}) is sales
    assert evaluate("{{ n }} items", {"n": 3}) == "3 items"
    assert evaluate("plain", {}) == "plain"


def test_evaluate_undefined_is_an_error() -> None:
    with pytest.raises(TemplateError, match="undefined"):
        evaluate("{{ nothing }}", {})


def test_evaluate_condition_bare_and_wrapped() -> None:
    assert evaluate_condition("x > 3", {"x": 4}) is True
    assert evaluate_condition("{{ x > 3 }}", {"x": 2}) is False
    with pytest.raises(TemplateError):
        evaluate_condition("y > 3", {})


def test_referenced_names_from_the_ast() -> None:
    names = referenced_names(
        "{% for r in rows %}{{ r.x }}{{ loop.index }}{% endfor %}{% set k = 1 %}{{ k }}{{ other }}"
    )
    assert names == {"rows", "other"}
    assert referenced_names("no braces") == frozenset()
    with pytest.raises(TemplateError, match="syntax error"):
        referenced_names("{% if %}")


def test_render_type_errors_are_template_errors() -> None:
    with pytest.raises(TemplateError, match="cannot render"):
        render("{{ a + b }}", {"a": 1, "b": "x"})


def test_columns_named_like_the_view_api_are_columns() -> None:
    table = TableView(["region", "rows", "columns"], [("EU", 5, 2), ("US", 7, 3)])
    context = {"t": table}
    assert (
        render("{{ t.rows }} {{ t.columns[1] }} {{ t.region }}", context) == "[5, 7] 3 ['EU', 'US']"
    )
    assert evaluate("{{ t.rows }}", context) == [5, 7]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("{% if x > 15 %}big{% else %}small{% endif %}", "small"),
        ("{{ x < 3 }}", "True"),
        ("{{ x >= 0 }}", "False"),
        ("{{ 0 > x }}", "True"),
    ],
)
def test_none_orders_below_numbers_like_oxy(source: str, expected: str) -> None:
    assert render(source, {"x": None}) == expected


def test_ordering_none_in_conditions_and_other_type_errors() -> None:
    assert evaluate_condition("x > 3", {"x": None}) is False
    assert render("{{ x > 15 }}", {"x": 20}) == "True"
    with pytest.raises(TemplateError, match="not supported"):
        render("{{ 'a' > 1 }}", {})


def test_a_missing_column_or_key_lists_what_there_is() -> None:
    table = TableView(["region", "revenue"], [("EU", 1.0)])
    with pytest.raises(TemplateError) as column:
        render("{{ rev.revenu[0] }}", {"rev": table})
    assert "no column 'revenu'; did you mean 'revenue'? (columns: region, revenue)" in str(
        column.value
    )
    with pytest.raises(TemplateError) as key:
        render("{{ child.sumary }}", {"child": {"orders": 1, "summary": 2}})
    assert "no 'sumary' in this mapping; did you mean 'summary'? (it has: orders, summary)" in (
        str(key.value)
    )


def test_the_number_filter_separates_thousands_and_fixes_decimals() -> None:
    from accord.engine.render import number

    assert number(763888.75) == "763,888.75" and number(1200) == "1,200"
    assert number(763888.75, 0) == "763,889" and number(-1234.5, 2) == "-1,234.50"
    assert number("1234.5", 1, " ") == "1 234.5"  # a number in text, another separator
    assert number("n/a") == "n/a" and number(None) == "None"  # not a number: as it is
    assert number(float("inf")) == "inf" and number(float("nan")) == "nan"
