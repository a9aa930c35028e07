"""The project root of an AgentV file (common/project.py), as AgentV finds its own: without
config.yml, the folder holding `.agentv/` (the outermost inside the repository), else the
repository's top (`.git`: apps/cli/src/commands/eval/shared.ts findRepoRoot), never above
it; AgentV's home folder (`~/.agentv`, `$AGENTV_HOME`: packages/core/src/paths.ts
getAgentvConfigDir) marks no project. Both formats read inside that root only, and accord's
run store is under it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from accord.tasks.suites.frontends.agentv.common.project import agentv_top, project_root
from tests.evals.conftest import accord

CATALOG = "- id: echo\n  label: llm\n"
SUITE = """\
name: t
providers: [llm]
prompts: ['{{ q }}']
tests:
  - id: one
    vars: {q: capital of France?}
    assert:
      - type: contains
        value: France
"""
SCRIPT_SUITE = """\
name: t
providers: [llm]
prompts: ['{{ q }}']
tests:
  - id: one
    vars: {q: hello}
    assert:
      - type: script
        command: [python3, %s]
"""
GRADER = "import json, sys\nprint(json.dumps({'score': 1.0, 'assertions': []}))\n"


def _tree(root: Path, *paths: str) -> None:
    """Folders (a name ending in '/') and files (`name=text`) under `root`."""
    for item in paths:
        name, _, text = item.partition("=")
        path = root / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """AgentV's home folder set apart: tests choose whether it is under their tree."""
    home = tmp_path / "home" / ".agentv"
    monkeypatch.setenv("AGENTV_HOME", str(home))
    return home


def test_the_folder_holding_agentv_is_the_root_without_config_yml(tmp_path: Path) -> None:
    _tree(tmp_path, "repo/.agentv/", "repo/examples/a/evals/suite.yaml=")
    file = tmp_path / "repo/examples/a/evals/suite.yaml"
    assert project_root(file) == ((tmp_path / "repo").resolve(), None)


def test_the_repository_top_is_the_root_when_no_agentv_folder_is_found(tmp_path: Path) -> None:
    _tree(tmp_path, "repo/.git/", "repo/evals/suite.yaml=")
    assert agentv_top(tmp_path / "repo/evals/suite.yaml") == (tmp_path / "repo").resolve()
    # a `.git` file (a worktree's, a submodule's) marks the top as well: AgentV's access()
    _tree(tmp_path, "wt/.git=gitdir: elsewhere", "wt/evals/suite.yaml=")
    assert agentv_top(tmp_path / "wt/evals/suite.yaml") == (tmp_path / "wt").resolve()


def test_the_file_s_folder_is_the_root_with_no_marker(tmp_path: Path) -> None:
    _tree(tmp_path, "loose/evals/suite.yaml=")
    assert agentv_top(tmp_path / "loose/evals/suite.yaml") == (tmp_path / "loose/evals").resolve()


def test_nested_agentv_folders_inside_a_repository_take_the_outermost(tmp_path: Path) -> None:
    """AgentV's repository: examples/showcase/trace-evaluation/.agentv under the top's."""
    _tree(tmp_path, "repo/.git/", "repo/.agentv/", "repo/examples/t/.agentv/",
          "repo/examples/t/evals/suite.yaml=")  # fmt: skip
    found = agentv_top(tmp_path / "repo/examples/t/evals/suite.yaml")
    assert found == (tmp_path / "repo").resolve()


def test_outside_a_repository_the_nearest_agentv_folder_is_the_root(tmp_path: Path) -> None:
    _tree(tmp_path, "top/.agentv/", "top/inner/.agentv/", "top/inner/evals/suite.yaml=")
    found = agentv_top(tmp_path / "top/inner/evals/suite.yaml")
    assert found == (tmp_path / "top/inner").resolve()


def test_an_agentv_folder_above_the_repository_top_is_not_looked_at(tmp_path: Path) -> None:
    _tree(tmp_path, "outer/.agentv/", "outer/repo/.git/", "outer/repo/evals/suite.yaml=")
    found = agentv_top(tmp_path / "outer/repo/evals/suite.yaml")
    assert found == (tmp_path / "outer/repo").resolve()


def test_agentv_s_home_folder_marks_no_project(tmp_path: Path, _home: Path) -> None:
    """~/.agentv holds AgentV's own settings: a file under the home folder is not in a
    project rooted at the home folder."""
    _tree(tmp_path, "home/.agentv/", "home/work/evals/suite.yaml=")
    found = agentv_top(tmp_path / "home/work/evals/suite.yaml")
    assert found == (tmp_path / "home/work/evals").resolve()


def test_config_yml_keeps_its_root_over_agentv_s(tmp_path: Path) -> None:
    _tree(tmp_path, "proj/config.yml=", "proj/sub/.agentv/", "proj/sub/evals/suite.yaml=",
          "other/.agentv/", "other/acc/config.yml=", "other/acc/evals/suite.yaml=")  # fmt: skip
    assert project_root(tmp_path / "proj/sub/evals/suite.yaml") == (
        (tmp_path / "proj").resolve(),
        (tmp_path / "proj/config.yml").resolve(),
    )
    # a config.yml below the .agentv folder: its folder, never above it
    assert project_root(tmp_path / "other/acc/evals/suite.yaml")[0] == (tmp_path / "other/acc")


def test_agentv4_file_reads_the_top_catalog_and_a_grader_beside_its_folder(
    tmp_path: Path,
) -> None:
    """The issue's case: no config.yml, the catalog at the top, a grader in ../graders."""
    _tree(tmp_path, "repo/.git/", f"repo/.agentv/providers.yaml={CATALOG}",
          f"repo/examples/f/evals/suite.yaml={SCRIPT_SUITE % '../graders/ok.py'}",
          f"repo/examples/f/graders/ok.py={GRADER}")  # fmt: skip
    run = accord("validate", tmp_path / "repo/examples/f/evals/suite.yaml")
    assert run.exit_code == 0, run.stdout + run.stderr


def test_agentv4_file_may_not_read_above_the_root(tmp_path: Path) -> None:
    _tree(tmp_path, f"repo/.agentv/providers.yaml={CATALOG}",
          f"repo/evals/suite.yaml={SCRIPT_SUITE % '../../outside/ok.py'}",
          f"outside/ok.py={GRADER}")  # fmt: skip
    run = accord("validate", tmp_path / "repo/evals/suite.yaml")
    assert run.exit_code == 2, run.stdout + run.stderr
    assert "outside the project" in run.stderr and "Traceback" not in run.stderr


def test_a_catalog_above_config_yml_s_root_is_not_read(tmp_path: Path) -> None:
    _tree(tmp_path, f"repo/.agentv/providers.yaml={CATALOG}", "repo/acc/config.yml=",
          f"repo/acc/evals/suite.yaml={SUITE}")  # fmt: skip
    run = accord("validate", tmp_path / "repo/acc/evals/suite.yaml")
    assert run.exit_code == 2, run.stdout + run.stderr
    assert "no .agentv/providers.yaml defines it" in run.stderr


def test_older_format_targets_above_config_yml_s_root_are_not_read(tmp_path: Path) -> None:
    """The older format's `.agentv/targets.yaml` is found inside the root only (the one
    above would fail to parse if it were read)."""
    _tree(tmp_path, "repo/.agentv/targets.yaml=targets: [\n",
          "repo/acc/config.yml=", "repo/acc/evals/suite.yaml="
          "tests:\n  - id: a\n    criteria: says hi\n    input: hi\n    execution: {target: echo}\n"
          )  # fmt: skip
    run = accord("validate", tmp_path / "repo/acc/evals/suite.yaml")
    assert run.exit_code == 0, run.stdout + run.stderr


def test_the_run_store_is_under_agentv_s_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path, "repo/.git/", f"repo/.agentv/providers.yaml={CATALOG}",
          f"repo/examples/f/evals/suite.yaml={SUITE}")  # fmt: skip
    monkeypatch.chdir(tmp_path / "repo/examples/f")
    run = accord("eval", "evals/suite.yaml", "--format", "json", "--cache", "off")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert json.loads(run.stdout)["suites"][0]["cases"][0]["status"] == "passed"
    assert (tmp_path / "repo/.accord/runs.db").is_file()
    assert not (tmp_path / "repo/examples/f/evals/.accord").exists()
