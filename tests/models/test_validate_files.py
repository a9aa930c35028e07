"""`accord validate` on every kind of file: workflows, agents, test files and config.yml."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from accord.cli import main

CONFIG = "databases:\n  - {name: local, type: duckdb, dataset: data}\n"


def project(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "sales.csv").write_text("region,amount\nEU,10\n")
    (tmp_path / "config.yml").write_text(CONFIG)
    return tmp_path


def validate(*files: Path) -> object:
    return CliRunner().invoke(main, ["validate", *map(str, files)])


def test_agent_test_and_config_files_are_checked(tmp_path: Path) -> None:
    root = project(tmp_path)
    agent = root / "a.agent.yml"
    agent.write_text(
        "model: openai/gpt-4o\nsystem_instructions: '{{ context.notes }}'\n"
        "context:\n  - {name: notes, src: notes.md}\n"
        "tools:\n  - {type: execute_sql, database: local}\n"
    )
    (root / "notes.md").write_text("notes\n")
    suite = root / "s.test.yml"
    suite.write_text(
        "target: a.agent.yml\ncases:\n  - {name: total, prompt: Total?, expected: '10'}\n"
    )
    result = validate(root / "config.yml", agent, suite)
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    out = result.stdout  # type: ignore[attr-defined]
    assert "ok: " + str(root / "config.yml") + " (1 databases, 0 models)" in out
    assert f"ok: {agent} (agent, 1 tool)" in out
    assert f"ok: {suite} (1 test)" in out


def test_bad_agent_test_and_config_files_exit_2_naming_the_problem(tmp_path: Path) -> None:
    root = project(tmp_path)
    agent = root / "a.agent.yml"
    agent.write_text(
        "model: openai/gpt-4o\nsystem_instructions: '{{ broken'\n"
        "context:\n  - {name: notes, src: missing.md}\n"
        "tools:\n  - {type: execute_sql, database: nope}\n"
    )
    suite = root / "s.test.yml"
    suite.write_text("target: a.agent.yml\ncases:\n  - {name: total, prompt: Total?}\n")
    other = root / "notes.txt"
    other.write_text("x\n")
    result = validate(agent, suite, other)
    assert result.exit_code == 2  # type: ignore[attr-defined]
    err = result.stderr  # type: ignore[attr-defined]
    assert "system_instructions: template syntax error" in err
    assert "context[0] 'notes': no file matches 'missing.md'" in err
    assert "unknown database 'nope'" in err
    assert "s.test.yml" in err and "expected" in err  # the test file's own check
    assert "not a file accord checks" in err and "notes.txt" in err
    (root / "config.yml").write_text(CONFIG + "defaults: {model: gtp}\n")
    bad_config = validate(root / "config.yml")
    assert bad_config.exit_code == 2  # type: ignore[attr-defined]
    assert "config.yml:3" in bad_config.stderr  # type: ignore[attr-defined]
