"""Seed 001 suites ported by changing imports: `from accord import ...`; judges scripted."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import time
from pathlib import Path

import pytest

from accord import (
    Assertion,
    BaseAssertions,
    BaseHasAllSubstrings,
    BaseIsEquals,
    BaseIsValidJSON,
    BaseLLMJudge,
    BaseRagasNonLLMContextRecall,
    BaseTestCase,
    BaseTestEvaluator,
    Evaluation,
    ScoreChoice,
    Threshold,
    md5,
    run_test_suite,
)
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply


@dataclasses.dataclass
class TestCase(BaseTestCase):
    __test__ = False  # a seed 001 test case, not a pytest class

    input: str
    expected_output: str = ""
    expected_substrings: list[str] = dataclasses.field(default_factory=list)

    def hash(self) -> str:
        return md5(self.input)


class IsEquals(BaseIsEquals[TestCase, str]):
    id = "is-equals"

    def test_case_mapper(self, test_case: TestCase) -> str:
        return test_case.expected_output

    def output_mapper(self, output: str) -> str:
        return output


class HasAll(BaseHasAllSubstrings[TestCase, str]):
    id = "has-all-substrings"

    def test_case_mapper(self, test_case: TestCase) -> list[str]:
        return test_case.expected_substrings

    def output_mapper(self, output: str) -> str:
        return output


class ValidJson(BaseIsValidJSON[TestCase, str]):
    id = "is-valid-json"

    def output_mapper(self, output: str) -> str:
        return output


class Rules(BaseAssertions[TestCase, str]):
    id = "assertions"

    def evaluate_assertions(self, test_case: TestCase, output: str) -> list[Assertion]:
        return [
            Assertion(criterion="hello", passed="hello" in output, required=True),
            Assertion(criterion="hi", passed="hi" in output, required=False),
        ]


@pytest.fixture
def in_project(tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "config.yml").write_text(
        fake_model_config(fake_llm) + "defaults:\n  judge_model: fake\n"
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def scores(run: object, evaluator: str) -> list[float | None]:
    return [next(f.score for f in c.findings if f.name == evaluator) for c in run.cases]  # type: ignore[attr-defined]


def test_logic_evaluators_as_seed_001_scores_them(in_project: Path) -> None:
    cases = [
        TestCase("hello world", "hello world", ["hello", "world"]),
        TestCase("hi world", "hello world", ["hello", "world"]),
        TestCase('{"hello": "world"}', "x", []),
    ]
    run = run_test_suite(
        id="logic", test_cases=cases, fn=lambda tc: tc.input,
        evaluators=[IsEquals(), HasAll(), ValidJson(), Rules()], quiet=True,
    )  # fmt: skip
    assert scores(run, "is-equals") == [1.0, 0.0, 0.0]
    assert scores(run, "has-all-substrings") == [1.0, 0.0, 1.0]
    assert scores(run, "is-valid-json") == [0.0, 0.0, 1.0]
    assert scores(run, "assertions") == [1.0, 0.0, 1.0]
    missing = next(f for f in run.cases[1].findings if f.name == "has-all-substrings")
    assert missing.metadata["missing_substrings"] == ["hello"]
    assert [c.status for c in run.cases] == ["failed", "failed", "failed"]


class IsFriendly(BaseLLMJudge[TestCase, str]):
    id = "is-friendly"
    threshold = Threshold(gte=1)
    score_choices = [
        ScoreChoice(name="Friendly", value=1),
        ScoreChoice(name="Not friendly", value=0),
    ]

    def make_prompt(self, test_case: TestCase, output: str, recent_overrides: list) -> str:  # type: ignore[type-arg]
        return f"Is the output friendly?\n[Output]\n{output}"


def test_llm_judge_and_errors_stay_per_evaluation(in_project: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.responder = lambda body: Reply.tool(
        "select_answer",
        {
            "reason": "tone",
            "answer": "Not friendly" if "hate" in body["messages"][-1]["content"] else "Friendly",
        },
    )

    class Raises(BaseTestEvaluator):
        id = "raises"

        def evaluate_test_case(self, test_case: TestCase, output: str) -> Evaluation:
            raise ValueError("mapper broke")

    class WrongType(BaseTestEvaluator):
        id = "wrong-type"

        def evaluate_test_case(self, test_case: TestCase, output: str) -> float:
            return 1.0

    run = run_test_suite(
        id="judge", test_cases=[TestCase("Hi how are you?"), TestCase("I hate you!")],
        fn=lambda tc: tc.input, evaluators=[IsFriendly(), Raises(), WrongType()], quiet=True,
    )  # fmt: skip
    assert scores(run, "is-friendly") == [1.0, 0.0]
    errors = {f.name: f.error for f in run.cases[0].findings}
    assert errors["raises"] == "ValueError: mapper broke"
    assert "evaluator 'wrong-type' returned float, not an Evaluation" in errors["wrong-type"]
    assert [c.status for c in run.cases] == ["error", "failed"]


def test_concurrency_limits_of_the_function_and_evaluators(in_project: Path) -> None:
    lock = threading.Lock()
    live = {"fn": 0, "ev": 0}
    peak = {"fn": 0, "ev": 0}

    def track(kind: str, step: int) -> None:
        with lock:
            live[kind] += step
            peak[kind] = max(peak[kind], live[kind])

    def fn(tc: TestCase) -> str:
        track("fn", 1)
        time.sleep(0.03)
        track("fn", -1)
        return tc.input

    class Slow(BaseTestEvaluator):
        id = "slow"
        max_concurrency = 2

        async def evaluate_test_case(self, test_case: TestCase, output: str) -> Evaluation:
            track("ev", 1)
            await asyncio.sleep(0.03)
            track("ev", -1)
            return Evaluation(score=1, threshold=Threshold(gte=1))

    cases = [TestCase(f"case {i}") for i in range(12)]
    run = run_test_suite("limits", cases, fn, [Slow()], max_test_case_concurrency=3, quiet=True)
    assert all(c.status == "passed" for c in run.cases)
    assert peak == {"fn": 3, "ev": 2}


def test_non_llm_ragas_recall(in_project: Path) -> None:
    @dataclasses.dataclass
    class RagCase(BaseTestCase):
        question: str
        references: list[str]

        def hash(self) -> str:
            return md5(self.question)

    @dataclasses.dataclass
    class Answer:
        text: str
        contexts: list[str]

    class Recall(BaseRagasNonLLMContextRecall[RagCase, Answer]):
        id = "recall"
        threshold = Threshold(gte=0.5)

        def reference_contexts_mapper(self, test_case: RagCase) -> list[str]:
            return test_case.references

        def retrieved_contexts_mapper(self, test_case: RagCase, output: Answer) -> list[str]:
            return output.contexts

    case = RagCase("tower height?", ["The tower is 300 metres tall.", "It opened in 1889."])
    run = run_test_suite(
        "rag", [case],
        lambda tc: Answer("300 m", ["The tower is 300 metres tall.", "Paris is in France."]),
        [Recall()], quiet=True,
    )  # fmt: skip
    finding = run.cases[0].findings[0]
    assert finding.score == 0.5 and finding.scoring == "lexical" and finding.passed is True


# A flashcard suite written the way seed 001's example suites are (a task calling OpenAI's
# client, evaluators scoring each card with their own judge calls), with its imports pointed
# at accord; its OpenAI client talks to the fake server.

NOTES = "Cells are the unit of life. Mitochondria make energy. Ribosomes make proteins."


def test_flashcard_style_suite_ports_with_its_imports_changed(
    in_project: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.url)
    from openai import AsyncOpenAI, OpenAI

    cards = [
        {"front": "What is the unit of life?", "back": "The cell"},
        {"front": "What makes energy?", "back": "Mitochondria"},
        {"front": "yo what makes proteins lol", "back": "ribosomes i guess"},
    ]

    def reply(body: dict) -> Reply:  # type: ignore[type-arg]
        text = body["messages"][-1]["content"]
        if text.startswith("Notes:"):
            return Reply(text=json.dumps({"cards": cards}))
        return Reply(text="0" if "lol" in text else "1")

    fake_llm.responder = reply
    sync_client, async_client = OpenAI(), AsyncOpenAI()

    @dataclasses.dataclass
    class Flashcard:
        front: str
        back: str

    @dataclasses.dataclass
    class NotesCase(BaseTestCase):
        notes: str

        def hash(self) -> str:
            return md5(self.notes)

    def gen_flashcards(case: NotesCase) -> list[Flashcard]:
        response = sync_client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": f"Notes:\n{case.notes}"}]
        )
        data = json.loads(response.choices[0].message.content or "{}")
        return [Flashcard(**card) for card in data["cards"]]

    class IsProfessional(BaseTestEvaluator):
        id = "is-professional"
        max_concurrency = 2

        async def score(self, card: Flashcard) -> int:
            response = await async_client.chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": f"{card.front}\n{card.back}"}],
            )
            return int((response.choices[0].message.content or "").strip())

        async def evaluate_test_case(
            self, test_case: NotesCase, output: list[Flashcard]
        ) -> Evaluation:
            found = await asyncio.gather(*(self.score(card) for card in output))
            return Evaluation(score=sum(found) / len(found), threshold=Threshold(gte=0.9))

    run = run_test_suite(
        id="flashcard-generator", test_cases=[NotesCase(NOTES)], evaluators=[IsProfessional()],
        fn=gen_flashcards, max_test_case_concurrency=5, quiet=True,
    )  # fmt: skip
    (case,) = run.cases
    assert case.findings[0].score == pytest.approx(2 / 3)
    assert case.status == "failed" and case.findings[0].threshold == ">= 0.9"
