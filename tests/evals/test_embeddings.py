"""Embedding-based RAG scores through the models door: a config.yml model at the fake
server's `/embeddings`, the call cache, and the lexical score when no model is configured."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, letter_counts

SUITE = """\
target: echo
evaluators:
  - {type: semantic_similarity, threshold: {gte: 0.9}}
cases:
  - {id: close, input: The cat sat on the mat, expected: the cat sat on a mat}
  - {id: far, input: zzz, expected: the cat sat on a mat}
"""


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.hypot(*a) * math.hypot(*b))


@pytest.mark.slow
def test_semantic_similarity_uses_the_configured_embedding_model(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    root = project({"s.eval.yml": SUITE})
    config = root / "config.yml"
    config.write_text(config.read_text() + "  embedding_model: fake\n")
    run = accord("eval", root / "s.eval.yml", "--format", "json")
    suite = run.suite()
    scores = {c["id"]: c["evaluations"][0] for c in suite["cases"]}
    close = cosine(letter_counts("the cat sat on a mat"), letter_counts("The cat sat on the mat"))
    assert abs(scores["close"]["score"] - round(close, 4)) < 1e-4 and close > 0.9
    assert scores["close"]["scoring"] == "embedding" and scores["close"]["passed"] is True
    assert scores["far"]["score"] == 0.0 and scores["far"]["passed"] is False
    assert run.exit_code == 1  # `far` failed
    assert [r["model"] for r in fake_llm.embedded] == ["fake-model", "fake-model"]
    inputs = sorted(tuple(r["input"]) for r in fake_llm.embedded)  # the cases run side by side
    assert inputs == [
        ("the cat sat on a mat", "The cat sat on the mat"),
        ("the cat sat on a mat", "zzz"),
    ]
    assert fake_llm.requests == []  # no chat call: embeddings only
    again = accord("eval", root / "s.eval.yml", "--format", "json")
    assert again.suite()["cases"][0]["evaluations"][0]["score"] == scores["close"]["score"]
    assert len(fake_llm.embedded) == 2  # the second run's vectors came from the call cache
    replay = accord("eval", root / "s.eval.yml", "--cache", "replay", "-q")
    assert replay.exit_code == 1 and len(fake_llm.embedded) == 2


def test_without_an_embedding_model_the_score_is_lexical_and_says_so(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    root = project({"s.eval.yml": SUITE})
    run = accord("eval", root / "s.eval.yml", "--format", "json")
    found = run.suite()["cases"][0]["evaluations"][0]
    assert found["scoring"] == "lexical" and 0 < found["score"] < 1
    assert fake_llm.embedded == [] and fake_llm.requests == []


@pytest.mark.slow
def test_a_failing_embedding_call_is_an_error_of_that_evaluation(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    root = project({"s.eval.yml": SUITE})
    config = root / "config.yml"
    config.write_text(config.read_text() + "  embedding_model: fake\n")

    def broken(text: str) -> list[float]:
        raise RuntimeError("no vectors today")

    fake_llm.embed = broken  # the server's handler fails: the connection drops
    run = accord("eval", root / "s.eval.yml", "--format", "json", "--cache", "off")
    assert run.exit_code == 3  # every case errored
    found = run.suite()["cases"][0]["evaluations"][0]
    assert found["score"] is None and "embedding call to fake failed" in found["error"]
