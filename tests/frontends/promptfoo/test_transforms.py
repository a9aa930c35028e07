"""promptfoo's transforms in accord: an assertion's `transform` and a test's
`options.transform` (or `postprocess`), JavaScript run on node, each on a config written for
the test and, where promptfoo 0.118 is installed, compared with promptfoo's verdicts (see
test_differential.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import trust_project
from tests.evals.conftest import accord
from tests.frontends.promptfoo.harness import PROMPTFOO, results, run_promptfoo, verdicts

# An assertion's transform (assertions/index.ts runAssertion, util/transform.ts): JavaScript
# on the output before the check, inline (one line returned, several a body) or from a file
TRANSFORMS = """
prompts: ['{"city": "{{city}}", "people": {{n}}}']
providers: [echo]
tests:
  - vars: {city: Oslo, n: 700000}
    assert:
      - type: equals
        value: oslo
        transform: JSON.parse(output).city.toLowerCase()
      - type: javascript
        value: output > 1000
        transform: |
          const data = JSON.parse(output);
          return data.people;
      - type: contains
        value: Oslo
        transform: output.toUpperCase()
      - type: equals
        value: '3'
        transform: file://words.js
      - type: contains-all
        value: [city, people]
        transform: 'JSON.parse(output)'
        metric: shape
  - vars: {city: Bergen, n: 5}
    assert:
      - type: javascript
        value: output > 1000
        transform: JSON.parse(output).people
"""


@pytest.mark.reference
@pytest.mark.skipif(shutil.which("node") is None, reason="transforms run on node")
def test_an_assertions_transform_is_what_it_checks_as_in_promptfoo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.yml").write_text("")
    (tmp_path / "words.js").write_text(
        "module.exports = (output, context) => String(context.vars.city.length + 1);\n"
    )
    (tmp_path / "promptfooconfig.yaml").write_text(TRANSFORMS)
    monkeypatch.chdir(tmp_path)
    trust_project(Path.cwd())  # inline code, or a program of the PATH: the test's own file
    run = accord("eval", "-c", "promptfooconfig.yaml", "-o", "accord.json", "-q")
    assert run.exit_code == 1, run.stderr
    mine = results(tmp_path / "accord.json")
    # Oslo: equals (lowercased), javascript (700000 > 1000), contains fails on OSLO,
    # equals "5" from the file fails on "3", contains-all on the parsed object's JSON
    assert [(r["success"], r["score"]) for r in mine] == [(False, 0.6), (False, 0.0)]
    assert mine[0]["namedScores"] == {"shape": 1.0}
    if PROMPTFOO.exists():
        run_promptfoo(tmp_path, "promptfoo.json")
        assert verdicts(tmp_path / "accord.json") == verdicts(tmp_path / "promptfoo.json")


def test_a_transform_in_python_is_refused_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "config.yml").write_text("")
    (tmp_path / "t.py").write_text("def get_transform(output, context):\n    return output\n")
    (tmp_path / "promptfooconfig.yaml").write_text("""prompts: [hi]
providers: [echo]
tests:
  - assert:
      - {type: contains, value: hi, transform: 'file://t.py'}
""")
    run = accord("eval", "-c", str(tmp_path / "promptfooconfig.yaml"), "-q")
    assert run.exit_code == 2
    assert "promptfooconfig.yaml:5" in run.stderr
    assert "accord runs JavaScript transforms only" in run.stderr


@pytest.mark.reference
@pytest.mark.skipif(shutil.which("node") is None, reason="transforms run on node")
def test_a_tests_transform_comes_before_each_assertions_own_as_in_promptfoo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # evaluator.ts runEval: the test's options.transform (or postprocess) changes the output
    # every assertion then checks; an assertion's own transform applies after it
    (tmp_path / "config.yml").write_text("")
    (tmp_path / "promptfooconfig.yaml").write_text("""prompts: ['  Harbour {{n}}  ']
providers: [echo]
tests:
  - vars: {n: 7}
    options: {transform: output.trim()}
    assert:
      - {type: equals, value: Harbour 7}
      - {type: equals, value: HARBOUR 7, transform: output.toUpperCase()}
      - {type: starts-with, value: ' '}
  - vars: {n: 8}
    options: {postprocess: "output.trim().split(' ').length"}
    assert:
      - {type: javascript, value: output === 2}
""")
    monkeypatch.chdir(tmp_path)
    trust_project(Path.cwd())  # inline code, or a program of the PATH: the test's own file
    run = accord("eval", "-c", "promptfooconfig.yaml", "-o", "accord.json", "-q")
    assert run.exit_code == 1, run.stderr
    mine = results(tmp_path / "accord.json")
    assert [(r["success"], round(r["score"], 4)) for r in mine] == [(False, 0.6667), (True, 1.0)]
    # the results hold the test transform's result as the response's output (runEval sets
    # processedResponse.output), a number where it returned one
    assert [r["response"]["output"] for r in mine] == ["Harbour 7", 2]
    if PROMPTFOO.exists():
        run_promptfoo(tmp_path, "promptfoo.json")
        assert verdicts(tmp_path / "accord.json") == verdicts(tmp_path / "promptfoo.json")
        theirs = results(tmp_path / "promptfoo.json")
        assert [r["response"]["output"] for r in theirs] == ["Harbour 7", 2]
