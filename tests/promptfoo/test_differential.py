"""The same promptfoo config through promptfoo itself and through accord: equal verdicts,
scores and named scores.

promptfoo (node's `promptfoo@0.118.0`) is a test-only install, like the benchmark's
(benchmarks/_model_eval.py puts it in ~/.cache/accord-bench/promptfoo); where node or that
install is missing these tests are skipped with the reason. Model providers talk to one
fake OpenAI server on loopback (tests/fakes.py). The machine is small: two configs, each
run once by each tool.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply

PROMPTFOO = Path(
    os.environ.get(
        "ACCORD_PROMPTFOO",
        Path.home()
        / ".cache"
        / "accord-bench"
        / "promptfoo"
        / "node_modules"
        / ".bin"
        / "promptfoo",
    )
)
EXAMPLE = Path(__file__).resolve().parents[2] / "workflows" / "promptfoo"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not PROMPTFOO.exists(),
    reason=f"needs node and promptfoo 0.118 installed at {PROMPTFOO} "
    "(python benchmarks/b13_*.py installs it; or set ACCORD_PROMPTFOO)",
)


def run_promptfoo(folder: Path, *outputs: str) -> None:
    """`promptfoo eval` in `folder`, its process group ended whatever happens."""
    argv = [str(PROMPTFOO), "eval", "-c", "promptfooconfig.yaml", "--no-cache",
            "--no-progress-bar", "--no-table", "-j", "2"]  # fmt: skip
    for output in outputs:
        argv += ["-o", output]
    env = {
        **os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
        "NO_COLOR": "1", "PROMPTFOO_CONFIG_DIR": str(folder / ".promptfoo"),
    }  # fmt: skip
    process = subprocess.Popen(
        argv, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    try:
        _out, err = process.communicate(timeout=180)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    # promptfoo exits 100 when an assertion failed
    assert process.returncode in (0, 100), err.decode(errors="replace")[-2000:]


def by_cell(path: Path) -> dict[tuple[int, int], dict[str, Any]]:
    doc = json.loads(path.read_text())
    return {(r["testIdx"], r["promptIdx"]): r for r in doc["results"]["results"]}


def verdicts(path: Path) -> dict[tuple[int, int], tuple[Any, ...]]:
    """Each result's verdict, score, named scores and reason."""
    return {
        cell: (r["success"], round(r["score"], 6),
               {k: round(v, 6) for k, v in r["namedScores"].items()},
               (r["gradingResult"] or {}).get("reason"))
        for cell, r in by_cell(path).items()
    }  # fmt: skip


def column_metrics(path: Path) -> list[dict[str, Any]]:
    prompts = json.loads(path.read_text())["results"]["prompts"]
    keep = ("score", "testPassCount", "testFailCount", "testErrorCount", "assertPassCount",
            "assertFailCount", "namedScores")  # fmt: skip
    return [{k: p["metrics"][k] for k in keep} | {"label": p["label"]} for p in prompts]


ANSWERS = {
    "France": "Paris",
    "Spain": "The capital of Spain is Madrid.",
    "Italy": "rome",
}


def capital(body: dict[str, Any]) -> Reply:
    asked = str(body["messages"][-1].get("content") or "")
    return Reply(text=next((a for c, a in ANSWERS.items() if c in asked), "I do not know"))


def test_a_model_config_scores_as_promptfoo_scores_it(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm.responder = capital
    (tmp_path / "config.yml").write_text("")
    (tmp_path / "chat.json").write_text(
        '[{"role": "system", "content": "One word."},'
        ' {"role": "user", "content": "What is the capital of {{country}}?"}]'
    )
    (tmp_path / "promptfooconfig.yaml").write_text(f"""
description: capitals
prompts:
  - 'Capital of {{{{country}}}}?'
  - file://chat.json
providers:
  - id: openai:chat:fake-model
    config: {{apiBaseUrl: '{fake_llm.url}', apiKey: test-key}}
defaultTest:
  threshold: 0.4
  assert:
    - type: not-contains
      value: know
      metric: confident
tests:
  - vars: {{country: France}}
    assert:
      - {{type: equals, value: Paris, weight: 2, metric: exact}}
  - vars: {{country: Spain}}
    assert:
      - {{type: contains, value: Madrid, metric: exact}}
      - {{type: starts-with, value: Madrid, weight: 3}}
  - vars: {{country: [Italy, Peru]}}
    assert:
      - {{type: icontains, value: '{{{{ "ROME" }}}}', metric: exact}}
      - {{type: contains-any, value: [Lima, rome], weight: 0}}
derivedMetrics:
  - name: exact_share
    value: exact / (exact + confident)
""")
    run_promptfoo(tmp_path, "promptfoo.json")
    monkeypatch.chdir(tmp_path)  # as promptfoo ran: prompt file labels show the folder named
    run = accord("eval", "-c", "promptfooconfig.yaml", "-o", "accord.json", "--cache", "off", "-q")
    # Peru fails in both; Spain's starts-with fails but its score 0.4 reaches the threshold
    assert run.exit_code == 1, run.stderr
    theirs, mine = verdicts(tmp_path / "promptfoo.json"), verdicts(tmp_path / "accord.json")
    assert len(theirs) == 8  # 4 var combinations x 2 prompts
    assert mine == theirs
    # promptfoo's AssertionsResult: with a threshold the score decides, not the failed assertion
    assert theirs[(1, 0)][:2] == (True, 0.4)
    assert column_metrics(tmp_path / "accord.json") == column_metrics(tmp_path / "promptfoo.json")


def test_the_offline_example_writes_the_table_promptfoo_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "promptfoo"
    shutil.copytree(EXAMPLE, folder)
    run_promptfoo(folder, "promptfoo.csv", "promptfoo.json")
    # the same command line: prompt file labels show the config's folder as it was named
    monkeypatch.chdir(folder)
    run = accord("eval", "-c", "promptfooconfig.yaml", "-o", "accord.csv", "-q")
    assert run.exit_code == 1, run.stderr
    assert (folder / "accord.csv").read_text() == (folder / "promptfoo.csv").read_text()
    run = accord("eval", "-c", "promptfooconfig.yaml", "-o", "accord.json", "-q")
    assert verdicts(folder / "accord.json") == verdicts(folder / "promptfoo.json")
    assert column_metrics(folder / "accord.json") == column_metrics(folder / "promptfoo.json")
