"""AgentV's own examples through AgentV itself and through `accord eval`: the same test ids,
and per test the same score, the same verdict and the same assertion scores in order.

The expected numbers come from AgentV: its command line, built from its source at commit
58f316ca2 (benchmarks/agentv_build.py puts it in ~/.cache/accord-bench/agentv-src; npm's
newest `agentv`, 4.42.4, predates the format), runs each file and writes its results
(`index.jsonl`, each test's `grading.json`). Where node or that build is missing the tests
are skipped with the reason. Both tools read the same unchanged `.agentv/providers.yaml`,
whose `llm` and `grader` are AgentV `openai` providers on one fake OpenAI server on loopback
(tests/fakes.py; AgentV streams, so the fake answers with server-sent events when asked):
the model answers from tests/data/agentv4/llm_answers.py, the judge passes every rubric but
those about a wrong greeting.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply

AGENTV = Path(
    os.environ.get(
        "ACCORD_AGENTV",
        Path.home() / ".cache" / "accord-bench" / "agentv-src" / "dist" / "cli.js",
    )
)
DATA = Path(__file__).parents[1] / "data" / "agentv4"
sys.path.insert(0, str(DATA))
from llm_answers import ANSWERS  # noqa: E402

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not AGENTV.exists(),
    reason=f"needs node and AgentV built from source at {AGENTV} "
    "(python benchmarks/agentv_build.py builds it; or set ACCORD_AGENTV)",
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
# a rubric about a greeting fails when the answer is not one of those asked for
WRONG = "Hi there"


def answer(body: dict[str, Any]) -> Reply:
    """The judge when a grader's prompt asks (AgentV's names itself a grader, accord's speaks
    of a rubric), else the model's fixed answer to the test's prompt."""
    text = json.dumps(body["messages"])
    if "grader" in text or "rubric" in text.lower():
        ok = WRONG not in text
        return Reply(text=json.dumps({"pass": ok, "score": 1 if ok else 0, "reason": "judged"}))
    return Reply(text=next((a for p, a in ANSWERS.items() if p in text), "no answer"))


def project(root: Path, example: str) -> Path:
    (root / "evals").mkdir(parents=True)
    shutil.copy(DATA / example, root / "evals" / "suite.yaml")
    (root / ".agentv").mkdir()
    (root / ".agentv" / "providers.yaml").write_text(CATALOG)
    (root / ".agentv" / "config.yaml").write_text(AGENTV_CONFIG)
    # accord's judge: the same fake model (AgentV's `grader`)
    (root / "config.yml").write_text(
        "models:\n  - name: grader\n    model: openai/fake-model\n"
        f"    api_base: {os.environ['FAKE_URL']}\n    key_var: FAKE_KEY\n"
        "defaults:\n  judge_model: grader\n"
    )
    return root / "evals" / "suite.yaml"


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
    run = accord("eval", suite, "--format", "json", "--cache", "off")
    assert run.exit_code in (0, 1), run.stderr + run.stdout
    return {
        case["id"]: {
            "score": round(case["score"], 4),
            "passed": case["status"] == "passed",
            "assertions": [round(e["score"], 4) for e in case["evaluations"]],
        }
        for case in json.loads(run.stdout)["suites"][0]["cases"]
    }


@pytest.fixture
def fake(fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    fake_llm.responder = answer
    monkeypatch.setenv("FAKE_URL", fake_llm.url)
    monkeypatch.setenv("FAKE_KEY", "test-key")
    return fake_llm


@pytest.mark.parametrize("example", ["assert.suite.yaml", "deterministic-graders.suite.yaml"])
def test_an_agentv_example_scores_in_accord_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI, example: str
) -> None:
    expected = run_agentv(project(tmp_path / "agentv", example))
    got = run_accord(project(tmp_path / "accord", example))
    assert got == expected
    # the comparison means something: several tests, passes and failures, judges asked
    assert len(expected) >= 4
    assert {r["passed"] for r in expected.values()} == {True, False}
    assert any("grader" in json.dumps(r["messages"]) for r in fake.requests)
