"""A promptfoo config pays at start only for the assertions it uses: the JSON-schema and
Levenshtein libraries load when an `is-json` schema or a `levenshtein` is evaluated (B13 runs
accord on promptfoo's config against a 1.0 s target)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.evals.conftest import accord

# the whole `accord eval` in one fresh interpreter, then which libraries it loaded
PROGRAM = """
import sys
from accord.cli import main
try:
    main(["eval", "-c", "promptfooconfig.yaml", "-q", "--cache", "off"])
except SystemExit as exc:
    print("exit", exc.code)
print("loaded", sorted(m for m in ("jsonschema", "rapidfuzz") if m in sys.modules))
kinds = ("graded", "context", "measures", "scripts", "structure", "agentv")
print("modules", sorted(k for k in kinds
                        if f"accord.tasks.suites.frontends.promptfoo.asserts.{k}" in sys.modules))
"""


def run_fresh(folder: Path) -> str:
    done = subprocess.run([sys.executable, "-c", PROGRAM], cwd=folder, capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip
    return done.stdout


def test_a_config_without_schemas_or_distances_does_not_load_their_libraries(
    tmp_path: Path,
) -> None:
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: ['{{x}}']\nproviders: [echo]\n"
        "tests:\n  - vars: {x: hello}\n    assert: [{type: contains, value: hell}]\n"
    )
    out = run_fresh(tmp_path)
    assert "exit 0" in out and "loaded []" in out, out
    # nor the modules of assertion types it does not use
    assert "modules []" in out, out


@pytest.mark.slow
def test_schemas_and_distances_still_judge_when_used(tmp_path: Path) -> None:
    (tmp_path / "promptfooconfig.yaml").write_text("""
prompts: ['{{x}}']
providers: [echo]
tests:
  - vars: {x: '{"a": 1}'}
    assert:
      - {type: is-json, value: {type: object, required: [a]}}
      - {type: levenshtein, value: '{"a": 2}', threshold: 1}
  - vars: {x: '{"b": 1}'}
    assert:
      - {type: is-json, value: {type: object, required: [a]}}
  - vars: {x: 'abcdef'}
    assert:
      - {type: levenshtein, value: 'uvwxyz', threshold: 2}
""")
    out = run_fresh(tmp_path)
    assert "exit 1" in out and "loaded ['jsonschema', 'rapidfuzz']" in out, out
    run = accord("eval", tmp_path / "promptfooconfig.yaml", "-o", tmp_path / "out.json")
    assert run.exit_code == 1
    found = json.loads((tmp_path / "out.json").read_text())["results"]["results"]
    verdicts = {r["testIdx"]: r["success"] for r in found}
    assert verdicts == {0: True, 1: False, 2: False}


def test_every_assertion_type_is_declared_once_at_the_class_that_computes_it() -> None:
    # base.TYPES is the one declaration of each type (its module is loaded on first use):
    # each names the class that computes it, and every assertion class of those modules is
    # named there
    import importlib
    import inspect

    from accord.tasks.suites.frontends.promptfoo.asserts import base, building

    assert len(building.supported_types()) == len(base.TYPES)
    declared = set()
    for kind, where in base.TYPES.items():
        cls = base.PROMPTFOO.get(kind)
        assert f"{cls.__module__}:{cls.__name__}" == f"{base.__package__}.{where}"
        declared.add(cls)
    for module in {where.partition(":")[0] for where in base.TYPES.values()}:
        found = importlib.import_module(f"{base.__package__}.{module}")
        classes = [
            c
            for _, c in inspect.getmembers(found, inspect.isclass)
            if issubclass(c, base.PromptfooAssertion) and c.__module__ == found.__name__
        ]
        leaves = {c for c in classes if not any(o is not c and issubclass(o, c) for o in classes)}
        assert leaves <= declared, leaves - declared


def test_a_plain_template_renders_as_jinja_renders_it() -> None:
    # names holding text are put in without Jinja; anything else goes through it, and both
    # read the same
    from accord.tasks.suites.frontends.promptfoo import templating

    context = {"a": "x", "b": "", "n": 3, "none": "shadowed", "env": {"k": "v"}}
    sources = [
        "{{a}} and {{ b }}!",
        "{{ missing }}.",
        "{{n}}",
        "{{ true }}",
        "{{ none }}",
        "{ {{a}} }",
        "{{a}}}",
        "{{ range }}",
        "{{ env }}",
        "{{a}}{{a}}",
        "a\n{{a}}\n",
    ]
    for source in sources:
        direct = templating.environment().from_string(source).render(context)
        assert templating.render(source, context) == direct, source
