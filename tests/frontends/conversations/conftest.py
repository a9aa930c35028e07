"""A project whose judge `fake` is the fake model server, answering yes or no by a table of
rules (the port of the seed project's similarity tests runs against it)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fake_model_config
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
    def make(files: dict[str, str] | None = None, judge: bool = True) -> Path:
        config = fake_model_config(judge_server, max_retries=0)
        if judge:
            config += "defaults:\n  judge_model: fake\n"
        (tmp_path / "config.yml").write_text(config)
        for name, text in (files or {}).items():
            (tmp_path / name).write_text(text)
        return tmp_path

    return make
