"""Hostile input: random and mutated YAML fed to the loader, the compiler and the config loader.

Every outcome must be a result or an `AccordError` (which the CLI prints as a message, exit 2);
any other exception is a crash a user would see as a traceback. Inputs: random YAML-flavoured
text, random structures built from the real field names, and real workflow, agent and config
files (workflows/ and shared/oxy-corpus) with lines deleted, duplicated, swapped, re-indented,
characters inserted, scalars replaced by values of other types, and deep nesting.

The number of examples comes from ACCORD_FUZZ_EXAMPLES (in total over the tests here; 300 by
default, 10,000 in CI through `make test`). Hypothesis runs derandomized from a fixed seed with
no example database, so a run is reproducible and a failure prints the input that caused it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from accord.engine.compile import compile_file
from accord.engine.errors import AccordError
from accord.engine.loader import load_config, load_workflow
from accord.engine.project import load_project
from accord.engine.runner import compile_workflow

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "oxy-corpus"
if not CORPUS.is_dir():  # CI clones main with shared/ beside it
    CORPUS = Path("/work/shared/oxy-corpus")
SEED = 20261121
TOTAL = int(os.environ.get("ACCORD_FUZZ_EXAMPLES", "300"))
# share of the examples per test: the mutation tests reach the compiler and cost the most
SHARES = {"text": 0.25, "structures": 0.15, "workflows": 0.35, "configs": 0.1, "agents": 0.15}


def examples(kind: str) -> int:
    return max(10, round(TOTAL * SHARES[kind]))


def fuzz_settings(kind: str) -> settings:
    return settings(
        max_examples=examples(kind),
        deadline=None,
        database=None,
        derandomize=False,
        print_blob=True,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
            HealthCheck.function_scoped_fixture,
            HealthCheck.large_base_example,
        ],
    )


@dataclass
class Tally:
    """Counts the inputs one test fed in, and how they ended."""

    examples: int = 0
    inputs: int = 0
    accepted: int = 0
    rejected: int = 0

    def feed(self, call: Callable[[], object]) -> None:
        """Run `call`: a result or an `AccordError` are fine; anything else propagates."""
        self.inputs += 1
        try:
            call()
        except AccordError as exc:
            assert str(exc).strip(), "an AccordError must carry a message"
            self.rejected += 1
        else:
            self.accepted += 1


@pytest.fixture
def tally(record_property: Callable[[str, object], None]) -> Iterator[Tally]:
    counts = Tally()
    yield counts
    # summed over every test (and xdist worker) by tests/faults/conftest.py
    record_property("fuzz_examples", counts.examples)
    record_property("fuzz_inputs", counts.inputs)
    print(
        f"fuzzed {counts.examples} examples, {counts.inputs} inputs: {counts.accepted} loaded, "
        f"{counts.rejected} refused"
    )


# --- the corpus of real files -------------------------------------------------------------


def corpus_files(pattern: str) -> list[Path]:
    roots = [REPO / "workflows", CORPUS]
    found = sorted(p for root in roots if root.is_dir() for p in root.rglob(pattern))
    return [p for p in found if ".accord" not in p.parts]


WORKFLOWS = [
    p
    for suffix in ("*.workflow.yml", "*.procedure.yml", "*.automation.yml")
    for p in corpus_files(suffix)
]
AGENTS = corpus_files("*.agent.yml")
CONFIGS = corpus_files("config.yml")


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Path]:
    """Copies of every project of the corpus: original folder -> its copy."""
    base = tmp_path_factory.mktemp("fuzz-projects")
    copies: dict[Path, Path] = {}
    for config in CONFIGS:
        target = base / f"p{len(copies)}"
        shutil.copytree(config.parent, target, ignore=shutil.ignore_patterns(".accord"))
        copies[config.parent] = target
    return copies


def copy_of(projects: dict[Path, Path], original: Path) -> Path:
    """Where `original` lives in the copied projects (a path inside the nearest copied root)."""
    for root in sorted(projects, key=lambda r: len(r.parts), reverse=True):
        if original.is_relative_to(root):
            return projects[root] / original.relative_to(root)
    raise AssertionError(f"{original} is in no copied project")


# --- strategies -----------------------------------------------------------------------------

YAML_CHARS = "abcxyz_019 :-?[]{},#&*!|>'\"%@`\n\t\\./<=$~\u00e9\u2603\U0001f600\x85\u2028\ufeff"
JINJA = [
    "{{ x }}",
    "{{ a.b.c }}",
    "{% for r in t %}{{ r }}{% endfor %}",
    "{{ '' ~ 1 }}",
    "{% if %}",
    "{{ }}",
    "{{ x | nosuchfilter }}",
    "{{ (((((((((((((((((((((((((((((((1)))))))))))))))))))))))))))))) }}",
    "{{ " + "(" * 400 + "1" + ")" * 400 + " }}",
    "{{ " + "[" * 300 + "]" * 300 + " }}",
    "{% " + "if x %}" * 60 + "{% endif %}" * 60,
    "{{ ''.__class__ }}",
    "{{ now(fmt='%Y') }}",
    "{% raw %}{{{% endraw %}",
    "{{ x }",
    "{#",
]
FIELDS = [
    "name",
    "type",
    "tasks",
    "template",
    "prompt",
    "model",
    "agent_ref",
    "depends_on",
    "sql_query",
    "sql_file",
    "database",
    "values",
    "concurrency",
    "conditions",
    "if",
    "else",
    "src",
    "variables",
    "retry",
    "attempts",
    "backoff",
    "timeout",
    "cache",
    "enabled",
    "path",
    "export",
    "format",
    "consistency_run",
    "consistency_prompt",
    "tests",
    "task_ref",
    "n",
    "execution",
    "max_concurrency",
    "data",
    "chart",
    "x",
    "y",
    "default",
    "enum",
    "models",
    "databases",
    "defaults",
    "dataset",
    "key_var",
    "password_var",
    "api_base",
    "max_retries",
    "<<",
]
TYPES = [
    "formatter",
    "agent",
    "execute_sql",
    "loop_sequential",
    "workflow",
    "conditional",
    "visualize",
    "duckdb",
    "sqlite",
    "postgres",
    "consistency",
    "semantic_query",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(JINJA + TYPES + FIELDS),
)
keys = st.one_of(st.sampled_from(FIELDS), st.text(max_size=8), st.integers(-3, 3), st.booleans())
structures = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(keys, inner, max_size=6)),
    max_leaves=40,
)


@st.composite
def workflow_like(draw: st.DrawFn) -> Any:
    """A mapping shaped roughly like a workflow or a config, its leaves anything."""
    task = st.dictionaries(st.sampled_from(FIELDS), structures, max_size=7) | st.fixed_dictionaries(
        {"name": st.sampled_from(["a", "b", "c", "1x", ""]), "type": st.sampled_from(TYPES)},
        optional={f: structures for f in FIELDS[2:20]},
    )
    top = draw(st.dictionaries(st.sampled_from(FIELDS), structures, max_size=4))
    if draw(st.booleans()):
        top["tasks"] = draw(st.lists(task, max_size=5))
    return top


def dump(data: Any, flow: bool) -> str:
    try:
        return yaml.safe_dump(data, default_flow_style=flow, allow_unicode=True, sort_keys=False)
    except (yaml.YAMLError, ValueError, TypeError):
        return repr(data)


# --- mutations --------------------------------------------------------------------------------

_SCALAR_LINE = re.compile(r"^(?P<head>\s*(?:- )?[A-Za-z_]+:\s*)(?P<value>\S.*)$")
REPLACEMENTS = [
    "null",
    "~",
    "true",
    "no",
    "0",
    "-1",
    "1e400",
    ".nan",
    "-.inf",
    "9" * 5000,
    "0x1F",
    "0o17",
    "2024-01-15",
    "2001-12-14t21:59:43.10-05:00",
    "[]",
    "{}",
    "[1, [2, [3]]]",
    "{a: {b: {c: d}}}",
    "&anchor x",
    "*anchor",
    "*undefined_alias",
    "!!binary aGVsbG8=",
    "!!python/object:os.system {}",
    "!!set {a, b}",
    "!!omap [a: 1]",
    "!custom tag",
    "|\n  block\n  text",
    '"unterminated',
    "'it''s'",
    "{{ task_output }}",
    "{{ x.__class__ }}",
    "{% for %}",
    '"\\ud800"',
    "x" * 3000,
    "[" * 200 + "]" * 200,
    "{a: " * 120 + "1" + "}" * 120,
]


@st.composite
def mutated(draw: st.DrawFn, text: str) -> str:
    """`text` with one to four random mutations."""
    lines = text.splitlines()
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            lines = [""]
        i = draw(st.integers(0, len(lines) - 1))
        kind = draw(
            st.sampled_from(
                ["delete", "duplicate", "swap", "indent", "insert", "scalar", "nest", "truncate"]
            )
        )
        if kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "indent":
            change = draw(st.sampled_from(["  ", " ", "\t", "-", "dedent", "    "]))
            lines[i] = lines[i].lstrip() if change == "dedent" else change + lines[i]
        elif kind == "insert":
            at = draw(st.integers(0, len(lines[i])))
            junk = draw(st.text(alphabet=YAML_CHARS, min_size=1, max_size=6))
            lines[i] = lines[i][:at] + junk + lines[i][at:]
        elif kind == "scalar":
            match = _SCALAR_LINE.match(lines[i])
            quoted = [json.dumps(t) for t in JINJA]  # templates that reach Jinja's parser
            value = draw(st.sampled_from(REPLACEMENTS + quoted) | st.text(YAML_CHARS, max_size=12))
            if match is not None:
                lines[i] = match.group("head") + value
            else:
                lines.insert(i, "name: " + value)
        elif kind == "nest":
            depth = draw(st.sampled_from([5, 50, 99, 100, 101, 400]))
            match = _SCALAR_LINE.match(lines[i])
            if match is not None:
                lines[i] = match.group("head") + "[" * depth + match["value"] + "]" * depth
        else:
            lines = lines[:i]
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n", "\r\n"]))


# --- the tests ---------------------------------------------------------------------------------


@fuzz_settings("text")
@seed(SEED)
@given(text=st.text(alphabet=YAML_CHARS, max_size=300) | st.sampled_from(JINJA).map("t: ".__add__))
def test_random_text(tmp_path: Path, tally: Tally, text: str) -> None:
    tally.examples += 1
    workflow = tmp_path / "fuzz.workflow.yml"
    config = tmp_path / "config.yml"
    workflow.write_text(text, encoding="utf-8")
    config.write_text(text, encoding="utf-8")
    tally.feed(lambda: load_workflow(workflow))
    tally.feed(lambda: load_config(config))


@pytest.mark.slow
@fuzz_settings("structures")
@seed(SEED)
@given(data=workflow_like() | structures, flow=st.booleans())
def test_random_structures(tmp_path: Path, tally: Tally, data: Any, flow: bool) -> None:
    tally.examples += 1
    text = dump(data, flow)
    workflow = tmp_path / "fuzz.workflow.yml"
    workflow.write_text(text, encoding="utf-8")
    tally.feed(lambda: compile_file(workflow, tmp_path))
    config = tmp_path / "config.yml"
    config.write_text(text, encoding="utf-8")
    tally.feed(lambda: load_project(workflow))
    config.unlink()


@fuzz_settings("workflows")
@seed(SEED)
@given(data=st.data())
def test_mutated_workflows(projects: dict[Path, Path], tally: Tally, data: st.DataObject) -> None:
    original = data.draw(st.sampled_from(WORKFLOWS), label="file")
    text = data.draw(mutated(original.read_text(encoding="utf-8")), label="mutated")
    tally.examples += 1  # counted once drawn: an overrun draw is no example
    target = copy_of(projects, original).with_name("fuzzed." + original.name.split(".", 1)[1])
    target.write_text(text, encoding="utf-8")
    tally.feed(lambda: compile_workflow(target))


@fuzz_settings("agents")
@seed(SEED)
@given(data=st.data())
def test_mutated_agents(projects: dict[Path, Path], tally: Tally, data: st.DataObject) -> None:
    original = data.draw(st.sampled_from(AGENTS), label="file")
    text = data.draw(mutated(original.read_text(encoding="utf-8")), label="mutated")
    tally.examples += 1  # counted once drawn: an overrun draw is no example
    copied = copy_of(projects, original)
    root = next(r for o, r in projects.items() if original.is_relative_to(o))
    agent = copied.with_name(f"fuzzed{tally.inputs}.agent.yml")  # a new file: no cached spec
    agent.write_text(text, encoding="utf-8")
    workflow = root / "fuzzed_agent.workflow.yml"
    ref = agent.relative_to(root).as_posix()
    workflow.write_text(
        f"tasks:\n  - name: ask\n    type: agent\n    agent_ref: {ref}\n    prompt: hi\n",
        encoding="utf-8",
    )
    try:
        tally.feed(lambda: compile_workflow(workflow))
    finally:
        agent.unlink()


@fuzz_settings("configs")
@seed(SEED)
@given(data=st.data())
def test_mutated_configs(tmp_path: Path, tally: Tally, data: st.DataObject) -> None:
    original = data.draw(st.sampled_from(CONFIGS), label="file")
    text = data.draw(mutated(original.read_text(encoding="utf-8")), label="mutated")
    tally.examples += 1  # counted once drawn: an overrun draw is no example
    config = tmp_path / "config.yml"
    config.write_text(text, encoding="utf-8")
    workflow = tmp_path / "w.workflow.yml"
    workflow.write_text("tasks:\n  - name: a\n    type: formatter\n    template: x\n")
    tally.feed(lambda: load_config(config))
    tally.feed(lambda: compile_workflow(workflow))


def test_the_corpus_is_there() -> None:
    # the mutation tests are only as good as their seeds
    assert len(WORKFLOWS) >= 20 and len(AGENTS) >= 10 and len(CONFIGS) >= 5


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("tasks: &a [*a]\n", id="recursive-alias"),
        pytest.param("a: &a {b: *a}\ntasks: []\n", id="recursive-map-alias"),
        pytest.param("tasks: " + "[" * 5000 + "]" * 5000 + "\n", id="deep-list"),
        pytest.param("tasks: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n", id="deep-map"),
        pytest.param(
            "a: &a [x,x,x,x,x,x,x,x,x]\n"
            + "".join(
                f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n"
                for p, n in zip("abcdef", "bcdefg", strict=True)
            )
            + "tasks: *g\n",
            id="billion-laughs",
        ),
        pytest.param(
            "tasks:\n  - name: a\n    type: formatter\n    template: x\n"
            "    retry: {attempts: 3, backoff: .inf}\n",
            id="infinite-backoff",
        ),
        pytest.param(
            "tasks:\n  - name: a\n    type: formatter\n    template: x\n    timeout: .inf\n",
            id="infinite-timeout",
        ),
        pytest.param("tasks: 1" + "0" * 5000 + "\n", id="huge-int"),
        # found by the fuzzer: a filter name cut by an inserted character (`c|ommentary`)
        pytest.param(
            'tasks:\n  - name: a\n    type: formatter\n    template: "{{ c|ommentary }}"\n',
            id="unknown-filter",
        ),
        pytest.param(
            "tasks:\n  - name: a\n    type: formatter\n"
            '    template: "{% if 1 is nosuchtest %}x{% endif %}"\n',
            id="unknown-test",
        ),
    ],
)
def test_hostile_yaml_is_refused_quickly_with_a_message(tmp_path: Path, text: str) -> None:
    path = tmp_path / "hostile.workflow.yml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AccordError) as caught:
        compile_file(path, tmp_path)
    message = str(caught.value)
    assert "hostile.workflow.yml" in message
    assert "Traceback" not in message and "sys.set_int_max_str_digits" not in message
