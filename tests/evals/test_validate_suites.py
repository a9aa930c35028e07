"""`accord validate` on the files `accord eval` runs: .eval.yml, AgentV eval files and scenario
files, each checked by its front-end's loader (nothing runs, no model is called); several files
or a folder: every invalid file's problems at once, at their file and line, exit 2."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.evals.conftest import Run, accord

VALID = {
    "hi.eval.yml": (
        "target: echo\ncases:\n  - {id: hi, input: hello, evaluators: [{type: contains, value: h}]}\n"
    ),
    "agentv.yaml": "tests:\n  - {id: t, criteria: Gives 42, input: 6 x 7?, execution: {target: echo}}\n",
    "scenarios.yaml": (
        "agent_class: agents.Echo\nscenarios:\n"
        "  - {name: Greeting, input_message: Hello, expected_output: A greeting}\n"
    ),
    "dataset.jsonl": (
        '{"id": "j", "criteria": "Gives 42", "input": "6 x 7?", "execution": {"target": "echo"}}\n'
    ),
}
INVALID = {
    "bad.eval.yml": "target: echo\ncases:\n  - {id: hi, input: hello, evaluators: [{type: containz}]}\n",
    "bad-agentv.yaml": "tests:\n  - {criteria: Gives 42, input: 6 x 7?}\n",
    "bad-scenarios.yaml": (
        "agent_class: agents.Echo\nscenarios:\n  - {name: Greeting, input_message: Hello}\n"
    ),
}
# what each invalid file's message says, at its file and line
PROBLEMS = {
    "bad.eval.yml": "bad.eval.yml:3:41 cases[0].evaluators[0]: unknown type 'containz'",
    "bad-agentv.yaml": "bad-agentv.yaml:2:5 tests[0].id: required key 'id' is missing: add it",
    "bad-scenarios.yaml": "bad-scenarios.yaml:3:5 scenarios[0]: a scenario needs expected_output",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "config.yml").write_text("defaults: {judge_model: openai/gpt-4o-mini}\n")
    (tmp_path / "agents.py").write_text(
        "class Echo:\n    def run(self, message):\n        return message\n"
    )
    (tmp_path / "data.jsonl").write_text('{"question": "q", "answer": "a"}\n')  # not AgentV
    (tmp_path / "notes.md").write_text("notes\n")
    return tmp_path


def write(folder: Path, files: dict[str, str]) -> list[Path]:
    for name, text in files.items():
        (folder / name).write_text(text)
    return [folder / name for name in files]


def assert_clean(result: Run) -> None:
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


def test_each_evaluation_file_kind_is_checked(project: Path) -> None:
    paths = write(project, VALID)
    result = accord("validate", *paths)
    assert result.exit_code == 0, result.stderr
    assert f"ok: {project / 'hi.eval.yml'} (eval suite, 1 case)" in result.stdout
    assert f"ok: {project / 'agentv.yaml'} (agentv suite, 1 case)" in result.stdout
    assert f"ok: {project / 'scenarios.yaml'} (scenarios suite, 1 case)" in result.stdout
    assert f"ok: {project / 'dataset.jsonl'} (agentv suite, 1 case)" in result.stdout
    assert "not a file accord checks" not in result.stderr


@pytest.mark.parametrize("name", sorted(INVALID))
def test_an_invalid_evaluation_file_exits_2_at_its_line(project: Path, name: str) -> None:
    (path,) = write(project, {name: INVALID[name]})
    result = accord("validate", path)
    assert result.exit_code == 2
    assert PROBLEMS[name] in result.stderr
    assert_clean(result)


def test_a_macro_that_cannot_expand_is_reported_by_validate(project: Path) -> None:
    text = (
        "agent_class: agents.Echo\nscenarios:\n"
        "  - {name: Fine, input_message: Hello, expected_output: x}\n"
        "  - {name: Macro, input_message: 'Hi {{ NOPE }}', expected_output: x}\n"
    )
    (path,) = write(project, {"macros.yaml": text})
    result = accord("validate", path)
    assert result.exit_code == 2
    assert "macros.yaml:4 scenario 'Macro': macro {{ NOPE }}: unknown macro 'NOPE'" in (
        result.stderr
    )
    assert "fix the macro" in result.stderr


def test_several_invalid_files_are_all_reported(project: Path) -> None:
    valid = write(project, VALID)
    invalid = write(project, INVALID)
    result = accord("validate", invalid[0], *valid, *invalid[1:])
    assert result.exit_code == 2
    for problem in PROBLEMS.values():
        assert problem in result.stderr
    for path in valid:
        assert f"ok: {path}" in result.stdout
    assert_clean(result)


def test_a_folder_is_checked_file_by_file(project: Path) -> None:
    write(project, VALID)
    write(project, INVALID)
    (project / "sub").mkdir()
    shutil.copy(project / "hi.eval.yml", project / "sub" / "again.eval.yml")
    (project / ".accord").mkdir()
    (project / ".accord" / "hidden.eval.yml").write_text("not: [checked")
    result = accord("validate", project)
    assert result.exit_code == 2
    for problem in PROBLEMS.values():
        assert problem in result.stderr
    for name in [*VALID, "sub/again.eval.yml", "config.yml"]:
        assert f"ok: {project / name}" in result.stdout
    # data and notes in a folder are not evaluation files: left alone, not refused
    assert "data.jsonl" not in result.stdout + result.stderr
    assert "notes.md" not in result.stdout + result.stderr
    assert "hidden" not in result.stdout + result.stderr
    assert_clean(result)


def test_a_folder_with_nothing_to_check_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("notes\n")
    result = accord("validate", tmp_path)
    assert result.exit_code == 2
    assert f"{tmp_path}: no file accord checks in this folder" in result.stderr
