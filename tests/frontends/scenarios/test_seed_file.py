"""Seed 003's own scenario file with the project it assumes: its agent classes, the files its
macros read and a SQLite database. Unchanged, it is refused as the reference refuses it: six of
its scenarios have neither expected_output nor evaluation_criteria (the reference's
TestScenario.__post_init__ raises). With criteria given to those, every scenario runs; HTTP_GET
to a host the file does not allow fails only its scenario, naming `allow_hosts`."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

from tests.fakes import FakeOpenAI
from tests.frontends.scenarios.conftest import cases, judge_models, run

SEED_FILE = Path(__file__).parent / "data" / "seed_scenarios.yaml"
UNJUDGED = [2, 3, 4, 6, 8, 10]  # the scenarios without expected_output or evaluation_criteria


def judged(text: str) -> str:
    """The seed file with criteria for every scenario (after each input_message)."""
    return re.sub(
        r"^(    input_message: .*)$", r'\1\n    evaluation_criteria: "A helpful answer."',
        text, flags=re.MULTILINE,
    )  # fmt: skip


def test_the_unchanged_seed_file_is_refused_as_the_reference_refuses_it(
    scenario_project: Callable[..., Path], judge_server: FakeOpenAI
) -> None:
    root = scenario_project(SEED_FILE.read_text())
    result = run(root, "--judge-model", "fake")
    assert result.exit_code == 2
    refused = re.findall(r"scenarios\[(\d+)\]: a scenario needs expected_output", result.stderr)
    assert [int(i) for i in refused] == UNJUDGED
    assert not judge_server.requests


MODULE = """
class MyAgent:
    def __init__(self, config):
        self.config = config

    def run(self, message):
        model = ((self.config or {}).get("model") or {}).get("model_id")
        return f"({model}) I am a helpful assistant. {message}"


class OtherAgent(MyAgent):
    async def run(self, message):
        return "other: " + message
"""


def test_the_seed_file_runs_unchanged(
    scenario_project: Callable[..., Path], judge_server: FakeOpenAI
) -> None:
    root = scenario_project(SEED_FILE.read_text(), {
        "my_module.py": MODULE,
        "reports/q1.txt": "Q1 revenue grew 4%.",
        "reports/q2.txt": "Q2 revenue grew 6%.",
        "logs/app.log": "".join(f"line {i}\n" for i in range(100)),
        "data/users.json": json.dumps({"users": [{"email": "ada@example.com"}]}),
        "templates/greeting.txt": "Hello {name}, today is {date}.",
        "data/sample.txt": "A sample file.",
    })  # fmt: skip
    (root / "scenarios.yaml").write_text(judged(SEED_FILE.read_text()))
    # the file's judges, gpt-4o and gpt-4-turbo, named in config.yml as an accord project does
    config = (root / "config.yml").read_text()
    (root / "config.yml").write_text(
        config.replace("name: strong", "name: gpt-4o").replace(
            "defaults:",
            "  - name: gpt-4-turbo\n    model: openai/turbo-model\n    api_base: "
            + config.split("api_base: ")[1].split("\n")[0]
            + "\n    api_key: test\ndefaults:",
        )
    )
    with sqlite3.connect(root / "data" / "test.db") as db:
        db.execute("CREATE TABLE users (name TEXT, email TEXT)")
        db.execute("INSERT INTO users VALUES ('Ada', 'ada@example.com')")
    result = run(root, "--seed", "3", "--judge-model", "fake")
    found = cases(result)
    # 12 scenarios on the file's two-model matrix, the model override once
    assert len(found) == 25
    assert "Model Override Test" in found
    errors = {k: v["error"] for k, v in found.items() if v["status"] == "error"}
    assert set(errors) == {"External API Data [gpt-4o (temperature 0.1)]",
                           "External API Data [gpt-3.5-turbo (temperature 0.5)]"}  # fmt: skip
    assert all("allow_hosts" in e and "api.example.com" in e for e in errors.values())
    inputs = {k: v["input"] for k, v in found.items()}
    assert inputs["File Concatenation Test [gpt-4o (temperature 0.1)]"] == (
        "Compare these reports: Q1 revenue grew 4%.\n\n---\n\nQ2 revenue grew 6%."
    )
    assert inputs["JSON Data Extraction [gpt-4o (temperature 0.1)]"].endswith("ada@example.com")
    template = inputs["Template Population [gpt-4o (temperature 0.1)]"]
    assert template.startswith("Hello ") and ", today is 20" in template
    assert json.loads(
        inputs["Database Query Test [gpt-4o (temperature 0.1)]"].split(": ", 1)[1]
    ) == [{"name": "Ada", "email": "ada@example.com"}]
    assert found["Different Agent Test [gpt-4o (temperature 0.1)]"]["output"] == "other: Hello"
    assert found["Model Override Test"]["output"].startswith("(claude-3-opus-20240229)")
    models = judge_models(judge_server)
    assert (
        models.count("turbo-model") == 2 and models.count("strong-model") == 21
    )  # not the two errors
    assert "fake-model" not in models  # the file's judge wins over --judge-model


def test_an_unknown_judge_is_an_error_at_its_line(scenario_project: Callable[..., Path]) -> None:
    root = scenario_project(judged(SEED_FILE.read_text()))  # a criteria line after each input
    result = run(root)
    assert result.exit_code == 2
    assert "scenarios.yaml:17:17 judge_model_id: unknown model 'gpt-4o'" in result.stderr
    assert (
        "scenarios.yaml:61:21 scenarios[4].judge_model_id: unknown model 'gpt-4-turbo'"
        in result.stderr
    )
