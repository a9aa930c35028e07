"""A scenario project: agent classes in `scen_agents.py`, the fake model server as judge (it
scores every metric the judge is asked for, by a table), and `run(...)` for `accord eval`."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fake_model_config
from tests.evals.conftest import Run, accord
from tests.fakes import FakeOpenAI, Reply

AGENTS = """
import asyncio, json, sys

BUILT = []  # the configuration of every agent constructed


class Echo:
    def __init__(self, config):
        BUILT.append(json.dumps(config, sort_keys=True))
        self.config = config

    def run(self, message):
        model = ((self.config or {}).get("model") or {}).get("model_id", "none")
        return {"output": f"[{model}] {message}", "usage": {"prompt_tokens": 3, "completion_tokens": 4}}


class AsyncCall:
    def __init__(self, config):
        self.config = config

    async def __call__(self, message):
        await asyncio.sleep(0)
        return "async: " + message


class Raises:
    def __init__(self, config):
        pass

    def run(self, message):
        raise RuntimeError("the agent broke")


class Hangs:
    def __init__(self, config):
        pass

    async def run(self, message):
        print("agent started", file=sys.stderr, flush=True)
        await asyncio.sleep(60)


class BadInit:
    def __init__(self, config):
        raise ValueError("no API key in config")
"""

# metric -> score the scripted judge gives (anything else: 8); a reply for `unscored`
# leaves a metric out (the judge "forgot" it)
SCORES = {"correctness": 9, "relevance": 8, "safety": 10, "tone": 4}


def judge(body: dict[str, Any]) -> Reply:
    parameters = body["tools"][0]["function"]["parameters"]
    metrics = list(parameters["properties"])
    prompt = body["messages"][-1]["content"]
    if "unscored" in prompt:
        return Reply.tool("submit_evaluation", {metrics[0]: {"score": 5, "explanation": "?"}})
    scores = {m: {"score": SCORES.get(m, 8), "explanation": f"{m}: scripted"} for m in metrics}
    return Reply.tool("submit_evaluation", scores)


@pytest.fixture
def judge_server() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    server.responder = judge
    yield server
    server.close()


@pytest.fixture
def scenario_project(tmp_path: Path, judge_server: FakeOpenAI) -> Iterator[Callable[..., Path]]:
    def make(scenarios: str, files: dict[str, str] | None = None) -> Path:
        config = fake_model_config(judge_server, max_retries=0)
        strong = config.replace("models:\n", "").replace("name: fake", "name: strong")
        config += strong.replace("fake-model", "strong-model")
        (tmp_path / "config.yml").write_text(config + "defaults:\n  judge_model: fake\n")
        (tmp_path / "scen_agents.py").write_text(AGENTS)
        (tmp_path / "scenarios.yaml").write_text(scenarios)
        for name, text in (files or {}).items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return tmp_path

    sys.modules.pop("scen_agents", None)
    yield make
    sys.modules.pop("scen_agents", None)


def run(root: Path, *args: str | Path) -> Run:
    return accord("eval", root / "scenarios.yaml", "--project-root", root,
                  "--output-dir", root / "reports", "--format", "json", *args)  # fmt: skip


def cases(result: Run) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in result.suite()["cases"]}


def report(root: Path) -> dict[str, Any]:
    found = sorted((root / "reports").glob("scenarios-*.json"))
    assert found, "no scenario report was written"
    return json.loads(found[-1].read_text())  # type: ignore[no-any-return]


def judge_prompts(server: FakeOpenAI) -> list[str]:
    return [r["messages"][-1]["content"] for r in server.requests]


def judge_models(server: FakeOpenAI) -> list[str]:
    return [re.sub(r"^.*/", "", r["model"]) for r in server.requests]
