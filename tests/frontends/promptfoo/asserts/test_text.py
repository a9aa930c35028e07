"""promptfoo's text assertions through `build_assertion` and the evaluation core; every
expected verdict and reason is promptfoo 0.118's (the handler named in each test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from accord.engine.errors import ConfigError
from accord.tasks.evaluators.cases import Output
from accord.tasks.suites.frontends.promptfoo.asserts import build_assertion
from tests.frontends.promptfoo.asserts.harness import score


def verdicts(
    tmp_path: Path, asserts: list[dict[str, object]], output: str | Output, **kw: object
) -> list[tuple[float | None, bool | None]]:
    found = score(tmp_path, asserts, output, **kw)  # type: ignore[arg-type]
    return [(f.score, f.passed) for f in found.findings]


def test_equals_compares_the_rendered_value_and_json_values_deeply(tmp_path: Path) -> None:
    # equals.ts handleEquals: String(value) === output; an object value is compared with
    # JSON.parse(output) by isDeepStrictEqual; a non-JSON output fails it
    got = verdicts(
        tmp_path,
        [
            {"type": "equals", "value": "Hi {{ name }}"},
            {"type": "equals", "value": "hi bob"},
            {"type": "not-equals", "value": "hi bob"},
            {"type": "equals", "value": {"a": [1, 2]}},
        ],
        "Hi bob",
        vars={"name": "bob"},
    )
    assert got == [(1.0, True), (0.0, False), (1.0, True), (0.0, False)]
    json_out = verdicts(tmp_path, [{"type": "equals", "value": {"a": [1, 2.0]}}], '{"a":[1,2]}')
    assert json_out == [(1.0, True)]


def test_a_failed_equals_says_what_promptfoo_says(tmp_path: Path) -> None:
    found = score(tmp_path, [{"type": "equals", "value": "yes"}], "no")
    assert found.findings[0].reason == 'Expected output "no" to equal "yes"'
    assert found.case.status == "failed" and found.test.passed is False


def test_contains_family(tmp_path: Path) -> None:
    # contains.ts: contains / icontains (lower-cased), contains-any (a string value split on
    # commas outside double quotes), contains-all, their i- forms; each XOR `not-`
    got = verdicts(
        tmp_path,
        [
            {"type": "contains", "value": "Paris"},
            {"type": "contains", "value": "paris"},
            {"type": "icontains", "value": "paris"},
            {"type": "not-icontains", "value": "PARIS"},
            {"type": "contains-any", "value": 'London, "Paris, France"'},
            {"type": "contains-any", "value": ["Rome", "Berlin"]},
            {"type": "icontains-any", "value": "rome, paris"},
            {"type": "contains-all", "value": "Paris, France"},
            {"type": "contains-all", "value": ["Paris", "Lyon"]},
            {"type": "icontains-all", "value": ["paris", "FRANCE"]},
            {"type": "not-contains-all", "value": ["Paris", "Lyon"]},
            {"type": "contains", "value": 42},
        ],
        "Paris, France has 42 bridges",
    )
    assert got == [
        (1.0, True), (0.0, False), (1.0, True), (0.0, False), (1.0, True), (0.0, False),
        (1.0, True), (1.0, True), (0.0, False), (1.0, True), (1.0, True), (1.0, True),
    ]  # fmt: skip


def test_contains_all_names_what_is_missing(tmp_path: Path) -> None:
    found = score(tmp_path, [{"type": "contains-all", "value": ["a", "zz", "yy"]}], "abc")
    assert found.findings[0].reason == (
        "Expected output to contain all of [a, zz, yy]. Missing: [zz, yy]"
    )


def test_a_contains_without_a_value_is_an_error_not_a_score(tmp_path: Path) -> None:
    # contains.ts: invariant(value) throws, and the test is an error in promptfoo
    found = score(tmp_path, [{"type": "contains", "value": "{{ empty }}"}], "x", vars={"empty": ""})
    assert found.findings[0].score is None
    assert "must have a string or number value" in (found.findings[0].error or "")
    assert found.case.status == "error" and found.test.error is not None


def test_weight_zero_always_passes_and_counts_nothing(tmp_path: Path) -> None:
    # index.ts runAssertion: weight 0 forces pass; assertionsResult.ts: score * 0
    found = score(
        tmp_path,
        [{"type": "contains", "value": "x", "weight": 0}, {"type": "contains", "value": "a"}],
        "abc",
    )
    assert [(f.score, f.passed) for f in found.findings] == [(0.0, True), (1.0, True)]
    assert (found.test.score, found.test.passed) == (1.0, True)


def test_the_test_score_is_the_weighted_mean_and_threshold_decides(tmp_path: Path) -> None:
    # assertionsResult.ts testResult: totalScore / totalWeight; a test threshold replaces
    # "every assertion passed" with score >= threshold
    asserts = [
        {"type": "contains", "value": "a", "weight": 3, "metric": "m"},
        {"type": "contains", "value": "z", "metric": "m"},
    ]
    plain = score(tmp_path, asserts, "abc")
    assert plain.test.score == 0.75 and plain.test.passed is False
    assert plain.test.metadata["namedScores"] == {"m": 1.0}
    gated = score(tmp_path, asserts, "abc", threshold=0.7)
    assert gated.test.passed is True
    assert gated.test.reason == "Aggregate score 0.75 ≥ 0.7 threshold"
    assert score(tmp_path, asserts, "abc", threshold=0.8).test.passed is False


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"type": "contians", "value": "x"},
            "'contians' is not supported by accord; did you mean 'contains'?",
        ),
        ({"type": "contains", "valeu": "x"}, "'valeu' is no key of a contains assertion"),
        (
            {"type": "contains", "value": "x", "weight": "heavy"},
            "'weight' is a number, not 'heavy'",
        ),
        ({"value": "x"}, "an assertion needs a 'type'"),
        ({"type": "equals", "value": "file://../outside.txt"}, "leads outside"),
        ({"type": "equals", "value": "file://missing.txt"}, "cannot read file://missing.txt"),
    ],
)
def test_a_bad_assertion_is_refused_at_its_line(
    tmp_path: Path, entry: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        build_assertion(entry, base_dir=tmp_path, where="promptfooconfig.yaml:7")
    assert caught.value.message.startswith("promptfooconfig.yaml:7: ")
    assert message in caught.value.message


def test_a_file_value_is_read_from_the_config_folder(tmp_path: Path) -> None:
    (tmp_path / "answer.txt").write_text("  forty two \n")
    (tmp_path / "list.yaml").write_text("- forty\n- two\n")
    got = verdicts(
        tmp_path,
        [
            {"type": "equals", "value": "file://answer.txt"},
            {"type": "contains-all", "value": "file://list.yaml"},
        ],
        "forty two",
    )
    assert got == [(1.0, True), (1.0, True)]


def test_a_var_the_test_does_not_set_renders_as_nothing(tmp_path: Path) -> None:
    # index.ts renders the value with nunjucks, where an undefined name is ''
    got = verdicts(tmp_path, [{"type": "equals", "value": "Hi {{ nobody }}!"}], "Hi !")
    assert got == [(1.0, True)]
