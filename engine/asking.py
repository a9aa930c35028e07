"""Asking a model until its reply can be read, and reading a choice out of a reply.

Every caller that needs something definite out of a model's reply (a judge's verdict, one of
named choices, a JSON evaluation, a route) asks through `ask_until_parsed`: ask, read the
reply, ask again (a fresh sample) while nothing could be read, at most `attempts` times. What
comes back says what was read, or why the last reply could not be; the caller turns that into
its own error, so an unreadable reply is never taken for an answer.

`read_forced_choice` reads a choice among names from a reply to a forced tool call whose
argument `field` is an enum of the names, or, from a provider that ignored the tool, from the
reply's text.

Beside `models.py`: it asks through whatever call the caller gives it (the models door itself,
or a judge's counted call), so each caller keeps its own sampling, counting and errors.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .usage import Completion

T = TypeVar("T")


@dataclass(frozen=True)
class Reading(Generic[T]):
    """What was read of one reply: `value`, or None and the `problem` found instead."""

    value: T | None
    problem: str = ""


@dataclass(frozen=True)
class Parsed(Generic[T]):
    """The outcome of asking: the `value` read (None when no reply could be read), the
    `completion` it was read from (else the last one), and the last reply's `problem`."""

    value: T | None
    completion: Completion
    problem: str = ""

    @property
    def text(self) -> str:
        return self.completion.text or ""


async def ask_until_parsed(
    ask: Callable[[int], Awaitable[Completion]],
    read: Callable[[Completion], Reading[T]],
    *,
    attempts: int = 2,
) -> Parsed[T]:
    """Call `ask(attempt)` for attempt 0, 1, ... until `read` finds a value in its reply, at
    most `attempts` times. A failed call is `ask`'s to raise: it is not retried here (the
    models door retries what is worth retrying)."""
    if attempts < 1:
        raise ValueError("ask_until_parsed needs at least one attempt")
    for attempt in range(attempts):
        completion = await ask(attempt)
        reading = read(completion)
        if reading.value is not None:
            return Parsed(reading.value, completion)
    return Parsed(None, completion, reading.problem)


@dataclass(frozen=True)
class Choice:
    """A choice read from a reply: `name` (None when the reply names none of the choices)
    and `reason`. `called`: the model answered by the tool call (else in text); `given` is
    what the call's `field` held (None when its arguments were not a JSON object); `raw` the
    call's arguments as sent, or the reply's text."""

    name: str | None
    reason: str
    called: bool
    given: Any = None
    raw: str = ""
    json: bool = True


def read_forced_choice(
    completion: Completion,
    tool: str,
    field: str,
    choices: Sequence[str],
    parse_text: Callable[[str, Sequence[str]], str | None],
) -> Choice:
    """The choice of a reply to a forced `tool` call whose `field` names one of `choices`;
    a reply without the call is read by `parse_text` (a provider that ignored the forced
    tool but answered in text), its whole text being the reason."""
    calls = [c for c in completion.tool_calls if c.name == tool]
    if not calls:
        text = (completion.text or "").strip()
        found = parse_text(text, choices) if text else None
        return Choice(found, text if found is not None else "", called=False, raw=text)
    raw = calls[0].arguments
    try:
        args = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return Choice(None, "", called=True, raw=raw, json=False)
    given = args.get(field) if isinstance(args, dict) else None
    if given not in choices:
        return Choice(None, "", called=True, given=given, raw=raw)
    return Choice(str(given), str(args.get("reason", "")), called=True, given=given, raw=raw)
