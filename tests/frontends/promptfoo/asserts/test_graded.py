"""promptfoo's model-graded assertions and `similar`, judged by the fake OpenAI server
through accord's models door. Each expected score and verdict is what promptfoo 0.118's
src/matchers.ts computes from the same judge reply (the function is named at each test); a
reply its parser cannot read is an error here, never a score."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from accord.tasks.evaluators.cases import Output
from accord.tasks.suites.frontends.promptfoo.asserts.graded import model_of
from tests.fakes import FakeOpenAI, Reply, letter_counts
from tests.frontends.promptfoo.asserts.harness import score, write_project


@pytest.fixture
def root(tmp_path: Path, fake_llm: FakeOpenAI) -> Path:
    return write_project(tmp_path, fake_llm, embedding=True)


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.hypot(*a) * math.hypot(*b))


def test_llm_rubric_reads_pass_score_and_reason(root: Path, fake_llm: FakeOpenAI) -> None:
    # matchesLlmRubric: first JSON object of the reply; pass ?? true; a non-numeric score is
    # Number(pass); with threshold, pass && score >= threshold
    replies = {
        "is a greeting to Ada": 'Thinking... {"reason": "greets", "pass": true, "score": 0.8}',
        "is polite": '{"reason": "meh", "pass": "yes", "score": "0.4"}',
        "is long": '{"reason": "no score given", "pass": false}',
    }
    fake_llm.responder = lambda body: Reply(
        text=next(r for k, r in replies.items() if k in body["messages"][-1]["content"])
    )
    found = score(
        root,
        [
            {"type": "llm-rubric", "value": "is a greeting to {{ name }}"},
            {"type": "llm-rubric", "value": "is polite", "threshold": 0.5},
            {"type": "llm-rubric", "value": "is long"},
        ],
        "Hello Ada",
        vars={"name": "Ada"},
    )
    got = [(f.score, f.passed, f.reason) for f in found.findings]
    assert got == [(0.8, True, "greets"), (0.4, False, "meh"), (0.0, False, "no score given")]
    asked = [r["messages"][-1]["content"] for r in fake_llm.requests]
    assert any("<Output>\nHello Ada\n</Output>" in a and "greeting to Ada" in a for a in asked)
    assert found.findings[0].judge_calls == 1


def test_an_unreadable_judge_reply_is_an_error_after_one_retry(
    root: Path, fake_llm: FakeOpenAI
) -> None:
    # promptfoo scores "Could not extract JSON from llm-rubric response" as a 0 fail;
    # accord asks again, then records an error and no score
    fake_llm.script("I think it is fine.", "Still no JSON here.")
    found = score(root, [{"type": "llm-rubric", "value": "is fine"}], "out")
    finding = found.findings[0]
    assert finding.score is None and finding.passed is None
    assert "no JSON object" in (finding.error or "") and "Still no JSON" in (finding.error or "")
    assert len(fake_llm.requests) == 2 and found.case.status == "error"


def test_closedqa_passes_on_a_final_y(root: Path, fake_llm: FakeOpenAI) -> None:
    # matchesClosedQa: output.trimEnd().endsWith('Y') passes, 'N' fails
    fake_llm.responder = lambda body: Reply(
        text="Names it.\nY\nY\n" if "names the capital" in str(body) else "Wrong.\nN\nN"
    )
    found = score(
        root,
        [
            {"type": "model-graded-closedqa", "value": "names the capital"},
            {"type": "model-graded-closedqa", "value": "is correct"},
        ],
        "Paris",
        prompt="What is the capital of France?",
    )
    assert [(f.score, f.passed) for f in found.findings] == [(1.0, True), (0.0, False)]
    assert found.findings[0].reason.startswith("The submission meets the criterion:\n")
    assert "What is the capital of France?" in fake_llm.requests[0]["messages"][0]["content"]


def test_factuality_category_scores(root: Path, fake_llm: FakeOpenAI) -> None:
    # matchesFactuality: A/B/C/E score 1 and pass, D scores 0; options.factuality overrides;
    # a reply without JSON falls back to "(X)" at its start
    replies = {
        "Paris B": '{"category": "B", "reason": "adds detail"}',
        "Paris D": '{"category": "d", "reason": "contradicts"}',
        "Paris C": "(C) same facts",
        "Paris A": '{"category": "A", "reason": "subset"}',
    }
    fake_llm.responder = lambda body: Reply(
        text=next(r for k, r in replies.items() if k in str(body["messages"]))
    )
    found = score(
        root,
        [{"type": "factuality", "value": f"Paris {letter}"} for letter in "BDCA"],
        "Paris, in France",
        options={"factuality": {"subset": 0.5}},
    )
    got = sorted((f.score, f.passed, f.reason) for f in found.findings)
    assert got == [
        (0.0, False, "contradicts"), (0.5, True, "subset"),
        (1.0, True, "adds detail"), (1.0, True, "same facts"),
    ]  # fmt: skip


def test_factuality_with_a_category_outside_a_to_e_is_an_error(
    root: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.script('{"category": "F"}', '{"category": "Z"}')
    found = score(root, [{"type": "factuality", "value": "x"}], "y")
    assert found.findings[0].score is None and "category A-E" in (found.findings[0].error or "")


def test_similar_is_the_cosine_of_the_embeddings(root: Path, fake_llm: FakeOpenAI) -> None:
    # matchesSimilarity: cosine >= threshold (0.75) - EPSILON; not-: <= threshold + EPSILON,
    # score 1 - cosine; handleSimilar with a list: the first passing value, else the lowest
    out, near, far = "the cat sat on the mat", "the cat sat on a mat", "zzz qqq"
    close = cosine(letter_counts(out), letter_counts(near))
    distant = cosine(letter_counts(out), letter_counts(far))
    found = score(
        root,
        [
            {"type": "similar", "value": near},
            {"type": "not-similar", "value": near},
            {"type": "similar", "value": [far, near], "threshold": 0.9},
            {"type": "similar", "value": far},
        ],
        out,
    )
    got = [(round(f.score or 0, 9), f.passed) for f in found.findings]
    assert got == [
        (round(close, 9), True), (round(1 - close, 9), False),
        (round(close, 9), True), (round(distant, 9), False),
    ]  # fmt: skip
    assert found.findings[3].reason == f"Similarity {distant:.2f} is less than threshold 0.75"
    assert fake_llm.requests == []  # embeddings only
    assert {r["model"] for r in fake_llm.embedded} == {"fake-model"}


def test_answer_relevance_means_three_generated_questions(root: Path, fake_llm: FakeOpenAI) -> None:
    # matchesAnswerRelevance: 3 questions generated from the answer, each embedded and
    # compared with the query var; score the mean cosine; pass at threshold (default 0)
    questions = ["what is the capital of france", "which city is the french capital", "zzz"]
    fake_llm.script(*questions)
    query = "What is the capital of France?"
    found = score(
        root,
        [{"type": "answer-relevance", "threshold": 0.8}],
        "Paris is the capital of France.",
        vars={"query": query},
    )
    expected = sum(cosine(letter_counts(query), letter_counts(q)) for q in questions) / 3
    finding = found.findings[0]
    assert finding.score == pytest.approx(expected, abs=1e-12)
    assert finding.passed is (expected >= 0.8)
    assert len(fake_llm.requests) == 3


def test_context_recall_relevance_and_faithfulness(root: Path, fake_llm: FakeOpenAI) -> None:
    context = "Paris is the capital of France.\nIt has 2 million people.\nIt rains a lot."

    def reply(body: dict[str, Any]) -> Reply:
        asked = body["messages"][-1]["content"]
        if "[Attributed]" in asked:
            # matchesContextRecall: lines with [Attributed] / non-empty lines = 1/2
            return Reply(
                text="1. Paris is the capital. So [Attributed]\n2. Lyon. So [Not Attributed]"
            )
        if "Insufficient Information" in asked:
            # matchesContextRelevance: lines copied / context lines = 1/3
            return Reply(text="Paris is the capital of France.")
        if "statements:\n" in asked and "Verdict" not in asked:
            return Reply(text="Paris is the capital.\nParis is in Spain.")
        # matchesContextFaithfulness: 1 - (verdicts not yes after the final line) / 2
        return Reply(text="...\nFinal verdict for each statement in order: Yes. No.")

    fake_llm.responder = reply
    found = score(
        root,
        [
            {"type": "context-recall", "value": "Paris is the capital. Lyon is big."},
            {"type": "context-relevance", "threshold": 0.5},
            {"type": "context-faithfulness", "threshold": 0.5},
        ],
        "Paris is the capital of France, in Spain.",
        vars={"context": context, "query": "What is the capital of France?"},
    )
    got = [(f.score, f.passed, f.reason) for f in found.findings]
    assert got == [
        (0.5, True, "Recall 0.50 is >= 0"),
        (pytest.approx(1 / 3), False, "Relevance 0.33 is < 0.5"),
        (0.5, True, "Faithfulness 0.50 is >= 0.5"),
    ]


def test_context_assertions_need_a_context_and_a_query(root: Path, fake_llm: FakeOpenAI) -> None:
    found = score(root, [{"type": "context-relevance"}], "x", vars={"context": "c"})
    assert 'requires a "query" variable' in (found.findings[0].error or "")
    assert fake_llm.requests == []


def test_the_grader_is_the_assertions_provider(root: Path, fake_llm: FakeOpenAI) -> None:
    # getFinalTest: assertion.provider || test.options.provider
    found = score(root, [{"type": "llm-rubric", "value": "x", "provider": "nowhere-model"}], "y")
    assert "nowhere-model" in (found.findings[0].error or "")
    assert model_of("openai:chat:gpt-4o-mini") == "openai/gpt-4o-mini"
    assert model_of("anthropic:messages:claude-3-5-haiku") == "anthropic/claude-3-5-haiku"
    assert model_of({"embedding": "openai:embedding:text-embedding-3-small"}, "embedding") == (
        "openai/text-embedding-3-small"
    )
    assert model_of("fake") == "fake"


def test_custom_rubric_prompt_messages(root: Path, fake_llm: FakeOpenAI) -> None:
    # loadRubricPrompt/renderLlmRubricPrompt: a JSON list of messages, templates filled
    fake_llm.script('{"pass": true, "score": 1, "reason": "ok"}')
    prompt = [
        {"role": "system", "content": "Grade strictly."},
        {"role": "user", "content": "Output: {{ output }} / Rubric: {{ rubric }} / {{ topic }}"},
    ]
    found = score(
        root,
        [{"type": "llm-rubric", "value": "short", "rubricPrompt": prompt}],
        Output(text="tiny"),
        vars={"topic": "cats"},
    )
    assert found.findings[0].passed is True
    assert fake_llm.requests[0]["messages"] == [
        {"role": "system", "content": "Grade strictly."},
        {"role": "user", "content": "Output: tiny / Rubric: short / cats"},
    ]
