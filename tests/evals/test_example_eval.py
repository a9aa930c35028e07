"""The evaluation example of workflows/evals: as written (the `local` model as target and
judge, offline), and with a scripted model in its place, whose verdicts are known."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import fake_model_config
from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply
from tests.models.harness import needs_llama

EXAMPLE = Path(__file__).resolve().parents[2] / "workflows" / "evals"


@pytest.fixture
def example(tmp_path: Path) -> Path:
    folder = tmp_path / "evals"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns(".accord"))
    return folder


@pytest.mark.slow
@needs_llama
def test_the_example_runs_offline_on_the_local_model(example: Path) -> None:
    run = accord("eval", example / "capitals.eval.yml", "--format", "json")
    assert run.exit_code in (0, 1), run.stderr  # how the tiny model judges is its own affair
    suite = run.suite()
    assert [c["id"] for c in suite["cases"]] == ["france", "japan", "italy"]
    for case in suite["cases"]:
        findings = {f["name"]: f for f in case["evaluations"]}
        assert case["status"] in ("passed", "failed"), case
        judged = findings["answers_the_question"]
        # the local judge answers by a forced call, decoded under a grammar: always a choice
        if not judged.get("skipped"):
            assert judged["error"] is None and judged["score"] in (0.0, 1.0), judged
            assert judged["scoring"] is None or judged["scoring"] == "model"
    assert suite["model_calls"] >= 3 and suite["cached_calls"] == 0
    again = accord("eval", example / "capitals.eval.yml", "--format", "json")

    def timeless(cases: list[dict[str, object]]) -> list[dict[str, object]]:
        return [{k: v for k, v in c.items() if k != "seconds"} for c in cases]

    # the call cache replays every answer and every verdict
    assert timeless(again.suite()["cases"]) == timeless(suite["cases"])
    assert again.suite()["cached_calls"] == suite["model_calls"]


def test_the_example_with_a_scripted_model(example: Path, fake_llm: FakeOpenAI) -> None:
    answers = {"France": "Paris", "Japan": "Kyoto", "Italy": "Rome, Italy\nof course"}

    def reply(body: dict[str, object]) -> Reply:
        text = str(body["messages"][-1]["content"])  # type: ignore[index]
        if body.get("tools"):
            same = 'expected answer is "Paris"' in text or "Rome" in text.split("given")[1]
            choice = "Yes" if same else "No"
            return Reply.tool("select_answer", {"reason": "compared", "answer": choice})
        return Reply(text=next(city for country, city in answers.items() if country in text))

    fake_llm.responder = reply
    config = fake_model_config(fake_llm) + "defaults:\n  judge_model: fake\n"
    (example / "config.yml").write_text(config)
    file = example / "capitals.eval.yml"
    file.write_text(file.read_text().replace("target: local ", "target: fake "))
    run = accord("eval", example / "capitals.eval.yml", "--format", "json")
    suite = run.suite()
    statuses = {c["id"]: (c["status"], c["score"]) for c in suite["cases"]}
    # japan fails `contains` ("Kyoto"), so short_circuit spares its judge call; italy's answer
    # is two lines: one_line fails, but its weight is 0 and it gates nothing
    assert statuses == {
        "france": ("passed", 1.0),
        "japan": ("failed", 0.0),
        "italy": ("passed", 1.0),
    }
    assert suite["judge_calls"] == 2 and suite["judge_calls_saved"] == 1
    assert run.exit_code == 1 and "1 of 3 case runs did not pass" in run.stderr
