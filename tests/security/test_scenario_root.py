"""A scenario file's project root is the file's project (its nearest config.yml, else its
folder), not the working folder: run from a home folder, `{{ OPEN .aws/credentials }}` finds
nothing there, and the run store and the reports land in the project."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import fake_model_config
from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI
from tests.frontends.scenarios.conftest import judge

SECRET = "aws_secret_access_key = AKIA-SECRET-9999"
AGENTS = """
class Echo:
    def __init__(self, config):
        pass

    def run(self, message):
        return "echo " + message
"""
SCENARIOS = """agent_class: home_agents.Echo
scenarios:
  - {expected_output: ok, name: credentials, input_message: "{{ OPEN .aws/credentials }}"}
  - {expected_output: ok, name: own file, input_message: "{{ OPEN data/doc.txt }}"}
"""


@pytest.fixture
def home(tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text(SECRET)
    fake_llm.responder = judge
    monkeypatch.chdir(tmp_path)
    sys.modules.pop("home_agents", None)
    yield tmp_path
    sys.modules.pop("home_agents", None)


def project(home: Path, fake_llm: FakeOpenAI, *, config: bool) -> Path:
    root = home / "work" / "project"
    (root / "data").mkdir(parents=True)
    (root / "data" / "doc.txt").write_text("the project's own document")
    (root / "home_agents.py").write_text(AGENTS)
    if config:
        (root / "config.yml").write_text(
            fake_model_config(fake_llm) + "defaults:\n  judge_model: fake\n"
        )
    return root


@pytest.mark.parametrize("config", [True, False])
def test_the_file_project_is_the_root(home: Path, fake_llm: FakeOpenAI, config: bool) -> None:
    root = project(home, fake_llm, config=config)
    # with a config.yml the file may sit in a subfolder; without, its folder is the root
    path = root / ("tests/scenarios.yaml" if config else "scenarios.yaml")
    path.parent.mkdir(exist_ok=True)
    # without a config.yml no judge model reaches the fake server: only the scenario that
    # errors before any judging
    path.write_text(SCENARIOS if config else SCENARIOS.rsplit("\n  - ", 1)[0] + "\n")
    result = accord("eval", path.relative_to(home), "--format", "json")
    found = {c["id"]: c for c in result.suite()["cases"]}
    assert "'.aws/credentials' not found" in found["credentials"]["error"]
    assert SECRET not in result.stdout + result.stderr
    if config:
        assert found["own file"]["status"] == "passed"
        assert "the project's own document" in found["own file"]["input"]
    assert (root / ".accord" / "runs.db").is_file()
    assert sorted(p.suffix for p in (root / "reports").iterdir()) == [".html", ".json"]
    for name in (".accord", "reports"):
        assert not (home / name).exists()
    for report in (root / "reports").iterdir():
        assert SECRET not in report.read_text()
