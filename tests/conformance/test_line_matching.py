"""Conversation matching against line's own (cartesia-line==0.1.3, cartesia-ai/line
d09bd0b0: `line.evals.turn.Turn.is_similar` and `line.evals.similarity_utils`): the same
expected and actual turns through both, line's Gemini judge and accord's judge replaced by one
deterministic function, the verdicts equal.

The generated cases stay where line's README and accord agree. Where line's code departs from
its README (SPEC §9.8 keeps the README), the difference has its own example below: `None` in
the EXPECTED dict skips the key (line's code reads it from the actual side), an expected tool
result is matched by the text rules (line compares it exactly), repeated calls of one tool are
all kept. `"*"` and `<statement>` are the expected side's (line also reads them in the reply).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from accord.tasks.suites.frontends.conversations.matching import Verdict, match_dict, match_text
from accord.tasks.suites.frontends.conversations.runner import _check_turn
from accord.tasks.suites.frontends.conversations.turns import AgentTurn, ToolCall
from tests.conformance.references import line_judge, line_similarity, line_turn

pytestmark = pytest.mark.reference

WORDS = ["hello", "there", "rain", "sunny", "name", "your", "city", "paris", "Hello", "RAIN"]


def words(text: str) -> set[str]:
    return set(text.casefold().split())


def same_meaning(a: str, b: str) -> bool:
    """The stand-in judge: the same words, in any order and case."""
    return words(a) == words(b)


def satisfies(statement: str, text: str) -> bool:
    """The stand-in judge of a statement: every word of it is in the text."""
    return words(statement) <= words(text)


def line_answer(prompt: str) -> str:
    pair = re.search(r'String A: "(.*)"\n\s*String B: "(.*)"', prompt)
    if pair:
        return "YES" if same_meaning(pair[1], pair[2]) else "NO: different words"
    claim = re.search(r'Statement: "(.*)"\n\s*Text: "(.*)"', prompt)
    assert claim, prompt
    return "YES" if satisfies(claim[1], claim[2]) else "NO: a word is missing"


class Judge:
    async def statement(self, statement: str, text: str) -> Verdict:
        return Verdict(satisfies(statement, text), "a word is missing")

    async def same_meaning(self, expected: str, actual: str) -> Verdict:
        return Verdict(same_meaning(expected, actual), "different words")


phrase = st.lists(st.sampled_from(WORDS), max_size=3).map(" ".join)
spaced = st.tuples(phrase, st.sampled_from(["", " ", "  "])).map(lambda p: p[1] + p[0] + p[1])
statement = st.lists(st.sampled_from(WORDS), min_size=1, max_size=2).map(
    lambda w: "<" + " ".join(w) + ">"
)
expected_text = st.one_of(spaced, statement, st.just("*"))


def actual_like(draw: Any, expected: str) -> str:
    """A reply near the expected text (its words reordered or recased) or another one."""
    if expected.startswith("<") or expected == "*" or draw(st.booleans()):
        return draw(spaced)
    shuffled = draw(st.permutations(expected.split()))
    return " ".join(w.upper() if draw(st.booleans()) else w for w in shuffled)


@st.composite
def text_pairs(draw: Any) -> tuple[str | list[str], str]:
    if draw(st.booleans()):
        alternatives = draw(st.lists(expected_text, min_size=1, max_size=3))
        return alternatives, actual_like(draw, alternatives[0])
    expected = draw(expected_text)
    return expected, actual_like(draw, expected)


@settings(max_examples=300, deadline=None)
@given(text_pairs())
def test_text_matching_agrees_with_line(pair: tuple[str | list[str], str]) -> None:
    expected, actual = pair
    ours = asyncio.run(match_text(expected, actual, Judge())) is None
    with line_judge(line_answer):
        theirs = line_similarity.is_similar_text(expected, actual).is_success
    event(f"match={ours}")
    assert ours is theirs


scalars = st.one_of(phrase, st.integers(-3, 3))


@st.composite
def dicts(draw: Any, depth: int = 0) -> dict[str, Any]:
    keys = draw(st.lists(st.sampled_from(["a", "b", "city", "day"]), max_size=3, unique=True))
    values = scalars if depth else st.one_of(scalars, dicts(depth=1))
    return {k: draw(values) for k in keys}


def mutated(draw: Any, expected: dict[str, Any]) -> dict[str, Any]:
    """An actual dict near the expected one: values of the same type changed, keys dropped or
    added; expected strings may become "*" or a statement (line and accord read both)."""
    actual: dict[str, Any] = {}
    for key, value in expected.items():
        choice = draw(st.integers(0, 4))
        if choice == 0:
            continue  # dropped
        if isinstance(value, dict):
            actual[key] = mutated(draw, value) if choice == 1 else dict(value)
        elif isinstance(value, str):
            actual[key] = actual_like(draw, value) if choice == 1 else value
        else:
            actual[key] = draw(st.integers(-3, 3)) if choice == 1 else value
    if draw(st.integers(0, 5)) == 0:
        actual["extra"] = 1
    return actual


def loosened(draw: Any, expected: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in expected.items():
        if isinstance(value, str) and draw(st.integers(0, 3)) == 0:
            out[key] = draw(st.one_of(st.just("*"), statement))
        elif isinstance(value, dict):
            out[key] = loosened(draw, value)
        else:
            out[key] = value
    return out


@st.composite
def dict_pairs(draw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    base = draw(dicts())
    return loosened(draw, base), mutated(draw, base)


@settings(max_examples=300, deadline=None)
@given(dict_pairs())
def test_dict_matching_agrees_with_line(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    expected, actual = pair
    ours = asyncio.run(match_dict(expected, actual, Judge())) is None
    with line_judge(line_answer):
        # as line's Turn.is_similar calls it: the expected turn's arguments first
        theirs = line_similarity.is_similar_dict(expected, actual).is_success
    event(f"match={ours}")
    assert ours is theirs


@st.composite
def turn_pairs(draw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """An expected agent turn and the turn taken: text, and tool calls of distinct names
    (line pairs calls by sorted name) whose results are numbers or not given on both sides."""
    text, reply = draw(text_pairs())
    names = draw(st.lists(st.sampled_from(["weather", "lookup", "book"]), max_size=3, unique=True))
    expected_calls, actual_calls = [], []
    for name in names:
        args, taken = draw(dict_pairs())
        result = draw(st.one_of(st.none(), st.integers(0, 2)))
        got = result if result is None or draw(st.booleans()) else draw(st.integers(0, 2))
        expected_calls.append({"name": name, "arguments": args, "result": result})
        actual_calls.append({"name": name, "arguments": taken, "result": got})
    if actual_calls and draw(st.integers(0, 5)) == 0:
        actual_calls.pop()  # a call not made
    if draw(st.booleans()):
        actual_calls.reverse()  # the order of calls does not matter to either
    return {"text": text, "tool_calls": expected_calls}, {"text": reply, "tool_calls": actual_calls}


@settings(max_examples=300, deadline=None)
@given(turn_pairs())
def test_turn_verdicts_agree_with_line(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    expected, actual = pair
    ours_expected = AgentTurn(expected["text"], [ToolCall(**c) for c in expected["tool_calls"]])
    found = asyncio.run(_check_turn(ours_expected, {"turn": 2, **actual}, Judge()))  # type: ignore[arg-type]
    with line_judge(line_answer):
        theirs = line_turn.AgentTurn(**expected).is_similar(line_turn.AgentTurn(**actual))
    event(f"match={found == []}")
    assert (found == []) is (theirs is None), (found, theirs)


# --- where line's code departs from its README: accord follows the README -------------------


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_none_in_the_expected_dict_skips_the_key() -> None:
    """README: None in the expected dict skips the key. line's code compares it (its sides
    are swapped: it skips None in the reply instead)."""
    expected, actual = {"city": "paris", "day": None}, {"city": "paris", "day": "monday"}
    assert run(match_dict(expected, actual, Judge())) is None
    with line_judge(line_answer):
        assert line_similarity.is_similar_dict(expected, actual).is_success is False


def test_an_expected_tool_result_is_matched_by_the_text_rules() -> None:
    expected = AgentTurn("*", [ToolCall("weather", {}, {"sky": "sunny rain"})])
    reply = {"turn": 2, "text": "ok", "tool_calls": [
        {"name": "weather", "arguments": {}, "result": {"sky": "RAIN sunny"}}]}  # fmt: skip
    assert run(_check_turn(expected, reply, Judge())) == []  # type: ignore[arg-type]


def test_repeated_calls_of_one_tool_are_all_kept() -> None:
    expected = AgentTurn("*", [ToolCall("lookup", {"a": 1}), ToolCall("lookup", {"a": 2})])
    twice = [{"name": "lookup", "arguments": {"a": 2}}, {"name": "lookup", "arguments": {"a": 1}}]
    once = [{"name": "lookup", "arguments": {"a": 1}}, {"name": "lookup", "arguments": {"a": 1}}]
    judge: Any = Judge()
    assert run(_check_turn(expected, {"turn": 2, "text": "", "tool_calls": twice}, judge)) == []
    assert run(_check_turn(expected, {"turn": 2, "text": "", "tool_calls": once}, judge)) != []
