"""The reference packages the conformance tests compare accord with: Autoblocks' testing SDK
(`autoblocksai==0.0.137`, the API of python-sdk fc6826dd) and line's conversation tests
(`cartesia-line==0.1.3`, cartesia-ai/line d09bd0b0). Both come with the test-only extra
`conformance` (`pip install -e '.[conformance]'`); without them these tests are skipped.

line's `line.evals.similarity_utils` imports `google.genai` at module level (its judge is
Gemini) although `cartesia-line` does not depend on it; the tests replace that judge anyway,
so a stand-in module takes its place and every call to it goes to the test's own function.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest


def _genai_stand_in() -> None:
    if "google.genai" in sys.modules:
        return
    genai = types.ModuleType("google.genai")
    genai_types = types.ModuleType("google.genai.types")

    class Client:  # replaced per test by `line_judge`; reaching this means a real call
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            raise AssertionError("line's judge was called without the test's stand-in")

    genai.Client = Client  # type: ignore[attr-defined]
    genai_types.GenerateContentConfig = dict  # type: ignore[attr-defined]
    genai.types = genai_types  # type: ignore[attr-defined]
    sys.modules["google.genai"] = genai
    sys.modules["google.genai.types"] = genai_types


_genai_stand_in()
line_similarity = pytest.importorskip(
    "line.evals.similarity_utils",
    reason="line is not installed: pip install -e '.[conformance]'",
)
line_turn = pytest.importorskip("line.evals.turn")


@contextmanager
def line_judge(answer: Callable[[str], str]) -> Iterator[list[str]]:
    """line's Gemini client replaced: `answer(prompt)` gives its reply ("YES" / "NO: why");
    yields the prompts asked."""
    asked: list[str] = []

    class Models:
        def generate_content(self, model: str, contents: str, config: Any) -> Any:
            asked.append(contents)
            return types.SimpleNamespace(text=answer(contents))

    class Client:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.models = Models()

    saved = line_similarity.Client
    line_similarity.Client = Client
    try:
        yield asked
    finally:
        line_similarity.Client = saved
