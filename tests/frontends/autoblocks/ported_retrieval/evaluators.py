"""The suite's evaluators: a judge of each retrieved article's relevance (asked through the
suite's own OpenAI client, as seed 001's retrieval example does), recall and precision of
the retrieved article ids, and two Ragas evaluators."""

from __future__ import annotations

import json

from openai import AsyncOpenAI

from accord import (
    BaseRagasLLMContextRecall,
    BaseRagasNonLLMContextPrecisionWithReference,
    BaseTestEvaluator,
    Evaluation,
    Threshold,
)
from tests.frontends.autoblocks.ported_retrieval.cases import TestCase
from tests.frontends.autoblocks.ported_retrieval.search import ARTICLES, Article

openai_client = AsyncOpenAI()

RELEVANCY_SYSTEM = (
    "You grade a bike-shop help-desk search. Given a rider's question and one article, "
    'reply with JSON {"score": s}: 1 when the article answers the question, 0.5 when it '
    "helps in part, 0 when it does not."
)


class Relevancy(BaseTestEvaluator):
    id = "relevancy"
    max_concurrency = 5
    threshold = Threshold(gte=0.8)

    async def evaluate_test_case(self, test_case: TestCase, output: list[Article]) -> Evaluation:
        scores = []
        for article in output:
            response = await openai_client.chat.completions.create(
                model="gpt-4o-mini",
                messages=[
                    {"role": "system", "content": RELEVANCY_SYSTEM},
                    {
                        "role": "user",
                        "content": f"Question: {test_case.question}\nArticle: {article.text}",
                    },
                ],
                n=1,
                response_format=dict(type="json_object"),
            )
            parsed = json.loads(response.choices[0].message.content.strip())
            scores.append(parsed["score"])

        mean_score = sum(scores) / len(scores) if scores else 0

        return Evaluation(score=mean_score, threshold=self.threshold)


class RetrievalRecall(BaseTestEvaluator):
    """Share of the expected articles that were retrieved (no evaluation when none are)."""

    id = "retrieval-recall"
    threshold = Threshold(gte=1)

    def evaluate_test_case(self, test_case: TestCase, output: list[Article]) -> Evaluation | None:
        expected = test_case.expected_article_ids
        if not expected:
            return None
        retrieved = {article.id for article in output}
        missing = [i for i in expected if i not in retrieved]
        return Evaluation(
            score=(len(expected) - len(missing)) / len(expected),
            threshold=self.threshold,
            metadata={"missing": missing},
        )


class RetrievalPrecision(BaseTestEvaluator):
    """Share of the retrieved articles that were expected (no evaluation when none were)."""

    id = "retrieval-precision"
    threshold = Threshold(gte=0.5)

    def evaluate_test_case(self, test_case: TestCase, output: list[Article]) -> Evaluation | None:
        if not output:
            return None
        hits = [a.id for a in output if a.id in test_case.expected_article_ids]
        return Evaluation(score=len(hits) / len(output), threshold=self.threshold)


def article_texts(ids: list[str]) -> list[str]:
    return [a.text for a in ARTICLES if a.id in ids]


class ContextPrecision(BaseRagasNonLLMContextPrecisionWithReference[TestCase, list[Article]]):
    id = "context-precision"
    threshold = Threshold(gte=0.5)

    def reference_contexts_mapper(self, test_case: TestCase) -> list[str]:
        return article_texts(test_case.expected_article_ids)

    def retrieved_contexts_mapper(self, test_case: TestCase, output: list[Article]) -> list[str]:
        return [article.text for article in output]


class ContextRecall(BaseRagasLLMContextRecall[TestCase, list[Article]]):
    id = "context-recall"
    threshold = Threshold(gte=0.5)
    llm = None  # seed 001 takes a Ragas LLM wrapper here; accord asks the suite's judge model

    def user_input_mapper(self, test_case: TestCase, output: list[Article]) -> str:
        return test_case.question

    def response_mapper(self, output: list[Article]) -> str:
        return "\n".join(article.text for article in output)

    def reference_mapper(self, test_case: TestCase) -> str:
        return test_case.reference_answer

    def retrieved_contexts_mapper(self, test_case: TestCase, output: list[Article]) -> list[str]:
        return [article.text for article in output]
