"""accord's Python API against the Autoblocks SDK itself (autoblocksai==0.0.137): the same
inputs through both, the judge replaced by one deterministic function on both sides.

Expected values in the ported tests come from the SDK's own tests (python-sdk fc6826dd,
tests/autoblocks/test_evaluators.py: the `/evals` bodies the SDK sends)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import types
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import accord

pytestmark = pytest.mark.reference

ab_evaluators = pytest.importorskip(
    "autoblocks.testing.evaluators",
    reason="the Autoblocks SDK is not installed: pip install -e '.[conformance]'",
)
ab_models = pytest.importorskip("autoblocks.testing.models")
ab_llm_judge = pytest.importorskip("autoblocks._impl.testing.evaluators.llm_judge")
ab_battle = pytest.importorskip("autoblocks._impl.testing.evaluators.battle")


@dataclasses.dataclass
class Case(accord.BaseTestCase, ab_models.BaseTestCase):
    """One test case class for both libraries (it subclasses both BaseTestCases)."""

    input: str
    expected: str = ""
    substrings: tuple[str, ...] = ()

    def hash(self) -> str:
        return self.input


def pair(name: str, **body: Any) -> tuple[Any, Any]:
    """The same evaluator class built on accord's base and on the SDK's."""

    def fill(ns: dict[str, Any]) -> None:
        ns.update(body)

    ours = types.new_class(name, (getattr(accord, name)[Case, str],), exec_body=fill)
    theirs = types.new_class(name, (getattr(ab_evaluators, name)[Case, str],), exec_body=fill)
    return ours(), theirs()


IDENTITY = {"id": "e", "output_mapper": lambda self, output: output}
EQUALS = pair(
    "BaseIsEquals", **IDENTITY, test_case_mapper=lambda self, test_case: test_case.expected
)
JSON = pair("BaseIsValidJSON", **IDENTITY)
SUBSTRINGS = pair(
    "BaseHasAllSubstrings",
    **IDENTITY,
    test_case_mapper=lambda self, test_case: list(test_case.substrings),
)

texts = st.text(alphabet=st.sampled_from('ab {}[]":,01-.nulltrue\\'), max_size=12)


def same(ours: Any, theirs: Any) -> None:
    assert type(ours).__name__ == type(theirs).__name__ == "Evaluation"
    assert dataclasses.asdict(ours) == dataclasses.asdict(theirs)
    assert ours.passed() == theirs.passed()


@settings(max_examples=150, deadline=None)
@given(texts, texts)
def test_is_equals_agrees(output: str, expected: str) -> None:
    case = Case(input="x", expected=expected)
    same(EQUALS[0].evaluate_test_case(case, output), EQUALS[1].evaluate_test_case(case, output))


@settings(max_examples=200, deadline=None)
@given(st.one_of(texts, st.from_regex(r'\A[\[{]?"?[a-z0-9 ,:.\-]*"?[\]}]?\Z')))
def test_is_valid_json_agrees(output: str) -> None:
    case = Case(input="x")
    same(JSON[0].evaluate_test_case(case, output), JSON[1].evaluate_test_case(case, output))


@settings(max_examples=150, deadline=None)
@given(texts, st.lists(st.text(alphabet="abAB ", max_size=3), max_size=4))
def test_has_all_substrings_agrees(output: str, substrings: list[str]) -> None:
    case = Case(input="x", substrings=tuple(substrings))
    ours, theirs = SUBSTRINGS
    same(ours.evaluate_test_case(case, output), theirs.evaluate_test_case(case, output))


assertion_lists = st.lists(st.tuples(st.text(max_size=5), st.booleans(), st.booleans()), max_size=4)


@settings(max_examples=100, deadline=None)
@given(assertion_lists)
def test_assertions_agree(found: list[tuple[str, bool, bool]]) -> None:
    def evaluator(base: Any, assertion: Any) -> Any:
        def evaluate_assertions(self: Any, test_case: Case, output: str) -> Any:
            return [assertion(c, p, r) for c, p, r in found]

        return type("Rules", (base,), {"id": "rules", "evaluate_assertions": evaluate_assertions})()

    ours = asyncio.run(
        evaluator(accord.BaseAssertions, accord.Assertion).evaluate_test_case(Case("x"), "y")
    )
    theirs = asyncio.run(
        evaluator(ab_evaluators.BaseAssertions, ab_models.Assertion).evaluate_test_case(
            Case("x"), "y"
        )
    )
    if theirs is None:
        assert ours is None
    else:
        same(ours, theirs)


# --- judges: the same deterministic judge on both sides ------------------------------------


def deterministic_choice(prompt: str, names: list[str]) -> str:
    """The stand-in judge of both sides: a choice picked from the prompt's text."""
    return names[sum(map(ord, prompt)) % len(names)]


class FakeEvalContext:
    """What accord's judged evaluators ask: `choose(prompt, names)`."""

    async def choose(self, prompt: str, names: list[str], model: str | None = None) -> Any:
        return deterministic_choice(prompt, names), f"because {len(prompt)}"


def fake_openai(answer: Any) -> Any:
    """The SDK's OpenAI client, replaced: `answer(request)` is the message it returns."""

    async def create(**request: Any) -> Any:
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=answer(request))])

    chat = types.SimpleNamespace(completions=types.SimpleNamespace(create=create))
    return types.SimpleNamespace(chat=chat)


def sdk_judge_answer(request: dict[str, Any]) -> Any:
    prompt = request["messages"][-1]["content"]
    names = request["tools"][0]["function"]["parameters"]["properties"]["answer"]["enum"]
    arguments = json.dumps(
        {"reason": f"because {len(prompt)}", "answer": deterministic_choice(prompt, names)}
    )
    call = types.SimpleNamespace(
        function=types.SimpleNamespace(name="select_answer", arguments=arguments)
    )
    return types.SimpleNamespace(tool_calls=[call])


JUDGES = {
    "BaseToxicity": {},
    "BaseNSFW": {},
    "BaseAccuracy": {"expected_output_mapper": lambda self, test_case: test_case.expected},
}
# any text, and often text of several lines: the SDK's dedent keeps its template's
# indentation then, which accord's prompt must repeat
outputs = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30),
    st.text(alphabet="ab \n", max_size=12),
)


@pytest.mark.parametrize("name", sorted(JUDGES))
@settings(max_examples=60, deadline=None)
@given(output=outputs, expected=outputs)
def test_ready_judges_agree(name: str, output: str, expected: str) -> None:
    ours, theirs = pair(name, **IDENTITY, **JUDGES[name])
    case = Case(input="x", expected=expected)
    assert ours.make_prompt(case, output, []) == theirs.make_prompt(case, output, [])
    assert ours.score_choices == [accord.ScoreChoice(c.value, c.name) for c in theirs.score_choices]
    found = asyncio.run(ours._accord_evaluate(FakeEvalContext(), case, output))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ab_llm_judge, "get_openai_client", lambda **_: fake_openai(sdk_judge_answer))
        want = asyncio.run(theirs.evaluate_test_case(case, output))
    assert found.score == want.score
    assert found.metadata == want.metadata  # the judge's reason and the prompt
    assert accord.Threshold(**dataclasses.asdict(want.threshold)).holds(found.score) is (
        want.passed()
    )
    assert dataclasses.asdict(ours.threshold) == dataclasses.asdict(want.threshold)


WINNERS = ["Baseline is better", "Tie", "Challenger is better"]  # accord's choice names
SDK_RESULT = {"Baseline is better": "1", "Tie": "0", "Challenger is better": "2"}


def battle_winner(criteria: str, baseline: str, challenger: str) -> str:
    return WINNERS[(len(criteria) + len(baseline) * 3 + len(challenger)) % 3]


class BattleEvalContext:
    async def choose(self, prompt: str, names: list[str], model: str | None = None) -> Any:
        criteria = prompt.split("[Criteria]\n", 1)[1].split("\n\n[Baseline]\n", 1)[0]
        rest = prompt.split("\n\n[Baseline]\n", 1)[1]
        baseline, challenger = rest.split("\n\n[Challenger]\n", 1)
        return battle_winner(criteria, baseline, challenger), "the reason"


def sdk_battle_answer(request: dict[str, Any]) -> Any:
    text = request["messages"][-1]["content"]
    lines = text.split("\n")
    # the SDK's dedent leaves its template's indentation: each value is on its own line
    criteria, baseline, challenger = (lines[1].strip(), lines[4].strip(), lines[7].strip())
    content = json.dumps(
        {
            "result": SDK_RESULT[battle_winner(criteria, baseline, challenger)],
            "reason": "the reason",
        }
    )
    return types.SimpleNamespace(content=content)


one_line = st.text(alphabet="abc xyz", min_size=1, max_size=8).map(str.strip).filter(bool)


@settings(max_examples=60, deadline=None)
@given(criteria=one_line, baseline=one_line, challenger=one_line)
def test_manual_battle_agrees(criteria: str, baseline: str, challenger: str) -> None:
    body = {
        **IDENTITY,
        "criteria": criteria,
        "baseline_mapper": lambda self, test_case: test_case.expected,
    }
    ours, theirs = pair("BaseManualBattle", **body)
    case = Case(input="x", expected=baseline)
    mapped_case, mapped_output = ours._mapped(case, challenger)
    found = asyncio.run(ours._spec().evaluate(BattleEvalContext(), mapped_case, mapped_output))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ab_battle, "get_openai_client", lambda **_: fake_openai(sdk_battle_answer))
        want = asyncio.run(theirs.evaluate_test_case(case, challenger))
    assert found.score == want.score
    assert {k: found.metadata[k] for k in want.metadata} == want.metadata  # item 8
    assert accord.Threshold(gte=0.5).holds(found.score) is want.passed()


# --- ported from the SDK's tests/autoblocks/test_evaluators.py ------------------------------


def test_sdk_has_all_substrings_cases() -> None:
    """test_has_all_substrings_evaluator: "hello world" with [hello, world] scores 1 with
    missing_substrings []; "foo" with [bar] scores 0 with missing_substrings [bar]."""
    ours = SUBSTRINGS[0]
    hit = ours.evaluate_test_case(Case("hello world", substrings=("hello", "world")), "hello world")
    miss = ours.evaluate_test_case(Case("foo", substrings=("bar",)), "foo")
    assert (hit.score, hit.threshold, hit.metadata) == (
        1, accord.Threshold(gte=1), {"missing_substrings": []}
    )  # fmt: skip
    assert (miss.score, miss.metadata) == (0, {"missing_substrings": ["bar"]})


def test_sdk_is_equals_cases() -> None:
    """test_is_equals_evaluator: fn returns "hello world"; case "hello world" scores 1 with no
    metadata, case "hi world" scores 0 with expected_output/actual_output."""
    ours = EQUALS[0]
    assert (
        ours.evaluate_test_case(Case("x", expected="hello world"), "hello world").metadata is None
    )
    miss = ours.evaluate_test_case(Case("x", expected="hi world"), "hello world")
    assert (miss.score, miss.metadata) == (
        0, {"expected_output": "hi world", "actual_output": "hello world"}
    )  # fmt: skip


def test_sdk_is_valid_json_cases() -> None:
    """test_is_valid_json_evaluator: "hello world" scores 0 with the parser's error
    "Expecting value: line 1 column 1 (char 0)"; '{"hi": "world"}' scores 1, no metadata."""
    ours = JSON[0]
    bad = ours.evaluate_test_case(Case("x"), "hello world")
    assert (bad.score, bad.metadata) == (0, {"error": "Expecting value: line 1 column 1 (char 0)"})
    good = ours.evaluate_test_case(Case("x"), '{"hi": "world"}')
    assert (good.score, good.metadata, good.passed()) == (1, None, True)


def test_sdk_assertions_case() -> None:
    """test_assertions_evaluator: a required assertion passing and an optional one failing
    score 1 with both assertions sent."""

    class Rules(accord.BaseAssertions[Case, str]):
        id = "rules"

        def evaluate_assertions(self, test_case: Case, output: str) -> list[accord.Assertion]:
            return [
                accord.Assertion(criterion="Must pass", passed=True, required=True),
                accord.Assertion(criterion="This is flaky", passed=False, required=False),
            ]

    found = asyncio.run(Rules().evaluate_test_case(Case("hello world"), "hello world"))
    assert found is not None and found.score == 1 and found.threshold == accord.Threshold(gte=1)
    assert [a.serialize() for a in found.assertions or []] == [
        {"criterion": "Must pass", "passed": True, "required": True, "metadata": None},
        {"criterion": "This is flaky", "passed": False, "required": False, "metadata": None},
    ]


# --- items 1, 6 and 7 of the port: generics, direct calls, the SDK's names ------------------


@pytest.mark.parametrize("name", ["BaseToxicity", "BaseNSFW", "BaseAccuracy", "BaseLLMJudge",
                                  "BaseManualBattle", "BaseAutomaticBattle"])  # fmt: skip
def test_base_classes_are_generic_where_the_sdks_are(name: str) -> None:
    """Seed 001's own examples write `BaseToxicity[TestCase, str]`."""
    assert getattr(accord, name)[Case, str] is not None
    assert getattr(ab_evaluators, name)[Case, str] is not None


def test_deterministic_evaluators_are_called_directly() -> None:
    class IsEquals(accord.BaseIsEquals[Case, str]):
        id = "eq"

        def test_case_mapper(self, test_case: Case) -> str:
            return test_case.expected

        def output_mapper(self, output: str) -> str:
            return output

    found = IsEquals().evaluate_test_case(Case("q", expected="a"), "a")
    assert isinstance(found, accord.Evaluation) and found.score == 1 and found.passed() is True


def test_every_name_the_sdk_exports_imports_from_accord() -> None:
    import autoblocks.testing.models as models

    names = set(models.__all__) | set(ab_evaluators.__all__)
    missing = sorted(n for n in names if not hasattr(accord, n))
    assert missing == []
    assert accord.HasAllSubstrings is accord.BaseHasAllSubstrings
    assert accord.AutomaticBattle is accord.BaseAutomaticBattle
    assert accord.ManualBattle is accord.BaseManualBattle
    # the data types take the SDK's fields
    for name in ("TestCaseConfig", "HumanReviewField", "CreateHumanReviewJob",
                 "EvaluationOverrideField", "EvaluationOverrideComment", "EvaluationWithId",
                 "Threshold", "ScoreChoice", "Assertion", "Evaluation"):  # fmt: skip
        ours = [f.name for f in dataclasses.fields(getattr(accord, name))]
        theirs = [f.name for f in dataclasses.fields(getattr(models, name))]
        assert ours == theirs, name
