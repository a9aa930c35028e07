"""Fixtures for `accord test`: a project in tmp_path whose model is the scripted fake server.

`Script` answers agent prompts from per-prompt queues and plays both judges: the consistency
judge (custom prompt `JUDGE`, lines `S1:`/`S2:`) and the correctness judge (the built-in
PASS/FAIL prompt). Both judges call two texts consistent when they hold the same numbers.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from accord.cli import main
from tests.conftest import write_project
from tests.fakes import FakeOpenAI, Reply

JUDGE = """\
Task: {{ task_description }}
S1: {{ submission_1 }}
S2: {{ submission_2 }}
Answer A (consistent) or B (disagreement).
"""
JUDGE_YAML = textwrap.indent(JUDGE, "      ")


def numbers(text: str) -> list[str]:
    return re.findall(r"\d+(?:\.\d+)?", text.replace(",", ""))


@dataclass
class Script:
    """Scripted replies: agent prompts by substring, judges by rule."""

    answers: dict[str, list[str | Reply]] = field(default_factory=dict)
    judge_text: Callable[[str, str], str] | None = None
    judged: list[tuple[str, str]] = field(default_factory=list)
    graded: list[tuple[str, str]] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)

    def answer(self, key: str, *replies: str | Reply) -> None:
        """Replies to prompts containing `key`, in order; the last one repeats."""
        self.answers[key] = list(replies)

    def __call__(self, body: dict[str, Any]) -> Reply:
        users = [m for m in body["messages"] if m.get("role") == "user"]
        text = str(users[-1].get("content") or "") if users else ""
        pair = re.search(r"S1: (.*?)\nS2: (.*?)(?:\nAnswer|\Z)", text, re.S)
        if pair is not None:
            first, second = pair.group(1).strip(), pair.group(2).strip()
            self.judged.append((first, second))
            if self.judge_text is not None:
                return Reply(text=self.judge_text(first, second))
            same = numbers(first) == numbers(second)
            return Reply(text=f"Comparing the numbers.\n{'A' if same else 'B'}")
        if "Expected answer:" in text and "Answer given:" in text:
            return self._grade(text)
        self.prompts.append(text)
        for key, queue in self.answers.items():
            if key in text:
                reply = queue.pop(0) if len(queue) > 1 else queue[0]
                return reply if isinstance(reply, Reply) else Reply(text=reply)
        return Reply(text=f"no scripted answer for: {text[:80]}")

    def _grade(self, text: str) -> Reply:
        expected = text.split("Expected answer:\n", 1)[1].split("\n\nAnswer given:", 1)[0]
        given = text.split("Answer given:\n", 1)[1].split("\n\nThe answer PASSES", 1)[0]
        self.graded.append((expected, given))
        verdict = "PASS" if numbers(expected) == numbers(given) else "FAIL"
        return Reply(text=f"The figures {'match' if verdict == 'PASS' else 'differ'}.\n{verdict}")


@pytest.fixture
def script(fake_llm: FakeOpenAI) -> Script:
    scripted = Script()
    fake_llm.responder = scripted
    return scripted


@dataclass
class Run:
    """One `accord test` invocation."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def doc(self) -> dict[str, Any]:
        assert self.stdout.strip(), f"no JSON on stdout; stderr:\n{self.stderr}"
        return json.loads(self.stdout)  # type: ignore[no-any-return]


def accord_test(*args: str | Path) -> Run:
    result = CliRunner().invoke(main, ["test", *(str(a) for a in args)], catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def project(tmp_path: Path, fake_llm: FakeOpenAI) -> Callable[..., Path]:
    """Write files (dedented) under tmp_path, with a config whose model is the fake server;
    returns the path of the first file."""

    def make(files: dict[str, str], config_extra: str = "") -> Path:
        assert files
        write_project(
            tmp_path,
            fake_llm,
            files,
            defaults="model: fake",
            config_extra=config_extra,
            dedent=True,
        )
        return tmp_path / next(iter(files))

    return make
