"""What `accord eval` and `accord test` write is checked before any case runs: a path that
would replace a project file, an evaluated file or the run store, a file given for a folder
(or a folder for a file), and a place that cannot be written exit 2 with the reason, leaving
every file of the project as it was."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.evals.conftest import accord
from tests.frontends.scenarios.conftest import judge_server, scenario_project

__all__ = ["judge_server", "scenario_project"]  # the scenario tests' fixtures, used here

SUITE = """\
target: {type: command, command: [%s, answer.py]}
evaluators:
  - {type: contains, value: "42"}
cases:
  - {id: a, input: what is six times seven}
"""
ANSWER = "open('answered.txt', 'a').write('x')\nprint('answer 42')\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose one case writes `answered.txt` when it runs; run once, so its run
    store exists."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yml").write_text("models: []\n")
    (tmp_path / "answer.py").write_text(ANSWER)
    (tmp_path / "s.eval.yml").write_text(SUITE % json.dumps(sys.executable))
    (tmp_path / "notes.txt").write_text("my notes\n")
    first = accord("eval", "s.eval.yml")
    assert first.exit_code == 0, first.stderr
    assert (tmp_path / ".accord" / "runs.db").is_file()
    (tmp_path / "answered.txt").unlink()
    return tmp_path


def snapshot(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--output", "config.yml"], "would replace config.yml, a file the project reads"),
        (["--output", "s.eval.yml"], "--output s.eval.yml: is an evaluated file"),
        (["--output", ".accord/runs.db"], "is inside .accord/, where accord keeps its run store"),
        (["--report", "config.yml"], "would replace config.yml, a file the project reads"),
        (["--output-dir", ".accord"], "is inside .accord/, where accord keeps its run store"),
        (["--output-dir", "notes.txt"], "--output-dir notes.txt: is a file; give a folder"),
        (["--output", "newdir/"], "newdir/ names a folder; give a file in it, e.g. newdir/"),
        (["--output", "."], "--output .: is a folder; give a file in it, e.g. results.txt"),
        (["--output", "notes.txt/r.json"], "'notes.txt' is a file, not a folder"),
        (["--output", "/sys/results.json"], "cannot write: Permission denied; no case was run"),
        (["--output", "a.json", "--report", "a.json"], "--report a.json: is also given to"),
        (["--output", "out/results.json", "--output-dir", "out"], "results.json in it is also"),
    ],
)
def test_eval_refuses_an_output_before_any_case_runs(
    project: Path, args: list[str], message: str
) -> None:
    before = snapshot(project)
    result = accord("eval", "s.eval.yml", *args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert message in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert snapshot(project) == before  # nothing ran (no answered.txt), nothing was replaced
    assert not (project / "newdir").exists()


def test_eval_writes_where_it_is_allowed(project: Path) -> None:
    result = accord("eval", "s.eval.yml", "--output", "out/r.jsonl", "--output-dir", "reports",
                    "--report", "page.html")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert json.loads((project / "out" / "r.jsonl").read_text())["test_id"] == "a"
    assert sorted(p.name for p in (project / "reports").iterdir()) == [
        "report.html",
        "results.json",
    ]
    assert (project / "page.html").read_text().startswith("<!doctype html>")


def test_accord_test_refuses_a_folder_written_as_a_file(project: Path) -> None:
    (project / "w.workflow.yml").write_text(
        "tasks:\n  - {name: a, type: formatter, template: x}\n"
        "tests:\n  - {type: consistency, task_ref: a, n: 2}\n"
    )
    result = accord("test", "w.workflow.yml", "--output", "newdir/")
    assert result.exit_code == 2
    assert "newdir/ names a folder; give a file in it, e.g. newdir/results.json" in result.stderr
    assert not (project / "newdir").exists()


def test_scenario_reports_need_their_folder_before_any_scenario_runs(
    scenario_project: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = scenario_project(
        "agent_class: scen_agents.Echo\nscenarios:\n"
        "  - {name: Hi, input_message: hello, expected_output: ok}\n"
    )
    (root / "reports").write_text("not a folder\n")
    monkeypatch.chdir(root)
    result = accord("eval", "scenarios.yaml")
    assert result.exit_code == 2
    assert "the scenario reports' folder reports: is a file; give a folder" in result.stderr
    assert "Traceback" not in result.stderr
    assert (root / "reports").read_text() == "not a folder\n"
    assert not (root / ".accord").exists()  # no scenario ran


@pytest.mark.parametrize(("folder", "message"), [
    (".accord", "output_dir '.accord' is inside .accord/"),
    ("config.yml", "output_dir config.yml: is a file; give a folder"),
])  # fmt: skip
def test_the_regression_runner_checks_its_output_dir_before_any_scenario_runs(
    scenario_project: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, folder: str,
    message: str,
) -> None:  # fmt: skip
    from accord import RegressionRunner
    from accord.engine.errors import AccordError

    root = scenario_project(
        "agent_class: scen_agents.Echo\nscenarios:\n"
        "  - {name: Hi, input_message: hello, expected_output: ok}\n"
    )
    monkeypatch.chdir(root)
    before = snapshot(root)
    runner = RegressionRunner(project_root=root, output_dir=folder, quiet=True)
    with pytest.raises(AccordError, match="no scenario was run") as refused:
        runner.run(root / "scenarios.yaml")
    assert message in str(refused.value)
    assert snapshot(root) == before
