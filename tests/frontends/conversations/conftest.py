"""A project whose judge `fake` is the fake model server, answering yes or no by a table of
rules (the port of the seed project's similarity tests runs against it)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_project
from tests.fakes import FakeOpenAI, Reply

# (statement or expected text, actual text) -> the judge's answer; anything else: "no"
SAME = {
    ("What's your name?", "Can you tell me your name?"),
    ("Hello", "Hi"),
    ("Hi", "Hello"),
    ("one two three four", "1234"),
    ("San Francisco", "San Francisco, CA"),
}
STATEMENTS = {
    ("mentions compliance", "We are SOC-2 compliant"),
    ("mentions current weather conditions", "It is 68°F and sunny in San Francisco."),
    ("mentions tomorrow's forecast", "Tomorrow will be 61°F with fog."),
    ("greets the user", "Hey there"),
}


def judge_reply(body: dict[str, Any]) -> Reply:
    """The scripted judge: a `select_answer` tool call, or garbage for `<gibberish>`."""
    prompt = body["messages"][-1]["content"]
    statement = re.search(r"Statement: (.*)\n\nText: (.*)\n\nAnswer", prompt, re.S)
    meaning = re.search(r"Expected: (.*)\n\nActual: (.*)\n\nParaphrases", prompt, re.S)
    if statement:
        pair = (statement.group(1), statement.group(2))
        if pair[0] == "answers in gibberish":
            return Reply(text="maybe? it is hard to say")
        yes = pair in STATEMENTS
    elif meaning:
        yes = (meaning.group(1), meaning.group(2)) in SAME
    else:
        return Reply(text="not a judge question")
    reason = "it does" if yes else "it does not"
    return Reply.tool("select_answer", {"reason": reason, "answer": "yes" if yes else "no"})


@pytest.fixture
def judge_server() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    server.responder = judge_reply
    yield server
    server.close()


@pytest.fixture
def project(tmp_path: Path, judge_server: FakeOpenAI) -> Callable[..., Path]:
    """tests/conftest.py's project on the judge server, without retries; `judge=False`: no
    default judge."""

    def make(files: dict[str, str] | None = None, judge: bool = True) -> Path:
        defaults = "judge_model: fake" if judge else None
        return write_project(tmp_path, judge_server, files, defaults=defaults, max_retries=0)

    return make
