"""The helpers of the AgentV 4 differential tests: AgentV built from source (node), the
suites of tests/data/agentv4 copied into a project whose `.agentv` catalog and accord config
name one fake OpenAI server, the judge answering in the form AgentV's prompt asks for, and
each tool's results per test id (score, verdict, assertion scores)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import trust_project
from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply

AGENTV = Path(
    os.environ.get(
        "ACCORD_AGENTV",
        Path.home() / ".cache" / "accord-bench" / "agentv-src" / "dist" / "cli.js",
    )
)
DATA = Path(__file__).parents[3] / "data" / "agentv4"
sys.path.insert(0, str(DATA))
from basic_answers import ANSWERS as REVIEW_ANSWERS  # noqa: E402
from llm_answers import ANSWERS as LLM_ANSWERS  # noqa: E402

ANSWERS = LLM_ANSWERS | REVIEW_ANSWERS

needs_agentv = pytest.mark.skipif(
    shutil.which("node") is None or not AGENTV.exists(),
    reason=f"needs node and AgentV built from source at {AGENTV} "
    "(or set ACCORD_AGENTV to its dist/cli.js)",
)

CATALOG = """\
- id: openai
  label: llm
  base_url: "{{ env.FAKE_URL }}"
  api_key: "{{ env.FAKE_KEY }}"
  model: fake-model
- id: openai
  label: grader
  base_url: "{{ env.FAKE_URL }}"
  api_key: "{{ env.FAKE_KEY }}"
  model: fake-model
"""
# AgentV's project configuration: the catalog above, and its `grader` as the judge
AGENTV_CONFIG = """\
$schema: agentv-config-v2
providers: file://providers.yaml
defaults:
  grader: grader
"""
# a rubric fails when the answer holds this, or when it asks about the tone's politeness
WRONG = "Hi there"
# the model answers a message holding this with an HTTP 400 (no client retries a 400)
UNAVAILABLE = "(unavailable)"
RUBRIC_LINE = re.compile(r"^- \[((?:rubric|criterion)-\d+)\][^:]*: (.*)$", re.MULTILINE)


def judge(system: str, user: str) -> Reply | None:
    """The judge, answering in the reply form AgentV's prompt asks for: its checklist
    (`checks` of `{id, satisfied, reasoning}`) for rubrics written as text, its free-form
    `{score}` for an llm-rubric; None when the request is no judge's."""
    answer = user.split("[[ ## answer ## ]]")[-1].split("[[ ## rubrics ## ]]")[0]
    if '"satisfied": boolean' in system:
        checks = [
            {"id": rid, "satisfied": WRONG not in answer and "polite" not in text,
             "reasoning": "judged"}
            for rid, text in RUBRIC_LINE.findall(user)
        ]  # fmt: skip
        return Reply(text=json.dumps({"checks": checks, "overall_reasoning": "judged"}))
    if "Return only JSON." in system:
        ok = WRONG not in user
        return Reply(text=json.dumps({"score": 0.9 if ok else 0.3, "assertions": []}))
    return None


def answer(body: dict[str, Any]) -> Reply:
    """The judge when AgentV's judge prompt asks, else the model's fixed answer to the
    test's prompt."""
    messages = body["messages"]
    if len(messages) == 2 and messages[0]["role"] == "system":
        found = judge(messages[0]["content"], messages[1]["content"])
        if found is not None:
            return found
    if UNAVAILABLE in json.dumps(messages[-1]):
        return Reply.error(400, "model unavailable")
    # a conversation's turn is answered by its last message
    for text in (json.dumps(messages[-1]), json.dumps(messages)):
        found = next((a for p, a in ANSWERS.items() if p in text), None)
        if found is not None:
            return Reply(text=found)
    return Reply(text="no answer")


Responder = Callable[[dict[str, Any]], Reply]


def answering(table: dict[str, str], otherwise: Responder | None = None) -> Responder:
    """A responder for another suite's fake server: the judge when AgentV's judge prompt
    asks, else the answer of the first phrase of `table` in the last message, else
    `otherwise` (or "no answer")."""

    def respond(body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        if len(messages) == 2 and messages[0]["role"] == "system":
            found = judge(messages[0]["content"], messages[1]["content"])
            if found is not None:
                return found
        last = json.dumps(messages[-1])
        mine = next((a for phrase, a in table.items() if phrase in last), None)
        if mine is not None:
            return Reply(text=mine)
        return otherwise(body) if otherwise is not None else Reply(text="no answer")

    return respond


def serving(
    fake_llm: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    responder: Callable[[dict[str, Any]], Reply],
) -> FakeOpenAI:
    """The fake server answering with `responder`, named to the catalog by FAKE_URL and
    FAKE_KEY."""
    fake_llm.responder = responder
    monkeypatch.setenv("FAKE_URL", fake_llm.url)
    monkeypatch.setenv("FAKE_KEY", "test-key")
    return fake_llm


def model_requests(requests: list[dict[str, Any]]) -> list[str]:
    """The messages of each request to the model under test, in a fixed order."""
    return sorted(
        json.dumps(r["messages"])
        for r in requests
        if not (
            len(r["messages"]) == 2
            and judge(r["messages"][0]["content"], r["messages"][1]["content"]) is not None
        )
    )


def judge_requests(requests: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The (system, user) messages of each request to the judge, in a fixed order."""
    return sorted(
        (r["messages"][0]["content"], r["messages"][1]["content"])
        for r in requests
        if len(r["messages"]) == 2
        and judge(r["messages"][0]["content"], r["messages"][1]["content"]) is not None
    )


def project(root: Path, name: str) -> Path:
    """A project holding the suite: a suite file as evals/suite.yaml, or a suite's folder
    (its evals/suite.yaml and the files it names) as it is."""
    if (DATA / name).is_dir():
        shutil.copytree(DATA / name, root)
    else:
        (root / "evals").mkdir(parents=True)
        shutil.copy(DATA / name, root / "evals" / "suite.yaml")
        # the files a suite names, in the folder named after it
        named = DATA / name.removesuffix(".suite.yaml")
        if named.is_dir():
            shutil.copytree(named, root / "evals", dirs_exist_ok=True)
    settings(root)
    return root / "evals" / "suite.yaml"


def settings(root: Path, catalog: str = CATALOG) -> None:
    """The project's AgentV catalog and configuration, and accord's: its judge the same
    fake model (AgentV's `grader`)."""
    (root / ".agentv").mkdir()
    (root / ".agentv" / "providers.yaml").write_text(catalog)
    (root / ".agentv" / "config.yaml").write_text(AGENTV_CONFIG)
    (root / "config.yml").write_text(
        "models:\n  - name: grader\n    model: openai/fake-model\n"
        f"    api_base: {os.environ['FAKE_URL']}\n    key_var: FAKE_KEY\n"
        "defaults:\n  judge_model: grader\n"
    )


def through_both(
    root: Path, name: str, fake: FakeOpenAI
) -> tuple[dict[str, Any], list[tuple[str, str]], list[str], dict[str, Any]]:
    """The suite `name` run by AgentV and then by accord on the one fake server: AgentV's
    results, the judge's and the model's requests in AgentV's run, accord's results (the
    fake then holds accord's requests only)."""
    expected = run_agentv(project(root / "agentv", name))
    asked, sent = judge_requests(fake.requests), model_requests(fake.requests)
    fake.requests.clear()
    return expected, asked, sent, run_accord(project(root / "accord", name))


def run_agentv(suite: Path) -> dict[str, dict[str, Any]]:
    """`agentv eval` of the project's suite: per test id, its score, verdict and the scores
    of its assertions in order (grading.json's component_results)."""
    root = suite.parents[1]
    process = subprocess.Popen(
        ["node", str(AGENTV), "eval", "evals/suite.yaml", "-o", "out", "--no-cache"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        out, _ = process.communicate(timeout=240)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    index = root / "out" / ".internal" / "index.jsonl"
    assert index.exists(), out.decode(errors="replace")[-3000:]
    results = {}
    for line in index.read_text().splitlines():
        row = json.loads(line)
        assert row["execution_status"] in ("ok", "quality_failure"), row
        grading = json.loads((root / "out" / row["grading_path"]).read_text())
        results[row["test_id"]] = {
            "score": round(row["score"], 4),
            "passed": row["execution_status"] == "ok",
            "assertions": [round(c["score"], 4) for c in grading["component_results"]],
        }
    return results


def run_accord(suite: Path) -> dict[str, dict[str, Any]]:
    trust_project(suite.parent)  # inline python/javascript and transforms, as AgentV runs them
    run = accord("eval", suite, "--format", "json", "--cache", "off")
    assert run.exit_code in (0, 1), run.stderr + run.stdout

    def scores(case: dict[str, Any]) -> list[float]:
        # a conversation's turns and transcript are scored apart, as in AgentV's results
        found = case["evaluations"]
        parts = (found[0].get("metadata") or {}).get("components") if len(found) == 1 else None
        return [round(e["score"], 4) for e in (parts or found)]

    return {
        case["id"]: {
            "score": round(case["score"], 4),
            "passed": case["status"] == "passed",
            "assertions": scores(case),
        }
        for case in json.loads(run.stdout)["suites"][0]["cases"]
    }
