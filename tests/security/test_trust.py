"""Trust (engine/trust.py): given by the user once per file, kept by the file's content,
recorded outside the project; config.yml's `trusted:` globs; `accord trust` as a user runs it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from accord.engine import trust
from tests.faults.helpers import accord


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "config.yml").write_text("defaults: {}\n")
    (root / "a.yaml").write_text("prompts: [hi]\n")
    return root


def test_a_file_is_untrusted_until_trusted_and_again_once_edited(project: Path) -> None:
    file = project / "a.yaml"
    assert not trust.is_trusted(file, project)
    trust.grant([file])
    assert trust.is_trusted(file, project)
    file.write_text("prompts: [changed]\n")
    assert not trust.is_trusted(file, project)
    trust.grant([file])
    assert trust.is_trusted(file, project)
    assert trust.revoke([file]) == [file]
    assert not trust.is_trusted(file, project)


def test_the_record_lies_outside_the_project_and_is_private(project: Path) -> None:
    trust.grant([project / "a.yaml"])
    record = trust.store_path()
    assert record.is_file()
    assert project not in record.parents
    assert record.stat().st_mode & 0o077 == 0
    assert not (project / ".accord").exists()


def test_a_record_planted_in_the_project_trusts_nothing(project: Path) -> None:
    # a repository cannot bring its own trust: .accord/ is data
    file = project / "a.yaml"
    planted = {str(file.resolve()): trust.digest(file)}
    (project / ".accord").mkdir()
    (project / ".accord" / "trusted.json").write_text(json.dumps(planted))
    assert not trust.is_trusted(file, project)


def test_config_yml_and_its_trusted_globs(project: Path) -> None:
    (project / "evals").mkdir()
    (project / "evals" / "x.yaml").write_text("x: 1\n")
    assert trust.is_trusted(project / "config.yml", project)
    assert not trust.is_trusted(project / "evals" / "x.yaml", project)
    (project / "config.yml").write_text("defaults: {}\ntrusted: ['evals/*.yaml']\n")
    assert trust.is_trusted(project / "evals" / "x.yaml", project)
    assert not trust.is_trusted(project / "a.yaml", project)
    # a file outside the project is never matched by the project's globs
    outside = project.parent / "evals" / "x.yaml"
    outside.parent.mkdir()
    outside.write_text("x: 1\n")
    assert not trust.is_trusted(outside, project)


def test_a_damaged_record_trusts_nothing(project: Path) -> None:
    trust.store_path().parent.mkdir(parents=True, exist_ok=True)
    trust.store_path().write_text("{not json")
    assert not trust.is_trusted(project / "a.yaml", project)
    trust.grant([project / "a.yaml"])  # and trusting again repairs it
    assert trust.is_trusted(project / "a.yaml", project)


def test_the_refusal_names_the_command_that_trusts_the_file(project: Path) -> None:
    message = trust.refusal(project / "a.yaml", project, "sends X to http://h", "name a model")
    assert message is not None
    assert "sends X to http://h" in message and "name a model" in message
    assert "accord trust" in message
    trust.grant([project / "a.yaml"])
    assert trust.refusal(project / "a.yaml", project, "w", "i") is None


def test_the_command(project: Path) -> None:
    env = {"XDG_DATA_HOME": os.environ["XDG_DATA_HOME"]}
    done = accord("trust", "a.yaml", cwd=project, env=env)
    assert done.code == 0, done.stderr
    assert "trusted: a.yaml" in done.stdout
    assert trust.is_trusted(project / "a.yaml", project)
    listed = accord("trust", "--list", cwd=project, env=env)
    assert f"{(project / 'a.yaml').resolve()}  unchanged" in listed.stdout
    (project / "a.yaml").write_text("prompts: [edited]\n")
    listed = accord("trust", "--list", cwd=project, env=env)
    assert "  changed" in listed.stdout
    done = accord("trust", "--revoke", "a.yaml", cwd=project, env=env)
    assert done.code == 0 and "no longer trusted: a.yaml" in done.stdout
    assert not trust.is_trusted(project / "a.yaml", project)


@pytest.mark.parametrize(
    "args", [("trust",), ("trust", "missing.yaml"), ("trust", "--list", "a.yaml")]
)
def test_the_command_refuses_bad_input(project: Path, args: tuple[str, ...]) -> None:
    done = accord(*args, cwd=project)
    assert done.code == 2, done.stdout
    assert "Traceback" not in done.stderr
    assert done.stderr.strip()


def test_config_yml_trusted_must_be_a_list_of_globs(project: Path) -> None:
    (project / "config.yml").write_text("trusted: 3\n")
    done = accord("validate", "config.yml", cwd=project)
    assert done.code == 2
    assert "trusted" in done.stderr and "config.yml" in done.stderr
