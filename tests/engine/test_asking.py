"""The one "ask until the reply can be read" loop of judges and routers: how often it asks,
what it returns when no reply could be read, and how a forced choice is read."""

from __future__ import annotations

import asyncio

import pytest

from accord.engine.asking import Reading, ask_until_parsed, read_forced_choice
from accord.engine.usage import Completion, ToolCall


def _reply(text: str = "", *calls: ToolCall) -> Completion:
    return Completion(text, tuple(calls), 0, 0, 0.0, 0.0)


def _last_word(text: str, choices: object) -> str | None:
    word = text.split()[-1] if text.split() else ""
    return word if word in ("Yes", "No") else None


def test_asks_again_while_the_reply_cannot_be_read_then_reports_the_last_problem() -> None:
    asked: list[int] = []

    async def ask(attempt: int) -> Completion:
        asked.append(attempt)
        return _reply(f"reply {attempt}")

    def read(completion: Completion) -> Reading[str]:
        return Reading(None, f"nothing in {completion.text!r}")

    parsed = asyncio.run(ask_until_parsed(ask, read, attempts=3))
    assert asked == [0, 1, 2]
    assert parsed.value is None and parsed.problem == "nothing in 'reply 2'"
    assert parsed.text == "reply 2"


def test_stops_at_the_first_reply_read() -> None:
    asked: list[int] = []

    async def ask(attempt: int) -> Completion:
        asked.append(attempt)
        return _reply("yes" if attempt == 1 else "hmm")

    parsed = asyncio.run(
        ask_until_parsed(ask, lambda c: Reading(c.text if c.text == "yes" else None))
    )
    assert asked == [0, 1] and parsed.value == "yes" and parsed.problem == ""


def test_a_failed_call_is_raised_not_retried() -> None:
    asked: list[int] = []

    async def ask(attempt: int) -> Completion:
        asked.append(attempt)
        raise RuntimeError("down")

    with pytest.raises(RuntimeError, match="down"):
        asyncio.run(ask_until_parsed(ask, lambda c: Reading(c.text)))
    assert asked == [0]


def test_forced_choice_from_the_call_or_from_the_text() -> None:
    choices = ["Yes", "No"]
    call = ToolCall("1", "pick", '{"answer": "No", "reason": "wrong"}')
    by_call = read_forced_choice(_reply("", call), "pick", "answer", choices, _last_word)
    assert (by_call.name, by_call.reason, by_call.called) == ("No", "wrong", True)
    by_text = read_forced_choice(_reply("I say Yes"), "pick", "answer", choices, _last_word)
    assert (by_text.name, by_text.reason, by_text.called) == ("Yes", "I say Yes", False)
    other = ToolCall("1", "pick", '{"answer": "Maybe"}')
    outside = read_forced_choice(_reply("", other), "pick", "answer", choices, _last_word)
    assert outside.name is None and outside.given == "Maybe" and outside.json
    broken = ToolCall("1", "pick", "Yes!")
    garbled = read_forced_choice(_reply("", broken), "pick", "answer", choices, _last_word)
    assert garbled.name is None and not garbled.json and garbled.raw == "Yes!"
