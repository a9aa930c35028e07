"""promptfoo's python and javascript assertions (run in a subprocess) and assertion sets.
Expected results are promptfoo 0.118's: src/assertions/python.ts handlePython,
javascript.ts handleJavascript, index.ts runAssertions with assertionsResult.ts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from accord.engine.errors import ConfigError
from accord.tasks.evaluators.cases import Output
from accord.tasks.suites.frontends.promptfoo.asserts import build_assertion
from tests.frontends.promptfoo.asserts.harness import score

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="no node on the PATH")


def test_python_expressions_bodies_and_results(tmp_path: Path) -> None:
    # handlePython: true/'true' -> 1; a number is the score, passing above 0 or at
    # threshold; a {pass, score, reason} dict (pass_ accepted) is the result; not- ignored
    found = score(
        tmp_path,
        [
            {"type": "python", "value": "output.startswith('Hello')"},
            {"type": "python", "value": "'TRUE'"},
            {"type": "python", "value": "len(output) / 100"},
            {"type": "python", "value": "0.3", "threshold": 0.5},
            {
                "type": "python",
                "value": "words = output.split()\n"
                "return {'pass_': len(words) > 1, 'score': 0.25, 'reason': context['vars']['who']}",
            },
            {
                "type": "python",
                "value": "{'pass': True, 'score': 0.4, 'reason': 'ok'}",
                "threshold": 0.5,
            },
            {"type": "not-python", "value": "True"},
        ],
        "Hello world",
        vars={"who": "Ada"},
    )
    got = [(f.score, f.passed, f.reason) for f in found.findings]
    assert got[0] == (1.0, True, "Assertion passed")
    assert got[1] == (1.0, True, "Assertion passed")
    assert got[2] == (0.11, True, "Assertion passed")
    assert got[3] == (0.3, False, "Python code returned false\n0.3")
    assert got[4] == (0.25, True, "Ada")
    assert got[5] == (0.4, False, "Python score 0.4 is less than threshold 0.5: ok")
    assert got[6] == (1.0, True, "Assertion passed")


def test_python_that_raises_fails_with_its_error(tmp_path: Path) -> None:
    # handlePython's catch: pass false, score 0, "Python code execution failed: ..."
    found = score(tmp_path, [{"type": "python", "value": "1 / 0"}], "x")
    finding = found.findings[0]
    assert (finding.score, finding.passed) == (0.0, False)
    assert finding.reason == "Python code execution failed: ZeroDivisionError: division by zero"
    wrong = score(tmp_path, [{"type": "python", "value": "None"}], "x").findings[0]
    assert wrong.passed is False and "must return a boolean, number" in wrong.reason


def test_python_file_with_get_assert_and_a_named_function(tmp_path: Path) -> None:
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "grade.py").write_text(
        "import helper\n"
        "def get_assert(output, context):\n"
        "    print('noise on stdout')\n"
        "    return helper.LIMIT > len(output)\n"
        "def strict(output, context):\n"
        "    return {'pass': False, 'score': 0.2, 'reason': 'too ' + context['prompt']}\n"
    )
    (tmp_path / "checks" / "helper.py").write_text("LIMIT = 5\n")
    found = score(
        tmp_path,
        [
            {"type": "python", "value": "file://checks/grade.py"},
            {"type": "python", "value": "file://checks/grade.py:strict"},
        ],
        "abc",
        prompt="loose",
    )
    assert [(f.score, f.passed, f.reason) for f in found.findings] == [
        (1.0, True, "Assertion passed"),
        (0.2, False, "too loose"),
    ]


def test_a_script_file_outside_the_config_folder_is_refused(tmp_path: Path) -> None:
    inner = tmp_path / "suite"
    inner.mkdir()
    (tmp_path / "evil.py").write_text("def get_assert(o, c):\n    return True\n")
    with pytest.raises(ConfigError) as caught:
        build_assertion(
            {"type": "python", "value": "file://../evil.py"}, base_dir=inner, where="c.yaml:4"
        )
    assert caught.value.message.startswith("c.yaml:4: ") and "outside" in caught.value.message


@pytest.mark.reference
@needs_node
def test_javascript_values_and_results(tmp_path: Path) -> None:
    # handleJavascript: a boolean XOR not-; a number: > 0 or >= threshold; an object is the
    # result; a throw fails with "Custom function threw error"
    (tmp_path / "check.js").write_text(
        "module.exports = async (output, context) => ({pass: output.length > 2, "
        "score: 0.7, reason: 'len ' + context.vars.n});\n"
    )
    found = score(
        tmp_path,
        [
            {"type": "javascript", "value": "output.includes('ell')"},
            {"type": "not-javascript", "value": "output.includes('ell')"},
            {"type": "javascript", "value": "output.length / 10", "threshold": 0.5},
            {"type": "javascript", "value": "const n = 2;\nreturn n > 1;"},
            {"type": "javascript", "value": "file://check.js"},
            {"type": "javascript", "value": "null.x"},
        ],
        Output(text="hello"),
        vars={"n": 7},
    )
    got = [(f.score, f.passed) for f in found.findings]
    assert got == [(1.0, True), (0.0, False), (0.5, True), (1.0, True), (0.7, True), (0.0, False)]
    assert found.findings[4].reason == "len 7"
    assert found.findings[5].reason.startswith("Custom function threw error: Cannot read prop")


def test_javascript_without_node_is_refused_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigError) as caught:
        build_assertion(
            {"type": "javascript", "value": "true"}, base_dir=tmp_path, where="c.yaml:9"
        )
    assert caught.value.message == (
        "c.yaml:9: javascript assertion: javascript assertions run on Node.js, and no 'node' "
        "is on the PATH: install Node.js, or write the check as a python assertion"
    )


def test_an_assert_set_scores_as_one_weighted_assertion(tmp_path: Path) -> None:
    # runAssertions: a set's members make their own AssertionsResult (threshold of the set),
    # added to the test with the set's weight and metric
    asserts = [
        {
            "type": "assert-set",
            "threshold": 0.5,
            "weight": 2,
            "metric": "style",
            "assert": [
                {"type": "contains", "value": "a", "metric": "has-a"},
                {"type": "contains", "value": "z"},
            ],
        },
        {"type": "contains", "value": "zz"},
    ]
    found = score(tmp_path, asserts, "abc")
    member = found.findings[0]
    assert (member.score, member.passed) == (0.5, True)
    assert member.reason == "Aggregate score 0.50 ≥ 0.5 threshold"
    assert [(c.score, c.passed) for c in member.children] == [(1.0, True), (0.0, False)]
    # test: (0.5 * 2 + 0 * 1) / 3; the last assertion failed
    assert found.test.score == pytest.approx(1 / 3) and found.test.passed is False
    assert found.test.metadata["namedScores"] == {"style": 0.5, "has-a": 1.0}


def test_an_assert_set_needs_members(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        build_assertion({"type": "assert-set", "value": "x"}, base_dir=tmp_path, where="c.yaml:2")
    assert "'value' is no key of a assert-set assertion" in caught.value.message
    with pytest.raises(ConfigError) as empty:
        build_assertion({"type": "assert-set", "assert": []}, base_dir=tmp_path, where="c.yaml:2")
    assert "needs 'assert'" in empty.value.message
