"""AgentV's corpus in a temporary folder, its targets mapped onto the fake model server and a
scripted command-line agent; the judge answers in AgentV's `{score, hits, ...}` form."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import trusted
from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply

CORPUS = Path(__file__).resolve().parents[4].parent / "shared" / "agentv-corpus"
FEATURES = CORPUS / "examples" / "features"

# a command-line agent printing AgentV traces, by the words of the prompt (as mock-agent.ts)
MOCK_AGENT = r"""
import argparse, json
p = argparse.ArgumentParser(); p.add_argument("--prompt"); p.add_argument("--output")
a = p.parse_args(); q = a.prompt.lower()
def call(name, args, ms=None):
    c = {"tool": name, "input": args}
    if ms is not None: c["duration_ms"] = ms
    return c
if "weather" in q:
    calls = [call("search", {"query": "weather Paris"}, 120),
             call("get_weather", {"location": "Paris"}, 300)]
elif "research" in q or "search" in q:
    calls = [call("knowledgeSearch", {"query": "REST"}),
             call("knowledgeSearch", {"query": "GraphQL"}),
             call("documentRetrieve", {"docId": "api-comparison"})]
elif "load" in q and ("customer" in q or "normalize" in q):
    calls = [call("load_data", {"source": "customers"}),
             call("transform", {"operation": "normalize"}),
             call("save_data", {"destination": "output"})]
elif "process" in q or "data" in q:
    calls = [call("fetchData", {}, 400), call("validateSchema", {}),
             call("transformData", {}, 100), call("saveResults", {}, 50)]
elif "auth" in q:
    calls = [call("checkCredentials", {}, 45), call("generateToken", {}, 20),
             call("auditLog", {}, 80)]
elif "metric" in q:
    calls = [call("getCpuMetrics", {}), call("getMemoryMetrics", {})]
elif "read" in q:
    calls = [call("Read", {"file_path": "config.json"}, 45)]
else:
    calls = []
message = {"role": "assistant", "content": "done: " + q[:40], "tool_calls": calls}
reply = {"output_messages": [message],
         "token_usage": {"input": 120, "output": 30}, "cost_usd": 0.002}
json.dump(reply, open(a.output, "w"))
"""

# the judge's score by the first line of the prompt it is given
JUDGE_SCORES = {
    "Check if the response contains any harmful": 1.0,  # composite/safety-check.md
    "Evaluate the quality, accuracy, and completeness": 0.5,  # composite/quality-evaluation.md
    "Check if the response is safe, contains no PII": 0.5,  # safety-check-strict.md
    "Evaluate the technical accuracy": 0.9,
    "Evaluate how concise": 0.4,
    "Evaluate how detailed": 1.0,
    "Review the child evaluator results below:": 0.85,  # conflict-resolution.md
    "Check factual accuracy": 0.5,
    "Evaluate clarity and understandability": 1.0,
    "Verify the response is safe": 1.0,
    "# Safety Check": 1.0,
    "# Quality Evaluation": 0.5,
    "# Style Evaluation": 0.2,
    "# Accuracy Check": 1.0,
    "# Experimental Metric": 0.0,
    "# Correctness Check": 1.0,
    "# Completeness Check": 0.8,
    "# Clarity Check": 0.9,
    "# Code Correctness Judge": 0.6,
    "You are an expert evaluator.": 0.9,  # accord's default grading prompt
}

PYTHON_ANSWER = '''```python
def second_largest(values: list[int]) -> int:
    """The second largest distinct value. SUPERSECRET_INSTRUCTION_MARKER_PYTHON"""
    if not isinstance(values, list):
        raise TypeError("a list is needed")
    distinct = sorted(set(values))
    if len(distinct) < 2:
        raise ValueError("two distinct values are needed")
    return distinct[-2]
```'''


def judge_score(prompt: str) -> float:
    first = prompt.strip().splitlines()[0]
    for start, score in JUDGE_SCORES.items():
        if first.startswith(start):
            return score
    raise AssertionError(f"no scripted score for a judge prompt starting {first!r}")


def is_judge(request: dict[str, Any]) -> bool:
    system = request["messages"][0]
    return system["role"] == "system" and "Reply with one JSON object" in system["content"]


def respond(request: dict[str, Any]) -> Reply:
    """Judges answer in text (a provider that ignores the forced tool); targets answer."""
    if is_judge(request):
        score = judge_score(request["messages"][-1]["content"])
        verdict = {
            "score": score,
            "hits": [f"scored {score}"],
            "misses": [],
            "reasoning": "scripted",
        }
        return Reply(text=json.dumps(verdict))
    text = json.dumps(request["messages"])
    if "second largest" in text:
        return Reply(text=PYTHON_ANSWER)
    return Reply(text="A helpful answer.")


@pytest.fixture
def agentv(tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The corpus's `features/` folder copied, with a targets file for the fake server."""
    if not FEATURES.is_dir():
        pytest.skip(f"the AgentV corpus is not at {CORPUS}")
    root = tmp_path / "features"
    shutil.copytree(FEATURES, root)
    (tmp_path / "mock_agent.py").write_text(MOCK_AGENT)
    script = tmp_path / "mock_agent.py"
    agent = f"{sys.executable} {script} --prompt {{PROMPT}} --output {{OUTPUT_FILE}}"
    (root / "targets.test.yaml").write_text(
        "targets:\n"
        + "".join(
            f"  - name: {name}\n    provider: openai\n    endpoint: ${{{{ FAKE_URL }}}}\n"
            f"    api_key: ${{{{ FAKE_KEY }}}}\n    model: gpt-test\n"
            for name in ("default", "azure_base")
        )
        + f"  - name: mock_agent\n    provider: cli\n    command_template: {agent}\n"
        + "    judge_target: azure_base\n"
    )
    trusted(root / "targets.test.yaml")  # its cli target runs a script outside the project
    (root / ".env").write_text(f"FAKE_URL={fake_llm.url}\nFAKE_KEY=test-key\n")
    # litellm loads a `.env` of the working folder into the environment when it is first
    # imported; set here, the test's own values win and leave with the test
    monkeypatch.setenv("FAKE_URL", fake_llm.url)
    monkeypatch.setenv("FAKE_KEY", "test-key")
    fake_llm.responder = respond
    # `uv run check_python_keywords.py` (the corpus's code judge) runs offline with the
    # environment's Python
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("UV_OFFLINE", "1")
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    monkeypatch.setenv("UV_PYTHON", sys.executable)
    monkeypatch.chdir(root)
    yield root


def records(path: Path) -> dict[str, dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return {r["test_id"]: r for r in lines}


Maker = Callable[[str, str], Path]


@pytest.fixture
def folder(tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with `.agentv/targets.yaml`: `default` is the fake model, which answers
    'The answer is 42.'; the judge answers what `fake_llm.judge` says."""
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: openai\n    endpoint: ${{ FAKE_URL }}\n"
        "    api_key: key\n    model: gpt-test\n"
    )
    monkeypatch.setenv("FAKE_URL", fake_llm.url)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def judge_with(fake: FakeOpenAI, answer: Any, numbered: bool = False) -> None:
    """Judges get `answer` (a function of the prompt, or a value) as JSON text; the target
    answers 'The answer is 42.' (`numbered`: 'answer 1', 'answer 2', ... per call)."""
    calls = iter(range(1, 1000))

    def respond(request: dict[str, Any]) -> Reply:
        system = request["messages"][0]
        if system["role"] == "system" and "JSON object" in system["content"]:
            prompt = request["messages"][-1]["content"]
            value = answer(prompt) if callable(answer) else answer
            return Reply(text=value if isinstance(value, str) else json.dumps(value))
        return Reply(text=f"answer {next(calls)}" if numbered else "The answer is 42.")

    fake.responder = respond


def command_target(folder: Path, reply: dict[str, Any]) -> None:
    """`default` is a program printing `reply` (an answer with its tool calls)."""
    (folder / "agent.py").write_text(f"print({json.dumps(json.dumps(reply))})\n")
    (folder / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    type: command\n"
        f"    command: [{sys.executable}, {folder / 'agent.py'}]\n"
    )


def write(folder: Path, text: str, name: str = "evals/dataset.yaml") -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run(folder: Path, file: Path, *extra: str) -> tuple[int, dict[str, dict[str, Any]], str]:
    out = folder / "out.jsonl"
    result = accord("eval", file, "--output", out, *extra)
    found = records(out) if out.exists() else {}
    return result.exit_code, found, result.stderr
