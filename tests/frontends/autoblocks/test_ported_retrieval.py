"""Seed 001's retrieval example suite, ported by changing its imports to `accord`.

The suite lives in `tests/frontends/autoblocks/ported_retrieval/` and is written the way the Autoblocks
examples' retrieval suite is (a test case class with `hash()`, evaluators with `id`,
`threshold`, `max_concurrency` and `evaluate_test_case` or the Ragas mappers, and
`run_test_suite(id=..., test_cases=..., evaluators=..., fn=...)`), with its own content: four
questions to a bike shop's help desk, answered from five in-memory articles found by keyword
overlap instead of a vector index.

Its `Relevancy` evaluator asks a judge through the suite's own module-level `AsyncOpenAI`
client, and `ContextRecall` (Ragas, LLM) asks accord's judge model; both talk to one fake
OpenAI-compatible server whose replies are scripted below, so every score can be worked out
by hand (see EXPECTED). The last tests hold the SDK's particular behaviours: Ragas scores
rounded to 2 places, the non-LLM recall's strict threshold and its case-sensitive texts.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from accord.tasks.evaluators.rag import sentences
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply

PACKAGE = "tests.frontends.autoblocks.ported_retrieval"

FLAT = "How do I patch a flat tyre?"
PRESSURE = "What pressure should my road tyres be at?"
NOISES = "My brakes squeak and the chain skips gears"
HELMETS = "Do you sell helmets?"

# What the retriever returns (top 2 by shared words of 4+ letters, ties in article order):
#   FLAT      {flat, patch, tyre}: flat-tyre 3, tyre-pressure 1      -> [flat-tyre, tyre-pressure]
#   PRESSURE  {pressure, road, tyres, ...}: tyre-pressure 3          -> [tyre-pressure]
#   NOISES    {brakes, chain, ...}: chain-care 1, squeaky-brakes 1,
#             gear-shifting 1                                        -> [chain-care, squeaky-brakes]
#   HELMETS   {sell, helmets}: nothing                               -> []
RETRIEVED = {
    FLAT: ["flat-tyre", "tyre-pressure"],
    PRESSURE: ["tyre-pressure"],
    NOISES: ["chain-care", "squeaky-brakes"],
    HELMETS: [],
}

# The scripted judge of the suite's Relevancy evaluator: its grade of each retrieved article.
RELEVANCE = {
    (FLAT, "flat-tyre"): 1,
    (FLAT, "tyre-pressure"): 0.5,
    (PRESSURE, "tyre-pressure"): 1,
    (NOISES, "chain-care"): 0,
    (NOISES, "squeaky-brakes"): 1,
}

# The scripted judge of ContextRecall: whether each sentence of the case's reference answer
# can be attributed to the retrieved articles (FLAT's third, the sidewall, cannot; nor can
# NOISES' second, the barrel adjuster, since gear-shifting was not retrieved).
ATTRIBUTED = {FLAT: [1, 1, 0], PRESSURE: [1], NOISES: [1, 0], HELMETS: [0]}

# Per case and evaluator: (score, passed); None where the evaluator gives no evaluation.
#   relevancy            mean grade of the retrieved articles, >= 0.8 (0 with none: seed 001's code)
#   retrieval-recall     expected ids retrieved / expected ids, >= 1 (none expected: no evaluation)
#   retrieval-precision  retrieved ids expected / retrieved ids, >= 0.5 (none retrieved: none)
#   context-precision    Ragas non-LLM: each retrieved text matches a reference text
#                        (identical, similarity 1; other articles are under 0.5) -> verdicts;
#                        average precision over them: FLAT [1, 0] -> 1/1; NOISES [0, 1] -> (1/2)/1
#   context-recall       Ragas LLM: attributed sentences / sentences, >= 0.5
EXPECTED: dict[str, dict[str, tuple[float, bool] | None]] = {
    FLAT: {
        "relevancy": (0.75, False),  # (1 + 0.5) / 2
        "retrieval-recall": (1.0, True),
        "retrieval-precision": (0.5, True),
        "context-precision": (1.0, True),
        "context-recall": (0.67, True),  # 2/3, which the SDK reports rounded to 2 places
    },
    PRESSURE: {
        "relevancy": (1.0, True),
        "retrieval-recall": (1.0, True),
        "retrieval-precision": (1.0, True),
        "context-precision": (1.0, True),
        "context-recall": (1.0, True),
    },
    NOISES: {
        "relevancy": (0.5, False),  # (0 + 1) / 2
        "retrieval-recall": (0.5, False),  # gear-shifting missing
        "retrieval-precision": (0.5, True),
        "context-precision": (0.5, True),
        "context-recall": (0.5, True),
    },
    HELMETS: {
        "relevancy": (0.0, False),
        "retrieval-recall": None,
        "retrieval-precision": None,
        "context-precision": (0.0, False),
        "context-recall": (0.0, False),
    },
}
STATUS = {FLAT: "failed", PRESSURE: "passed", NOISES: "failed", HELMETS: "failed"}


@pytest.fixture(scope="module")
def judge() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    yield server
    server.close()


@pytest.fixture(scope="module")
def suite(judge: FakeOpenAI) -> SimpleNamespace:
    """The suite's modules, imported the way a user runs them: OPENAI_* set in the
    environment, so the module-level client of `evaluators` talks to the fake server (and is
    reused by every test's run, each on a new event loop)."""
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]
    with pytest.MonkeyPatch.context() as env:
        env.setenv("OPENAI_API_KEY", "test")
        env.setenv("OPENAI_BASE_URL", judge.url)
        names = ("search", "cases", "evaluators", "suite")
        return SimpleNamespace(**{n: importlib.import_module(f"{PACKAGE}.{n}") for n in names})


def scripted(suite: SimpleNamespace) -> Any:
    articles = {a.text: a.id for a in suite.search.ARTICLES}
    cases = suite.cases.gen_test_cases()

    def reply(body: dict[str, Any]) -> Reply:
        prompt = body["messages"][-1]["content"]
        if body.get("response_format"):  # the suite's Relevancy, through its own client
            found = re.fullmatch(r"Question: (.*)\nArticle: (.*)", prompt, re.DOTALL)
            assert found, prompt
            question, text = found.groups()
            return Reply(text=json.dumps({"score": RELEVANCE[question, articles[text]]}))
        # accord's judge, asked for ContextRecall's statement verdicts
        case = next(c for c in cases if c.reference_answer in prompt)
        verdicts = ATTRIBUTED[case.question]
        statements = sentences(case.reference_answer)
        return Reply(
            text=json.dumps(
                [
                    {"statement": s, "reason": "scripted", "attributed": v}
                    for s, v in zip(statements, verdicts, strict=True)
                ]
            )
        )

    return reply


@pytest.fixture
def project(
    tmp_path: Path, judge: FakeOpenAI, suite: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A project whose judge model (`fake`) is the fake server, as the cwd of the run; the
    report printed wide enough that no row folds."""
    (tmp_path / "config.yml").write_text(
        fake_model_config(judge) + "defaults:\n  judge_model: fake\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "240")
    judge.queue.clear()
    judge.requests.clear()
    judge.responder = scripted(suite)
    return tmp_path


def by_question(run: Any, suite: SimpleNamespace) -> dict[str, Any]:
    hashes = {c.hash(): c.question for c in suite.cases.gen_test_cases()}
    return {hashes[c.id]: c for c in run.cases}


def findings(case: Any) -> dict[str, Any]:
    return {f.name: f for f in case.findings}


def test_the_retriever_returns_what_the_table_says(suite: SimpleNamespace) -> None:
    for question, ids in RETRIEVED.items():
        assert [a.id for a in suite.search.search_articles(question)] == ids


def test_ported_retrieval_suite_gives_the_sdk_scores(
    project: Path, suite: SimpleNamespace, judge: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    run = suite.suite.run_test()
    cases = by_question(run, suite)
    assert list(cases) == [FLAT, PRESSURE, NOISES, HELMETS]  # in the suite's order

    for question, expected in EXPECTED.items():
        found = findings(cases[question])
        assert list(found) == list(expected), question  # every evaluator, in order
        for name, want in expected.items():
            finding = found[name]
            assert finding.error is None, (question, name, finding.error)
            if want is None:  # the evaluator returned None: no evaluation, as in the SDK
                assert finding.score is None and finding.passed is None
                assert finding.skipped == "the evaluator returned no evaluation"
                continue
            score, passed = want
            assert finding.score == score, (question, name, finding.score)
            assert finding.passed is passed, (question, name)
        assert cases[question].status == STATUS[question]

    assert findings(cases[NOISES])["retrieval-recall"].metadata == {"missing": ["gear-shifting"]}
    assert findings(cases[FLAT])["relevancy"].threshold == ">= 0.8"
    assert findings(cases[FLAT])["context-precision"].scoring == "lexical"
    assert findings(cases[FLAT])["context-recall"].scoring == "model"

    # The suite's Relevancy asked its judge once per retrieved article (2 + 1 + 2 + 0), through
    # its own client; accord's judge was asked once per case for ContextRecall.
    own = [r for r in judge.requests if r.get("response_format")]
    accords = [r for r in judge.requests if not r.get("response_format")]
    assert len(own) == 5 and {r["model"] for r in own} == {"gpt-4o-mini"}
    assert len(accords) == 4 and all(
        "Reference answer" in r["messages"][-1]["content"] for r in accords
    )

    # The printed report: each case's mark, hash and score (the mean of its evaluations:
    # FLAT (0.75 + 1 + 0.5 + 1 + 2/3) / 5 = 0.78), the pass rate, and each evaluator's rate.
    out = capsys.readouterr().out
    assert "bike-help-desk-retrieval" in out
    rows = {FLAT: ("✘", "0.78"), PRESSURE: ("✔", "1.00"), NOISES: ("✘", "0.50"), HELMETS: ("✘", "0.00")}  # fmt: skip
    for question, (mark, score) in rows.items():
        digest = suite.cases.TestCase(question=question).hash()
        assert re.search(rf"^{mark}\s+{digest}\s+{score}\b", out, re.MULTILINE), (question, out)
    assert re.search(r"0\.50\s+relevancy; retrieval-recall\s*$", out, re.MULTILINE)  # NOISES' why
    assert "Pass rate: 25.00% (1/4 cases" in out
    assert "1 passed, 3 failed, 0 errors" in out
    assert "relevancy: 25.00% (1/4 cases" in out
    assert re.search(r"retrieval-recall: 66\.67% \(2/3 cases.*\(1 skipped\)", out)
    assert re.search(r"retrieval-precision: 100\.00% \(3/3 cases.*\(1 skipped\)", out)
    assert "context-precision: 75.00% (3/4 cases" in out
    assert "context-recall: 75.00% (3/4 cases" in out


def test_faults_stay_where_the_sdk_puts_them(
    project: Path, suite: SimpleNamespace, capsys: pytest.CaptureFixture[str]
) -> None:
    """An evaluator that raises errors only its own evaluation (the SDK reports the error
    by evaluator id with the exception's name and message; the other evaluators go on); a
    function that raises errors its test case with no evaluations, the other cases go on."""
    from accord import BaseTestEvaluator, Evaluation, run_test_suite

    ev = suite.evaluators

    class ArticleSources(BaseTestEvaluator):
        id = "article-sources"

        def evaluate_test_case(self, test_case: Any, output: list[Any]) -> Evaluation:
            sourced = {"flat-tyre", "chain-care", "squeaky-brakes", "gear-shifting"}
            for article in output:
                if article.id not in sourced:
                    raise LookupError(f"no source recorded for {article.id}")
            return Evaluation(score=1)

    def fn(test_case: Any) -> list[Any]:
        if test_case.question == HELMETS:
            raise ConnectionError("article index offline")
        return suite.suite.test_fn(test_case)

    evaluators = [
        ev.Relevancy(), ArticleSources(), ev.RetrievalRecall(), ev.RetrievalPrecision(),
        ev.ContextPrecision(), ev.ContextRecall(),
    ]  # fmt: skip
    run = run_test_suite(
        id="bike-help-desk-retrieval", test_cases=suite.cases.gen_test_cases(),
        evaluators=evaluators, fn=fn,
    )  # fmt: skip
    cases = by_question(run, suite)

    for question in (FLAT, PRESSURE):  # both retrieved tyre-pressure, which has no source
        found = findings(cases[question])
        sources = found.pop("article-sources")
        assert sources.error == "LookupError: no source recorded for tyre-pressure"
        assert sources.score is None and sources.passed is None
        for name, want in EXPECTED[question].items():  # the others scored as without it
            assert want is not None
            assert found[name].score == want[0] and found[name].passed is want[1]
    assert findings(cases[NOISES])["article-sources"].score == 1.0

    # PRESSURE passes every threshold, but an errored evaluation never makes a pass
    assert [cases[q].status for q in (FLAT, PRESSURE, NOISES)] == ["failed", "error", "failed"]
    assert cases[HELMETS].status == "error" and cases[HELMETS].findings == []
    # the first line as before; then fn's traceback, as the SDK sends it with the error
    error = cases[HELMETS].error or ""
    assert error.splitlines()[0] == "ConnectionError: article index offline"
    assert "Traceback (most recent call last):" in error and "asyncio" not in error

    out = capsys.readouterr().out
    assert "article-sources: LookupError: no source recorded for tyre-pressure" in out
    assert "ConnectionError: article index offline" in out
    assert "0 passed, 2 failed, 2 errors" in out


# --- where Ragas and the SDK are particular -------------------------------------------------


def test_ragas_scores_are_rounded_to_two_places_as_the_sdk_does(
    project: Path, suite: SimpleNamespace
) -> None:
    from accord import Threshold, run_test_suite

    class ContextRecall(suite.evaluators.ContextRecall):  # type: ignore[name-defined,misc]
        threshold = Threshold(gte=0.67)

    run = run_test_suite(
        id="rounding", test_cases=suite.cases.gen_test_cases()[:1], evaluators=[ContextRecall()],
        fn=suite.suite.test_fn, quiet=True,
    )  # fmt: skip
    (finding,) = run.cases[0].findings
    assert finding.score == 0.67  # the SDK's score for 2 of 3 statements attributed
    assert finding.passed is True  # 0.67 >= 0.67 in the SDK


def _non_llm_run(suite: SimpleNamespace, reference: str, retrieved: str) -> dict[str, Any]:
    """Ragas' non-LLM recall and precision of one retrieved text against one reference."""
    from accord import (
        BaseRagasNonLLMContextPrecisionWithReference,
        BaseRagasNonLLMContextRecall,
        run_test_suite,
    )

    TestCase = suite.cases.TestCase

    class Recall(BaseRagasNonLLMContextRecall[TestCase, list]):  # type: ignore[valid-type,type-arg]
        id = "non-llm-context-recall"

        def reference_contexts_mapper(self, test_case: Any) -> list[str]:
            return [reference]

        def retrieved_contexts_mapper(self, test_case: Any, output: list[str]) -> list[str]:
            return output

    class Precision(BaseRagasNonLLMContextPrecisionWithReference[TestCase, list]):  # type: ignore[valid-type,type-arg]
        id = "non-llm-context-precision"

        def reference_contexts_mapper(self, test_case: Any) -> list[str]:
            return [reference]

        def retrieved_contexts_mapper(self, test_case: Any, output: list[str]) -> list[str]:
            return output

    run = run_test_suite(
        id="non-llm", test_cases=[TestCase(question=FLAT)], evaluators=[Recall(), Precision()],
        fn=lambda tc: [retrieved], quiet=True,
    )  # fmt: skip
    return {f.name: f.score for f in run.cases[0].findings}


def test_non_llm_recall_needs_a_similarity_above_the_threshold(
    project: Path, suite: SimpleNamespace
) -> None:
    # Levenshtein: 5 edits over 10 characters, similarity exactly 0.5
    scores = _non_llm_run(suite, reference="Tyre patch", retrieved="Tyre lever")
    assert scores == {"non-llm-context-recall": 0.0, "non-llm-context-precision": 1.0}


def test_non_llm_similarity_is_case_sensitive_as_in_the_sdk(
    project: Path, suite: SimpleNamespace
) -> None:
    # "Tyre pressure" against "TYRE PRESSURE": 11 edits over 13 characters, similarity 0.15
    scores = _non_llm_run(suite, reference="Tyre pressure", retrieved="TYRE PRESSURE")
    assert scores == {"non-llm-context-recall": 0.0, "non-llm-context-precision": 0.0}
