"""Templates compiled at most once per process and not again on the next run: `accord run` in a
process of its own, with Jinja's code generator and Python's `compile` counted (a behaviour,
not a timing), and the cache in `.accord/templates/` planted, damaged and unwritable."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
import pytest
from jinja2 import meta
from jinja2.bccache import bc_magic

from accord.engine import render, template_cache
from accord.engine.template_walk import free_names
from tests.bounds import PROCESS_SECONDS

WriteFile = Callable[[str, str], Path]

# `accord run` with every call of Jinja's code generator and every `compile` of generated
# template code counted; the counts are a line of stderr
COUNTING = """
import builtins, json, sys
import jinja2.environment, jinja2.parser

counts = {"generate": 0, "compile": 0, "parse": 0}
generate, compile_ = jinja2.environment.generate, builtins.compile
parser_init = jinja2.parser.Parser.__init__

def counted_parser(self, *args, **kwargs):
    counts["parse"] += 1  # every parse of a template or an expression makes one
    parser_init(self, *args, **kwargs)

def counted_generate(*args, **kwargs):
    counts["generate"] += 1
    return generate(*args, **kwargs)

def counted_compile(source, filename, *args, **kwargs):
    # a template's module (not the one-line `raise` Jinja compiles to show a render error
    # at the template's line)
    if filename == "<template>" and "def root(" in str(source):
        counts["compile"] += 1
    return compile_(source, filename, *args, **kwargs)

jinja2.environment.generate = counted_generate
builtins.compile = counted_compile
jinja2.parser.Parser.__init__ = counted_parser

from accord.cli import main

try:
    main(sys.argv[1:], standalone_mode=True)
finally:
    sys.stderr.write("\\nCOUNTS " + json.dumps(counts) + "\\n")
"""

WORKFLOW = """
name: shapes
tasks:
  - name: a
    type: formatter
    template: "abc"
  - name: b
    type: formatter
    template: "{{ (a | length) + 1 if a else 0 }}"
  - name: same
    type: formatter
    template: "{{ (a | length) + 1 if a else 0 }}"
  - name: c
    type: loop_sequential
    values: "{{ [1, 2, 3] }}"
    tasks:
      - name: d
        type: formatter
        template: "{% if value %}{{ value * 2 }}{% endif %}-{{ b ~ '!' }}"
"""
OUTPUTS = {
    "a": "abc",
    "b": "4",
    "same": "4",
    "c": [{"d": "2-4!", "value": 1}, {"d": "4-4!", "value": 2}, {"d": "6-4!", "value": 3}],
}
# b and same share one text; the loop's values are one expression; d renders three times
# (each needs Jinja's compiler: a conditional; text and arithmetic alone are walked)
DISTINCT_COMPILED = 3


def run(
    path: Path, *args: str, user: str = "me"
) -> tuple[subprocess.CompletedProcess[str], dict[str, int]]:
    """`accord run` in a process of its own as `user` (whose secret for the cache's tags is
    kept under a cache home of its own, beside the project); Jinja's code generator and
    Python's `compile` of template code, counted."""
    done, counted = command("run", path, *args, user=user)
    del counted["parse"]
    return done, counted


def command(
    name: str, path: Path, *args: str, user: str = "me"
) -> tuple[subprocess.CompletedProcess[str], dict[str, int]]:
    """`accord NAME PATH ARGS...` counted as `run` says, and the templates parsed."""
    home = path.parent / f"cache-home-{user}"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "XDG_CACHE_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", COUNTING, name, str(path), *args],
        capture_output=True,
        text=True,
        timeout=PROCESS_SECONDS,
        env=env,
    )
    # the cache's writer may still report after the command returned (entries are written
    # by the time the process exits)
    [line] = [line for line in done.stderr.splitlines() if line.startswith("COUNTS ")]
    return done, json.loads(line.removeprefix("COUNTS "))


def outputs(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["outputs"]


def entries(root: Path) -> list[Path]:
    return sorted((root / ".accord" / "templates").glob("*.jinja"))


@pytest.fixture
def project(tmp_path: Path, write: WriteFile) -> Path:
    write("config.yml", "defaults: {}\n")
    return write("shapes.workflow.yml", WORKFLOW)


@pytest.mark.slow
def test_each_template_compiled_once_and_a_second_run_compiles_nothing(
    project: Path, tmp_path: Path
) -> None:
    first, counted = run(project, "--format", "json")
    assert outputs(first) == OUTPUTS
    # validation, dependency extraction and the run share one compiled template: 3 distinct
    # templates that need Jinja's compiler (the walked ones need none), each compiled once
    assert counted == {"generate": DISTINCT_COMPILED, "compile": DISTINCT_COMPILED}
    assert len(entries(tmp_path)) == DISTINCT_COMPILED

    second, counted = run(project, "--format", "json")
    assert outputs(second) == OUTPUTS
    assert counted == {"generate": 0, "compile": 0}


@pytest.mark.slow
def test_an_unchanged_workflow_parses_no_template_again(project: Path, tmp_path: Path) -> None:
    """Each template's free names, found when it was checked, are kept beside its code: the
    second run, and `accord validate` after it, parse nothing."""
    first, counted = command("run", project, "--format", "json")
    assert outputs(first) == OUTPUTS
    assert counted["parse"] > 0
    second, counted = command("run", project, "--format", "json")
    assert outputs(second) == OUTPUTS
    assert counted == {"generate": 0, "compile": 0, "parse": 0}
    checked, counted = command("validate", project)
    assert checked.returncode == 0, checked.stderr
    assert counted == {"generate": 0, "compile": 0, "parse": 0}


PLAIN = """
name: plain
tasks:
  - name: a
    type: formatter
    template: "abc"
  - name: b
    type: formatter
    template: "{{ a | upper }}-{{ a | length }}-{{ a[1] }}"
  - name: c
    type: formatter
    template: "{{ b | lower | truncate(20) }}"
"""


def test_plain_templates_are_built_from_their_kept_outline(
    tmp_path: Path, write: WriteFile
) -> None:
    """Text-and-expression templates are walked, never compiled; a second run builds them
    from the outline kept of each (plain data, tagged as code entries are) without parsing."""
    write("config.yml", "defaults: {}\n")
    path = write("plain.workflow.yml", PLAIN)
    expected = {"a": "abc", "b": "ABC-3-b", "c": "abc-3-b"}
    first, counted = command("run", path, "--format", "json")
    assert outputs(first) == expected
    assert counted["generate"] == 0 and counted["parse"] > 0
    assert (tmp_path / ".accord" / "templates" / "templates.data").is_file()
    second, counted = command("run", path, "--format", "json")
    assert outputs(second) == expected
    assert counted == {"generate": 0, "compile": 0, "parse": 0}


def test_validate_reads_the_cache_and_writes_nothing(project: Path, tmp_path: Path) -> None:
    checked, counted = command("validate", project)
    assert checked.returncode == 0, checked.stderr
    assert counted["parse"] > 0
    assert not (tmp_path / ".accord").exists()


BUNDLE_MAGIC = b"accord-template-data-1\n"  # engine/template_cache.py: magic, tag, payload


def data_key(kind: str, source: str) -> str:
    """The key of `source`'s data of `kind`: it hashes the fingerprint, the kind and the text
    (engine/template_cache.py TemplateCache.key)."""
    import hashlib

    text = f"{render._fingerprint()}\0{kind}\0{source}"
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize(
    ("bad", "refused"),
    [
        ("{{ x.__class__ }}", "access to '__class__' is not allowed in templates"),
        ("{{ nowhere }}", "nowhere"),
    ],
    ids=["sandbox", "undefined-name"],
)
def test_names_kept_for_another_template_are_not_used(
    tmp_path: Path, write: WriteFile, bad: str, refused: str
) -> None:
    """The kept data edited to give a template that would be refused (one escaping the
    sandbox, one naming no task) the names of a harmless one is not believed: the tag covers
    the whole of it, and only this user's accord can make one."""
    write("config.yml", "defaults: {}\n")
    good = "{{ x | length }}"
    path = write(
        "w.workflow.yml",
        f'tasks:\n  - {{name: x, type: formatter, template: "a"}}\n'
        f'  - {{name: y, type: formatter, template: "{good}"}}\n',
    )
    assert outputs(run(path, "--format", "json")[0]) == {"x": "a", "y": "1"}
    bundle = tmp_path / ".accord" / "templates" / "templates.data"
    data = bundle.read_bytes()
    assert data.startswith(BUNDLE_MAGIC)
    tag, payload = data[len(BUNDLE_MAGIC) : len(BUNDLE_MAGIC) + 32], data[len(BUNDLE_MAGIC) + 32 :]
    entries = marshal.loads(payload)
    entries[data_key("names", bad)] = entries[data_key("names", good)]
    bundle.write_bytes(BUNDLE_MAGIC + tag + marshal.dumps(entries))

    path.write_text(path.read_text().replace(good, bad))
    for name in ("validate", "run"):
        done, _ = command(name, path)
        assert done.returncode == 2, done.stdout + done.stderr
        assert refused in done.stdout + done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_an_entry_written_for_another_template_is_not_used(
    tmp_path: Path, write: WriteFile
) -> None:
    write("one/config.yml", "defaults: {}\n")
    write("two/config.yml", "defaults: {}\n")
    one = write(
        "one/w.workflow.yml",
        'tasks:\n  - {name: x, type: formatter, template: "{{ 6 * 7 if 1 else 0 }}"}\n',
    )
    two = write(
        "two/w.workflow.yml",
        'tasks:\n  - {name: x, type: formatter, template: "{{ 6 + 7 if 1 else 0 }}"}\n',
    )
    assert outputs(run(one, "--format", "json")[0]) == {"x": "42"}
    assert outputs(run(two, "--format", "json")[0]) == {"x": "13"}
    [planted], [target] = entries(tmp_path / "one"), entries(tmp_path / "two")
    target.write_bytes(planted.read_bytes())  # 6 * 7's code under the name of 6 + 7

    done, counted = run(two, "--format", "json")
    assert outputs(done) == {"x": "13"}
    assert counted == {"generate": 1, "compile": 1}  # refused, compiled again, rewritten
    assert target.read_bytes() != planted.read_bytes()
    assert run(two, "--format", "json")[1] == {"generate": 0, "compile": 0}


@pytest.mark.slow
@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # cut short while written
        lambda data: b"",
        lambda data: b"\x00garbage" * 40,
        lambda data: data[:20] + bytes(b ^ 1 for b in data[20:30]) + data[30:],  # the tag
        lambda data: data[:-10] + bytes(b ^ 1 for b in data[-10:]),  # the code
    ],
    ids=["truncated", "empty", "garbage", "tag", "code"],
)
def test_a_damaged_entry_is_a_miss_never_an_error(
    project: Path, tmp_path: Path, damage: Callable[[bytes], bytes]
) -> None:
    run(project, "--format", "json")
    bundle = tmp_path / ".accord" / "templates" / "templates.data"  # names and outlines
    for entry in [*entries(tmp_path), bundle]:
        entry.write_bytes(damage(entry.read_bytes()))

    done, counted = run(project, "--format", "json")
    assert outputs(done) == OUTPUTS
    assert "Traceback" not in done.stderr
    assert counted == {"generate": DISTINCT_COMPILED, "compile": DISTINCT_COMPILED}
    assert run(project, "--format", "json")[1] == {"generate": 0, "compile": 0}


@pytest.mark.slow
def test_an_entry_made_with_another_users_secret_is_not_used(project: Path) -> None:
    run(project, "--format", "json", user="someone-else")
    done, counted = run(project, "--format", "json")
    assert outputs(done) == OUTPUTS
    assert counted == {"generate": DISTINCT_COMPILED, "compile": DISTINCT_COMPILED}


@pytest.mark.slow
def test_a_planted_entry_carrying_code_never_runs(tmp_path: Path, write: WriteFile) -> None:
    """`.accord/` holds data, not code: an entry in Jinja's format whose code would write a
    file, put where the template's entry goes, is refused (its tag is not this user's)."""
    write("config.yml", "defaults: {}\n")
    path = write(
        "w.workflow.yml",
        'tasks:\n  - {name: x, type: formatter, template: "{{ 6 * 7 if 1 else 0 }}"}\n',
    )
    run(path)
    [entry] = entries(tmp_path)
    marker = tmp_path / "planted-code-ran"
    payload = marshal.dumps(compile(f"open({str(marker)!r}, 'w').close()", "<template>", "exec"))
    for tag in (entry.read_bytes()[len(bc_magic) : len(bc_magic) + 32], bytes(32)):
        entry.write_bytes(bc_magic + tag + payload)
        done, counted = run(path, "--format", "json")
        assert outputs(done) == {"x": "42"}
        assert counted == {"generate": 1, "compile": 1}
        assert not marker.exists()


def test_a_cache_that_cannot_be_written_is_reported_and_the_run_goes_on(
    project: Path, tmp_path: Path
) -> None:
    (tmp_path / ".accord").mkdir()
    (tmp_path / ".accord" / "templates").write_text("a file where the folder would go")
    done, _ = run(project, "--format", "json")
    assert outputs(done) == OUTPUTS
    assert done.stderr.count("template_cache_not_written") == 1, done.stderr


@pytest.mark.slow
def test_the_sandbox_refuses_unsafe_attributes_in_a_cached_template(
    tmp_path: Path, write: WriteFile
) -> None:
    write("config.yml", "defaults: {}\n")
    # the name reaches the template as data, so validation cannot see it: the compiled
    # code's `environment.getitem` must refuse it
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: key
            type: formatter
            template: "__class__"
          - name: peek
            type: formatter
            template: "{{ (key | length) ~ key[key] if key else '' }}"
        """,
    )
    for expected in ({"generate": 1, "compile": 1}, {"generate": 0, "compile": 0}):
        done, counted = run(path)
        assert counted == expected
        assert done.returncode == 1, done.stderr
        assert "access to '__class__' is not allowed in templates" in done.stdout + done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_the_render_budget_stops_a_cached_template(tmp_path: Path, write: WriteFile) -> None:
    write("config.yml", "defaults: {}\n")
    # ten billion empty iterations: only the budget's tick in every block stops them
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: spin
            type: formatter
            timeout: 1
            template: |-
              {% for i in range(100000) %}{% for j in range(100000) %}
              {% endfor %}{% endfor %}
        """,
    )
    for expected in ({"generate": 1, "compile": 1}, {"generate": 0, "compile": 0}):
        done, counted = run(path)
        assert counted == expected
        assert done.returncode == 1, done.stderr
        assert "template rendering took longer than 1 s" in done.stdout + done.stderr


def test_the_output_budget_stops_a_huge_render_from_a_cached_template(
    tmp_path: Path, write: WriteFile
) -> None:
    write("config.yml", "defaults: {}\n")
    path = write(
        "w.workflow.yml",
        """
        tasks:
          - name: huge
            type: formatter
            template: "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}"
        """,
    )
    for expected in ({"generate": 1, "compile": 1}, {"generate": 0, "compile": 0}):
        done, counted = run(path)
        assert counted == expected
        assert done.returncode == 1, done.stderr
        assert "the template's output would make a value of" in done.stdout + done.stderr


def _environment(**options: Any) -> jinja2.Environment:
    env = render.AccordSandbox(**options)
    env.filters.update(render.ENV.filters)
    return env


def test_the_key_changes_with_what_shapes_the_generated_code() -> None:
    base = template_cache.fingerprint(_environment())
    assert template_cache.fingerprint(_environment()) == base
    with_filter = _environment()
    with_filter.filters["shout"] = str.upper
    assert template_cache.fingerprint(with_filter) != base
    assert template_cache.fingerprint(_environment(trim_blocks=True)) != base
    assert template_cache.fingerprint(jinja2.Environment()) != base
    assert template_cache.fingerprint(_environment(), render_budget_file()) != base


def render_budget_file() -> str:
    from accord.engine import render_budget

    return render_budget.__file__


@pytest.mark.parametrize(
    "source",
    [
        "plain text",
        "{{ a }} and {{ b.c[0] | length }}",
        "{{ (t12 | length) + (t40 | length) }}",
        "{% if x > 3 %}{{ y ~ z }}{% else %}{{ w if v else u }}{% endif %}",
        "{{ range(3) | list }} {{ now() }} {{ d['k'] }} {{ [p, q] }} {{ {'k': r} }}",
        "{{ f(g, h=i) }} {{ j is defined }} {{ -k }} {{ not l }}",
        "{% set a = 1 %}{{ a + b }}",
        "{% for x in xs %}{{ x }}{{ loop.index }}{{ y }}{% endfor %}",
        "{% macro m(p) %}{{ p }}{{ q }}{% endmacro %}{{ m(1) }}",
        "{{ self }} {{ loop }} {{ caller }}",
        "{% with a = b %}{{ a }}{{ c }}{% endwith %}",
    ],
)
def test_free_names_from_the_tree_are_jinjas(source: str) -> None:
    env = render.ENV
    ast = env.parse(source)
    fast = free_names(env, ast)
    if fast is not None:
        assert fast == meta.find_undeclared_variables(env.parse(source))
    assert render.referenced_names(source) == meta.find_undeclared_variables(env.parse(source))


# `accord ARGS...` with every opening of a compiled template's file counted (a line of stderr)
OPENS = """
import json, os, sys

opened = []
real_open = os.open

def counted_open(path, *args, **kwargs):
    if str(path).endswith(".jinja"):
        opened.append(os.path.basename(str(path)))
    return real_open(path, *args, **kwargs)

os.open = counted_open

from accord.cli import main

try:
    main(sys.argv[1:])
finally:
    sys.stderr.write("\\nOPENED " + json.dumps(opened) + "\\n")
"""


def test_a_first_run_looks_for_no_file_of_a_plain_template(
    tmp_path: Path, write: WriteFile
) -> None:
    """A template checked in this process and found plain is built from its tree: no file of
    compiled code is looked for (a first run of 2,000 templates tried 2,000 opens)."""
    write("config.yml", "defaults: {}\n")
    path = write("plain.workflow.yml", PLAIN)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache-home")}
    done = subprocess.run(
        [sys.executable, "-c", OPENS, "run", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=PROCESS_SECONDS,
        env=env,
    )
    assert outputs(done) == {"a": "abc", "b": "ABC-3-b", "c": "abc-3-b"}
    [line] = [line for line in done.stderr.splitlines() if line.startswith("OPENED ")]
    assert json.loads(line.removeprefix("OPENED ")) == []
    assert (tmp_path / ".accord" / "templates" / "templates.data").is_file()
