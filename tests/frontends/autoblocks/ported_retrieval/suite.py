"""The suite's entry point, as seed 001's `run.py` calls it (accord's `run_test_suite` also
returns the results, which `run_test` hands back)."""

from __future__ import annotations

from accord import SuiteRun, run_test_suite
from tests.frontends.autoblocks.ported_retrieval.cases import TestCase, gen_test_cases
from tests.frontends.autoblocks.ported_retrieval.evaluators import (
    ContextPrecision,
    ContextRecall,
    Relevancy,
    RetrievalPrecision,
    RetrievalRecall,
)
from tests.frontends.autoblocks.ported_retrieval.search import Article, search_articles


def test_fn(test_case: TestCase) -> list[Article]:
    return search_articles(question=test_case.question)


def run_test() -> SuiteRun:
    return run_test_suite(
        id="bike-help-desk-retrieval",
        test_cases=gen_test_cases(),
        evaluators=[
            Relevancy(),
            RetrievalRecall(),
            RetrievalPrecision(),
            ContextPrecision(),
            ContextRecall(),
        ],
        fn=test_fn,
    )
