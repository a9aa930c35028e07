"""The public API as a user's type checker sees it: `accord`, `accord.evals`,
`accord.conversations` and `accord.scenarios`. A user file that imports and uses each
namespace passes `mypy --strict`, and no exported name reaches it as `Any`."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bounds import PROCESS_SECONDS

SRC = Path(__file__).resolve().parent.parent / "src"
NAMESPACES = ("accord", "accord.evals", "accord.conversations", "accord.scenarios")

USES = """\
from __future__ import annotations

import accord
import accord.conversations
import accord.evals
import accord.scenarios
from accord import AccordError, Status, run_workflow
from accord.conversations import AgentTurn, ConversationRunner, ToolCall, UserTurn
from accord.evals import (
    BaseHasAllSubstrings,
    BaseRagasFaithfulness,
    BaseTestCase,
    BaseTestEvaluator,
    Evaluation,
    SuiteRun,
    Threshold,
    md5,
    run_test_suite,
)
from accord.scenarios import RegressionRunner, macro


class Question(BaseTestCase):
    def __init__(self, text: str) -> None:
        self.text = text

    def hash(self) -> str:
        return md5(self.text)


class Long(BaseTestEvaluator):
    id = "long"

    def evaluate_test_case(self, test_case: Question, output: str) -> Evaluation:
        return Evaluation(score=float(len(output) > 3), threshold=Threshold(gte=1))


class Mentions(BaseHasAllSubstrings[Question, str]):
    id = "mentions"

    def test_case_mapper(self, test_case: Question) -> list[str]:
        return [test_case.text]

    def output_mapper(self, output: str) -> str:
        return output


class Grounded(BaseRagasFaithfulness[Question, str]):
    id = "grounded"


def suite() -> SuiteRun | None:
    return run_test_suite(
        "s", [Question("a")], lambda case: "an answer", [Long(), Mentions(), Grounded()]
    )


def workflow() -> bool:
    try:
        result = run_workflow("w.workflow.yml")
    except AccordError as exc:
        return bool(exc)
    return result.status is Status.SUCCEEDED


def conversation() -> int:
    runner = ConversationRunner(
        lambda history: "hello",
        [UserTurn("hi"), AgentTurn(text="hello", tool_calls=[ToolCall(name="greet")])],
    )
    return runner.run_sync().turns


@macro("SHOUT")
def shout(text: str) -> str:
    return text.upper()


def scenarios() -> int:
    return len(RegressionRunner(max_concurrency=2).run("s.yaml", exit_on_failure=False))
"""


def _exports() -> list[tuple[str, str]]:
    return [
        (namespace, name)
        for namespace in NAMESPACES
        for name in importlib.import_module(namespace).__all__
    ]


def test_every_export_imports_from_its_namespace() -> None:
    for namespace, name in _exports():
        assert getattr(importlib.import_module(namespace), name) is not None, (namespace, name)


@pytest.mark.slow
def test_a_users_strict_mypy_sees_every_export_with_its_real_type(tmp_path: Path) -> None:
    pytest.importorskip("mypy")  # a dev dependency
    exports = _exports()
    assert len(exports) > 62  # every name of `accord`, and each namespace's own
    reveals = "".join(f"reveal_type({namespace}.{name})\n" for namespace, name in exports)
    user = tmp_path / "user_code.py"
    user.write_text(USES + "\n\n" + reveals, encoding="utf-8")
    # accord's own files are read as a user's installed copy is: analysed, not reported on
    env = {**os.environ, "MYPYPATH": str(SRC)}
    command = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
               "--no-error-summary", "--cache-dir", str(tmp_path / "cache"),
               "--python-version", "3.11", str(user)]  # fmt: skip
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=PROCESS_SECONDS
    )
    lines = done.stdout.splitlines()
    problems = [line for line in lines if ": error:" in line]
    assert not problems, "\n".join(problems)
    revealed = [line.split("Revealed type is ", 1)[1] for line in lines if "Revealed type" in line]
    assert len(revealed) == len(exports), done.stdout + done.stderr
    for (namespace, name), shown in zip(exports, revealed, strict=True):
        # the name's own type (a class, a function's signature), never `Any`
        assert shown != '"Any"', f"{namespace}.{name} is Any to mypy"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["NotAnExport", "run_workflows"])
def test_a_name_accord_does_not_export_is_a_type_error(tmp_path: Path, name: str) -> None:
    pytest.importorskip("mypy")
    user = tmp_path / "user_code.py"
    user.write_text(f"from accord import {name}\n", encoding="utf-8")
    env = {**os.environ, "MYPYPATH": str(SRC)}
    command = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
               "--cache-dir", str(tmp_path / "cache"), str(user)]  # fmt: skip
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=PROCESS_SECONDS
    )
    assert done.returncode == 1
    assert f'Module "accord" has no attribute "{name}"' in done.stdout


def test_the_namespaces_are_attributes_of_accord() -> None:
    code = (
        "import accord\n"
        "print(accord.evals.run_test_suite is accord.run_test_suite,"
        " accord.conversations.UserTurn is accord.UserTurn,"
        " accord.scenarios.RegressionRunner is accord.RegressionRunner)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True,
        timeout=PROCESS_SECONDS,
    )  # fmt: skip
    assert done.stdout.split() == ["True", "True", "True"], done.stderr
