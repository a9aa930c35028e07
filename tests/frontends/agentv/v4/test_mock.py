"""AgentV's `mock` provider (providers/mock.ts MockProvider, targets.ts resolveMockConfig):
each test answered with the entry's canned `response`, no model asked."""

from __future__ import annotations

import json
from pathlib import Path

from accord.tasks.suites.frontends.agentv.v4.mock import DEFAULT_RESPONSE
from tests.evals.conftest import accord

SUITE = """\
name: t
providers: [llm]
prompts: ['{{ q }}']
tests:
  - id: one
    vars: {q: capital of France?}
    assert:
      - type: contains
        value: Paris
"""


def _project(root: Path, catalog: str, suite: str = SUITE) -> Path:
    (root / ".git").mkdir()
    (root / ".agentv").mkdir()
    (root / ".agentv" / "providers.yaml").write_text(catalog)
    (root / "evals").mkdir()
    (root / "evals" / "suite.yaml").write_text(suite)
    return root / "evals" / "suite.yaml"


def _case(suite: Path) -> dict[str, object]:
    run = accord("eval", suite, "--format", "json", "--cache", "off")
    assert run.exit_code in (0, 1), run.stdout + run.stderr
    case: dict[str, object] = json.loads(run.stdout)["suites"][0]["cases"][0]
    return case


def test_a_mock_provider_answers_its_response(tmp_path: Path) -> None:
    suite = _project(tmp_path, "providers:\n  - id: mock\n    label: llm\n"
                     "    response: Paris, of course\n")  # fmt: skip
    case = _case(suite)
    assert (case["status"], case["output"]) == ("passed", "Paris, of course")


def test_a_mock_provider_without_text_answers_agentv_s_default(tmp_path: Path) -> None:
    """mock.ts DEFAULT_MOCK_RESPONSE; a response that is not text (resolveMockConfig reads
    a string only) answers it too."""
    assert DEFAULT_RESPONSE == (
        '{"answer":"Mock provider response. Configure targets.yaml to supply a custom value."}'
    )
    for entry in ("- id: mock\n  label: llm\n", "- id: mock\n  label: llm\n  response: 42\n"):
        folder = tmp_path / str(len(entry))
        folder.mkdir()
        case = _case(_project(folder, entry))
        assert (case["status"], case["output"]) == ("failed", DEFAULT_RESPONSE)
