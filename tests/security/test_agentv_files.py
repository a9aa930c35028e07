"""Files an AgentV eval file names (input file blocks, an llm_judge prompt, a workspace
template) stay inside the project: an absolute path or one leading out is refused at its line
before anything runs, so the secret is never read nor sent to the target or the judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply

SECRET = "TOP-SECRET-4242"


@pytest.fixture
def home(tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A secret in a home folder, and below it a project whose default target and judge are
    the fake model (the judge scores 1)."""
    (tmp_path / "secret.txt").write_text(SECRET)
    project = tmp_path / "work" / "project"
    (project / ".agentv").mkdir(parents=True)
    (project / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: openai\n    endpoint: ${{ FAKE_URL }}\n"
        "    api_key: key\n    model: gpt-test\n"
    )
    (project / "prompts").mkdir()
    (project / "prompts" / "judge.md").write_text("Grade {{ candidate_answer }} strictly.\n")
    (project / "evals").mkdir()
    (project / "evals" / "context.md").write_text("Paris is in France.\n")
    monkeypatch.setenv("FAKE_URL", fake_llm.url)
    verdict = json.dumps({"score": 1, "hits": ["ok"], "misses": [], "reasoning": "fine"})
    fake_llm.responder = lambda request: Reply(text=verdict)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def eval_file(home: Path, text: str) -> Path:
    path = home / "work" / "project" / "evals" / "dataset.yaml"
    path.write_text(text)
    return path


def nothing_sent(fake: FakeOpenAI) -> None:
    assert not fake.requests
    assert not any(SECRET in json.dumps(r) for r in fake.requests)


FILE_BLOCK = """tests:
  - id: leak
    criteria: answers
    input:
      - role: user
        content:
          - {type: text, value: "Summarise this"}
          - {type: file, value: %s}
"""


@pytest.mark.parametrize(
    ("value", "says"),
    [("../../../secret.txt", "leads outside the project"), ("SECRET", "is an absolute path")],
)
def test_input_file_blocks_stay_in_the_project(
    home: Path, fake_llm: FakeOpenAI, value: str, says: str
) -> None:
    value = str(home / "secret.txt") if value == "SECRET" else value
    path = eval_file(home, FILE_BLOCK % value)
    result = accord("eval", path)
    assert result.exit_code == 2
    assert f"{path}:8:" in result.stderr and says in result.stderr
    assert "Traceback" not in result.stderr and SECRET not in result.stdout + result.stderr
    nothing_sent(fake_llm)


def test_a_symbolic_link_out_of_the_project_is_refused(home: Path, fake_llm: FakeOpenAI) -> None:
    (home / "work" / "project" / "evals" / "notes.md").symlink_to(home / "secret.txt")
    path = eval_file(home, FILE_BLOCK % "notes.md")
    result = accord("eval", path)
    assert result.exit_code == 2
    assert "through a symbolic link" in result.stderr and SECRET not in result.stderr
    nothing_sent(fake_llm)


JUDGE = """tests:
  - id: judged
    criteria: answers
    input: "What is the capital of France?"
    execution:
      evaluators:
        - name: quality
          type: llm_judge
          prompt: %s
"""


def test_a_judge_prompt_file_stays_in_the_project(home: Path, fake_llm: FakeOpenAI) -> None:
    path = eval_file(home, JUDGE % "../../../secret.txt")
    result = accord("eval", path)
    assert result.exit_code == 2
    assert f"{path}:9:" in result.stderr and "prompt file '../../../secret.txt'" in result.stderr
    assert "leads outside the project" in result.stderr
    nothing_sent(fake_llm)


def test_files_inside_keep_agentv_resolution(home: Path, fake_llm: FakeOpenAI) -> None:
    """AgentV's own reading: relative to the eval file, then the folders above it up to the
    project's top (here the folder holding .agentv)."""
    text = JUDGE % "../prompts/judge.md" + "    expected_output: Paris\n"
    text = text.replace(
        '    input: "What is the capital of France?"\n',
        "    input:\n      - role: user\n        content:\n"
        "          - {type: file, value: context.md}\n"
        "          - {type: file, value: prompts/judge.md}\n",
    )
    result = accord("eval", eval_file(home, text))
    assert result.exit_code == 0, result.stderr
    sent = json.dumps(fake_llm.requests)
    assert "Paris is in France." in sent and "strictly." in sent


def test_a_workspace_template_stays_in_the_project(home: Path, fake_llm: FakeOpenAI) -> None:
    path = eval_file(
        home,
        "workspace:\n  template: ../../..\n" + FILE_BLOCK % "context.md",
    )
    result = accord("eval", path)
    assert result.exit_code == 2
    assert f"{path}:2:" in result.stderr and "workspace template '../../..'" in result.stderr
    nothing_sent(fake_llm)


def test_targets_outside_the_project_or_its_code(home: Path, fake_llm: FakeOpenAI) -> None:
    """A test's own target outside the project, and a targets.yaml entry naming code that is
    not the project's: both refused at their lines."""
    (home / "work" / "x.agent.yml").write_text(f"model: fake\nsystem_instructions: {SECRET}\n")
    targets = home / "work" / "project" / ".agentv" / "targets.yaml"
    targets.write_text(
        targets.read_text() + "  - name: shell\n    type: python\n    function: os:system\n"
    )
    path = eval_file(
        home,
        "tests:\n  - id: a\n    criteria: c\n    input: touch pwned\n"
        "    execution: {target: ../../x.agent.yml}\n"
        "  - id: b\n    criteria: c\n    input: touch pwned\n    execution: {target: shell}\n",
    )
    result = accord("eval", path)
    assert result.exit_code == 2
    assert f"{path}:5:" in result.stderr and "leads outside the project root" in result.stderr
    assert f"{targets}:7:" in result.stderr
    assert "python target 'os:system'" in result.stderr
    assert SECRET not in result.stderr and not (home / "pwned").exists()
    nothing_sent(fake_llm)
