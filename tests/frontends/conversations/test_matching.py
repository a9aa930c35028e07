"""The matching rules, ported from the seed project's similarity tests (wildcards, statements,
semantic matches and mismatches, nested dicts, alternatives), against a scripted judge that
records what it was asked."""

from __future__ import annotations

import asyncio
from typing import Any

from accord import ToolCall
from accord.tasks.suites.frontends.conversations.matching import (
    Mismatch,
    Verdict,
    match_dict,
    match_text,
    match_tool_calls,
    match_value,
)

YES = {
    ("mentions compliance", "We are SOC-2 compliant"),
    ("What's your name?", "Can you tell me your name?"),
    ("Hi", "Hello"),
    ("Hello", "Hi"),
    ("San Francisco", "San Francisco, CA"),
}


class ScriptedJudge:
    def __init__(self) -> None:
        self.asked: list[tuple[str, str, str]] = []

    async def statement(self, statement: str, text: str) -> Verdict:
        self.asked.append(("statement", statement, text))
        return Verdict((statement, text) in YES, "scripted")

    async def same_meaning(self, expected: str, actual: str) -> Verdict:
        self.asked.append(("meaning", expected, actual))
        return Verdict((expected, actual) in YES, "scripted")


def run(coro: Any) -> Mismatch | None:
    result: Mismatch | None = asyncio.run(coro)
    return result


def test_a_wildcard_matches_anything_without_the_judge() -> None:
    judge = ScriptedJudge()
    assert run(match_text("*", "Hello world", judge)) is None
    assert run(match_text(" * ", "", judge)) is None
    assert judge.asked == []


def test_equal_text_after_normalising_case_and_spaces_needs_no_judge() -> None:
    judge = ScriptedJudge()
    assert run(match_text("  Hello   WORLD ", "hello world", judge)) is None
    assert judge.asked == []


def test_statements_ask_the_judge() -> None:
    judge = ScriptedJudge()
    assert run(match_text("<mentions compliance>", "We are SOC-2 compliant", judge)) is None
    found = run(match_text("<mentions SOC-2>", "We follow general security practices", judge))
    assert found is not None and found.rule == "statement" and found.reason == "scripted"
    assert judge.asked == [
        ("statement", "mentions compliance", "We are SOC-2 compliant"),
        ("statement", "mentions SOC-2", "We follow general security practices"),
    ]


def test_semantic_similarity_and_difference() -> None:
    judge = ScriptedJudge()
    assert run(match_text("What's your name?", "Can you tell me your name?", judge)) is None
    found = run(match_text("What's your name?", "What's your age?", judge))
    assert found is not None and found.rule == "same meaning"
    assert [a[0] for a in judge.asked] == ["meaning", "meaning"]


def test_an_empty_expected_text_matches_only_an_empty_reply() -> None:
    judge = ScriptedJudge()
    assert run(match_text("", "", judge)) is None
    found = run(match_text("", "something", judge))
    assert found is not None and found.rule == "equal text" and judge.asked == []


def test_lists_of_alternatives() -> None:
    judge = ScriptedJudge()
    assert run(match_text(["Hello"], "Hello", judge)) is None
    assert run(match_text("Hello", "Bye", judge)) is not None
    assert run(match_text(["Hi"], "Hello", judge)) is None  # by meaning
    assert run(match_text(["*"], "Hello", judge)) is None
    assert run(match_text(["oranges", "Hi"], "Hello", judge)) is None
    found = run(match_text(["apples", "oranges"], "cats", judge))
    assert found is not None and found.rule == "no alternative matched"
    assert "'apples'" in found.reason and "'oranges'" in found.reason


def test_dicts_compare_recursively() -> None:
    judge = ScriptedJudge()
    expected = {"user": {"name": "John"}, "status": "active"}
    assert run(match_dict({"user": {"name": "John"}, "status": "active"}, expected, judge)) is None
    found = run(match_dict(expected, {"user": {"name": "Jane"}, "status": "active"}, judge))
    assert found is not None and found.where == "user.name"
    assert found.expected == "John" and found.actual == "Jane"


def test_none_in_the_expected_dict_skips_the_key() -> None:
    judge = ScriptedJudge()
    expected = {"temperature": None, "condition": "*"}
    assert run(match_dict(expected, {"temperature": 61, "condition": "fog"}, judge)) is None
    assert run(match_dict(expected, {"condition": "fog"}, judge)) is None  # may be absent
    # None in the ACTUAL dict is a value like any other (the reference mixed the sides up)
    found = run(match_dict({"temperature": 61}, {"temperature": None}, judge))
    assert found is not None and found.rule == "equal value"


def test_missing_and_unexpected_keys() -> None:
    judge = ScriptedJudge()
    found = run(match_dict({"a": 1, "b": 2}, {"a": 1, "c": 3}, judge))
    assert found is not None and found.rule == "same keys"
    assert "missing keys ['b']" in found.reason and "unexpected keys ['c']" in found.reason


def test_other_values_compare_by_equality() -> None:
    judge = ScriptedJudge()
    assert run(match_value(3, 3, judge)) is None
    assert run(match_value(3, 3.0, judge)) is None
    assert run(match_value([1, 2], [1, 2], judge)) is None  # lists: equality
    assert run(match_value([1, 2], [2, 1], judge)) is not None
    assert run(match_value(True, 1, judge)) is not None  # True == 1 in Python, not here
    assert run(match_value("72", 72, judge)) is not None
    assert judge.asked == []


def test_tool_calls_by_count_name_arguments_and_result() -> None:
    judge = ScriptedJudge()
    made = [ToolCall("get_weather", {"location": "San Francisco, CA"}, {"temp": 61, "sky": "fog"})]
    expected = [ToolCall("get_weather", {"location": "San Francisco"}, {"temp": None, "sky": "*"})]
    assert run(match_tool_calls(expected, made, judge)) is None
    assert run(match_tool_calls(expected + expected, made, judge)).rule == "tool call count"  # type: ignore[union-attr]
    other = [ToolCall("get_time", {"location": "San Francisco"})]
    assert run(match_tool_calls(expected, other, judge)).rule == "tool name"  # type: ignore[union-attr]
    wrong = [ToolCall("get_weather", {"location": "Paris"}, {"temp": 50, "sky": "rain"})]
    found = run(match_tool_calls(expected, wrong, judge))
    assert found is not None and found.where == "tool call 1 (get_weather).arguments.location"
    result = [ToolCall("get_weather", {"location": "San Francisco"}, {"temp": 61})]
    found = run(match_tool_calls(expected, result, judge))
    assert found is not None and found.rule.startswith("tool result")


def test_repeated_calls_of_one_tool_are_all_kept_in_any_order() -> None:
    judge = ScriptedJudge()
    made = [
        ToolCall("get_weather", {"location": "Paris"}),
        ToolCall("get_weather", {"location": "Rome"}),
    ]
    expected = [
        ToolCall("get_weather", {"location": "Rome"}),
        ToolCall("get_weather", {"location": "Paris"}),
    ]
    assert run(match_tool_calls(expected, made, judge)) is None
    twice = [
        ToolCall("get_weather", {"location": "Rome"}),
        ToolCall("get_weather", {"location": "Rome"}),
    ]
    found = run(match_tool_calls(twice, made, judge))
    assert found is not None  # the reference collapsed the two calls into one and passed
