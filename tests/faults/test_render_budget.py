"""The render budget: a template that loops for minutes or builds gigabytes stops with a clear
error instead of stalling the run (each of these ran for minutes or allocated gigabytes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from accord.cli import main
from accord.engine.errors import AccordError
from accord.engine.render import render
from tests.bounds import PROCESS_SECONDS, as_from_a_terminal

BOMBS = {
    "center": ("{{ 'a'|center(1000000000) }}", "center would make a value"),
    "percent format": ("{{ '%0999999999d'|format(1) }}", "format: a width or precision"),
    "percent operator": ("{{ '%0999999999d' % 1 }}", "'%' formatting: a width"),
    "str.format": ("{{ '{:>999999999}'.format(1) }}", "str.format: a width or precision"),
    "str.format nested": ("{{ '{:>{}}'.format(1, 999999999) }}", "width taken from an argument"),
    "tojson": ("{{ {'a': 1}|tojson(indent=100000000) }}", "tojson: an indent"),
    "replace": (
        "{% set s = 'aaaaaaaaaa' %}" + "{{ s" + "|replace('a', s)" * 8 + " }}",
        "replace would make a value",
    ),
    "lipsum": ("{{ lipsum(1000, false, 1000, 100000) }}", "lipsum would make a value"),
    "concat": (
        "{% set ns = namespace(s='ab') %}{% for i in range(60) %}"
        "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
        "joining text with '~' would make",
    ),
    "plus": (
        "{% set ns = namespace(s='ab') %}{% for i in range(60) %}"
        "{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s }}",
        "'+' would make a value",
    ),
    "indent": ("{{ 'x'|indent(999999999) }}", "indent would make a value"),
    "recursion": ("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "recursion"),
    "loop": (
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "took longer than 1 s (the render budget)",
    ),
}


@pytest.mark.parametrize("name", list(BOMBS))
def test_a_bomb_stops_with_a_clear_error(name: str) -> None:
    source, message = BOMBS[name]
    with pytest.raises(AccordError) as caught:
        render(source, {}, seconds=1)
    assert message in str(caught.value)


def test_ordinary_templates_are_untouched() -> None:
    source = (
        "{{ 'Order 1234567890: %s'|format('x') }} {{ '{:>5}'.format('y') }} "
        "{{ 'ab'|center(6) }}|{{ [1, 2] + [3] }} {{ 'a' ~ 'b' }} {{ {'k': 1}|tojson(indent=2) }}"
    )
    assert render(source, {}) == ('Order 1234567890: x     y   ab  |[1, 2, 3] ab {\n  "k": 1\n}')


def test_a_task_timeout_bounds_its_render(tmp_path: Path) -> None:
    # it used to succeed after 13 s: the render ran on the event loop past the timeout
    path = tmp_path / "w.workflow.yml"
    path.write_text(
        "tasks:\n  - name: slow\n    type: formatter\n    timeout: 1\n"
        "    template: '{% for i in range(100000) %}{% for j in range(100000) %}"
        "{% endfor %}{% endfor %}done'\n"
    )
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 1
    assert "took longer than 1 s (the render budget)" in result.stderr


def test_sigterm_stops_a_long_render(tmp_path: Path) -> None:
    # SIGTERM used to wait for the render to end (615 s in one trial)
    import signal
    import subprocess
    import sys

    path = tmp_path / "w.workflow.yml"
    path.write_text(
        "tasks:\n  - name: slow\n    type: formatter\n"
        "    template: '{% for i in range(100000) %}{% for j in range(100000) %}"
        "{% endfor %}{% endfor %}done'\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "accord.cli", "--log-level", "debug", "--log-format", "json",
         "run", str(path), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True, preexec_fn=as_from_a_terminal,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        for line in process.stderr:  # the render starts once its task has started
            if '"task_started"' in line:
                break
        else:
            raise AssertionError("the run ended before its task started")
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=PROCESS_SECONDS)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 143
    assert "template rendering stopped: the run received SIGTERM" in err
