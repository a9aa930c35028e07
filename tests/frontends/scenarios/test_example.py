"""The scenario example of workflows/scenarios: as written (a Python agent class, the `local`
model as judge, offline), and with a scripted judge whose scores are known."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import fake_model_config
from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply
from tests.models.harness import needs_llama

EXAMPLE = Path(__file__).resolve().parents[3] / "workflows" / "scenarios"


@pytest.fixture
def example(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "scenarios"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns(".accord", "reports"))
    sys.modules.pop("support_agent", None)
    yield folder
    sys.modules.pop("support_agent", None)


def run(folder: Path, *args: str) -> tuple[int, dict[str, object], str]:
    result = accord("eval", folder / "scenarios.yaml", "--project-root", folder, "--output-dir",
                    folder / "reports", "--format", "json", *args)  # fmt: skip
    return result.exit_code, result.suite(), result.stderr


@pytest.mark.slow
@needs_llama
def test_the_example_runs_offline_on_the_local_model(example: Path) -> None:
    code, suite, stderr = run(example)
    assert code in (0, 1), stderr  # how the tiny model scores is its own affair
    cases = suite["cases"]
    assert isinstance(cases, list)
    assert [c["id"] for c in cases] == ["Return policy [terse]", "Return policy [friendly]",
                                        "Opening hours [terse]", "Opening hours [friendly]"]  # fmt: skip
    for case in cases:
        # the local judge answers by a forced call under a grammar: always every metric
        assert case["status"] in ("passed", "failed"), case
    reports = list((example / "reports").glob("scenarios-*.json"))
    data = json.loads(reports[0].read_text())
    assert all(len(c["metrics"]) == 2 and c["error"] is None for c in data["cases"])


def test_the_example_with_a_scripted_judge(example: Path, fake_llm: FakeOpenAI) -> None:
    def judge(body: dict[str, object]) -> Reply:
        prompt = str(body["messages"][-1]["content"])  # type: ignore[index]
        good = "30 days" in prompt.split("Agent response:")[1] or "9am" in prompt
        score = 9 if good else 2
        return Reply.tool("submit_evaluation", {
            "correctness": {"score": score, "explanation": "by the rules"},
            "relevance": {"score": 8, "explanation": "on topic"}})  # fmt: skip

    fake_llm.responder = judge
    (example / "config.yml").write_text(fake_model_config(fake_llm))
    code, suite, stderr = run(example, "--judge-model", "fake")
    assert code == 0, stderr
    cases = suite["cases"]
    assert isinstance(cases, list)
    assert [c["score"] for c in cases] == [0.85, 0.85, 0.85, 0.85]
    prompts = [str(r["messages"][-1]["content"]) for r in fake_llm.requests]
    policy = next(p for p in prompts if "Return policy" in p and "Happy to help" in p)
    # the macros: a Faker name set in the input, CALC and OPEN in the expected output
    assert "Returns within 30 days: Items may be returned within 30 days" in policy
    assert "The answer must give the number of days." in policy
