"""Templates that try to leave the Jinja sandbox, and SQL values that try to leave their string.

An escape seen in the template text is refused by `accord validate` (exit 2); one assembled at
run time is refused by the sandbox (exit 1). Either way the message says it is not allowed in
the sandbox, and no traceback is printed.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from accord.cli import main
from accord.engine.render import render

ESCAPES = [
    "{{ ''.__class__.__mro__ }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ cycler.__init__.__globals__ }}",
    "{{ joiner.__init__.__globals__.os }}",
    "{{ namespace.__init__.__globals__ }}",
    "{{ lipsum.__globals__['os'] }}",
    "{{ self.__dict__ }}",
    "{{ self._TemplateReference__context }}",
    "{{ x.__globals__ }}",
    "{{ range.__subclasses__ }}",
    "{{ now.__code__ }}",
    "{{ x['__class__'] }}",
    "{{ x | attr('__class__') }}",
    "{{ x | attr('__cl' ~ 'ass__') }}",
    "{{ x['__cl' ~ 'ass__'] }}",
    # folded though an operand is no constant: a short-circuit, a branch never taken
    "{{ x['__class__' if true else x] }}",
    "{{ x[(1 < 0 < x) or '__class__'] }}",
    "{% set c = x.__class__ %}{{ c }}",
    "{{ '{0.__class__}'.format(1) }}",
    "{{ '{0.__class__.__init__.__globals__}'.format(x) }}",
    "{{ '{a._TemplateReference__context}'.format_map({'a': self}) }}",
]


def run_cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def formatter_workflow(tmp_path: Path, template: str, variables: str = "  x: hello\n") -> Path:
    path = tmp_path / "escape.workflow.yml"
    path.write_text(
        f"variables:\n{variables}tasks:\n  - name: sneaky\n    type: formatter\n"
        f"    template: {json.dumps(template)}\n",
        encoding="utf-8",
    )
    return path


def assert_refused(result: Any, code: int) -> None:
    assert result.exit_code == code, result.output
    assert "not allowed" in result.stderr and "sandbox" in result.stderr, result.stderr
    assert "Traceback" not in result.output
    assert "<class" not in result.output and "<module" not in result.output


@pytest.mark.parametrize("template", ESCAPES)
def test_escape_in_the_template_text_is_refused_at_validate(tmp_path: Path, template: str) -> None:
    path = formatter_workflow(tmp_path, template)
    result = run_cli("validate", str(path))
    assert_refused(result, 2)
    assert "escape.workflow.yml:6" in result.stderr  # names the line of the template


@pytest.mark.parametrize(
    ("template", "variables"),
    [
        ("{{ x | attr(n) }}", "  x: hello\n  n: __class__\n"),
        ("{{ x[n] }}", "  x: hello\n  n: __class__\n"),
        ("{{ x | attr(n ~ 'ass__') }}", "  x: hello\n  n: __cl\n"),
        ("{{ fmt.format(x) }}", "  x: hello\n  fmt: '{0.__class__}'\n"),
        ("{{ fmt.format(self) }}", "  fmt: '{0._TemplateReference__context}'\n"),
        ("{{ (x | attr(n)) | attr(n) }}", "  x: hello\n  n: __globals__\n"),
    ],
)
def test_escape_assembled_at_run_time_is_refused_by_the_sandbox(
    tmp_path: Path, template: str, variables: str
) -> None:
    path = formatter_workflow(tmp_path, template, variables)
    assert run_cli("validate", str(path)).exit_code == 0  # nothing to see statically
    result = run_cli("run", str(path), "--format", "json")
    assert_refused(result, 1)
    doc = json.loads(result.stdout)
    assert doc["tasks"][0]["task"] == "sneaky" and doc["tasks"][0]["status"] == "failed"


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{{ 2 ** (10 ** 9) }}", "too large"),
        ("{{ 'x' * 10 ** 12 }}", "too large"),
        ("{{ [0] * n }}", "too large"),
        ("{{ range(10 ** 9) | list | length }}", "Range too big"),
        ("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "RecursionError"),
    ],
)
def test_resource_bombs_fail_fast_with_a_message(
    tmp_path: Path, template: str, message: str
) -> None:
    path = formatter_workflow(tmp_path, template, "  n: 100000000000\n")
    result = run_cli("run", str(path))
    assert result.exit_code == 1, result.output
    assert message in result.stderr and "sneaky" in result.stderr
    assert "Traceback" not in result.output


def test_ordinary_templates_still_work(tmp_path: Path) -> None:
    template = (
        "{{ x | upper }} {{ '{0}-{1}'.format(x, 2) }} {{ 'ab' * 2 }} {{ 2 ** 10 }} "
        "{{ [1, 2] | sum }} {{ x[0] }} {{ {'k': 1}['k'] }}"
    )
    path = formatter_workflow(tmp_path, template)
    result = run_cli("run", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["outputs"]["sneaky"] == "HELLO hello-2 abab 1024 3 h 1"


# --- sqlquote ------------------------------------------------------------------------------

SALES = "region,amount\nEU,10\nUS,20\nEU,5\n"


def sql_project(tmp_path: Path, quoting: str) -> Path:
    (tmp_path / ".db").mkdir()
    (tmp_path / ".db" / "sales.csv").write_text(SALES)
    path = tmp_path / "q.workflow.yml"
    path.write_text(
        "variables:\n  region: EU\ntasks:\n  - name: q\n    type: execute_sql\n"
        f'    sql_query: "SELECT COUNT(*) AS n FROM sales WHERE region = {quoting}"\n',
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    "value",
    [
        "EU' OR '1'='1",
        "EU' OR 1=1 --",
        "x'; DROP TABLE sales; --",
        "EU'' OR ''1''=''1",
        "\\' OR 1=1 --",
        "EU'/*",
    ],
)
def test_sqlquote_keeps_a_value_inside_its_string(tmp_path: Path, value: str) -> None:
    path = sql_project(tmp_path, "{{ region | sqlquote }}")
    result = run_cli("run", str(path), "--format", "json", "-v", f"region={value}")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["outputs"]["q"] == [{"n": 0}]  # matched as a plain string
    plain = run_cli("run", str(path), "--format", "json", "-v", "region=EU")
    assert json.loads(plain.stdout)["outputs"]["q"] == [{"n": 2}]


def test_without_sqlquote_the_same_value_breaks_out(tmp_path: Path) -> None:
    # the control: the injection above is real, and sqlquote is what stops it
    path = sql_project(tmp_path, "'{{ region }}'")
    result = run_cli("run", str(path), "--format", "json", "-v", "region=EU' OR '1'='1")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["outputs"]["q"] == [{"n": 3}]


@settings(max_examples=300, deadline=None, database=None)
@seed(20261121)
@given(value=st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"])))
def test_sqlquote_round_trips_any_text_through_duckdb_and_sqlite(value: str) -> None:
    sql = render("SELECT {{ v | sqlquote }} AS v", {"v": value})
    assert duckdb.sql(sql).fetchall() == [(value,)]
    with sqlite3.connect(":memory:") as conn:
        assert conn.execute(sql).fetchall() == [(value,)]
