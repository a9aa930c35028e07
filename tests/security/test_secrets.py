"""Secrets never reach what accord prints, stores or reports: an internal error shows its one
line (its traceback only with --debug, plain and masked, never with the frames' variables);
a failing macro and a bad `${{ VAR }}` value show `[redacted]`, on stderr, in runs.db and in
both reports; and a case id that is a path (`../x/y`) still gets its workspace."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import trusted
from tests.evals.conftest import Run, accord
from tests.executors.conftest import ray_cluster
from tests.fakes import FakeOpenAI
from tests.frontends.scenarios.conftest import judge_server, scenario_project
from tests.frontends.scenarios.conftest import run as run_scenarios
from tests.security.helpers import Recorder

# fixtures of the scenario and executor tests, used here too
__all__ = ["judge_server", "ray_cluster", "scenario_project"]

KEY = "sk-env-0123456789abcdefSECRET"  # MY_SECRET_KEY, read through ${{ }} or the provider
CONFIG_KEY = "sk-config-literal-9876543210"  # written in config.yml
TOKEN = "tok-live-4242424242-abcdefgh"  # read by a scenario's {{ ENV MY_TOKEN }}


def stored_text(root: Path) -> str:
    """Every byte accord keeps under .accord/ (the store, its WAL, the cache), as text."""
    return "".join(
        p.read_bytes().decode("utf-8", "replace") for p in (root / ".accord").rglob("*")
        if p.is_file()
    )  # fmt: skip


@pytest.fixture
def agentv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose config holds a literal key and whose environment holds another; an
    AgentV file with a workspace and a case id that is a path."""
    monkeypatch.setenv("MY_SECRET_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yml").write_text(
        f"models:\n  - name: m\n    model: openai/x\n    api_key: {CONFIG_KEY}\n"
    )
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: mock\n    response: hello there\n"
    )
    (tmp_path / "ev.yaml").write_text(
        f"workspace:\n  setup: {{script: [{json.dumps(sys.executable)}, -c, pass]}}\n"
        "tests:\n  - id: ../x/y\n    criteria: says hello\n    input: hi\n"
        "    execution:\n      evaluators:\n        - {name: c, type: contains, value: hello}\n"
    )
    trusted(tmp_path / "ev.yaml")  # its workspace script is `python -c pass`
    return tmp_path


def test_a_case_id_that_is_a_path_gets_its_workspace(agentv: Path) -> None:
    result = accord("eval", agentv / "ev.yaml", "--format", "json")
    assert result.exit_code == 0, result.stderr
    case = result.suite()["cases"][0]
    assert case["id"] == "../x/y" and case["status"] == "passed"
    assert not (agentv.parent / "x").exists()


def _crash_in_the_target(monkeypatch: pytest.MonkeyPatch) -> None:
    from accord.tasks.suites.frontends.agentv.common.cli import ReplyTarget

    async def broken(self: Any, tctx: Any, case: Any, repeat: int) -> Any:
        config = {"api_key": CONFIG_KEY, "env": KEY}  # in the frame, as real configs are
        raise RuntimeError(f"the agent broke using {config['env']}")

    monkeypatch.setattr(ReplyTarget, "produce", broken)


def _no_secret(result: Run) -> None:
    for text in (result.stderr, result.stdout):
        assert KEY not in text and CONFIG_KEY not in text


def test_an_internal_error_in_a_case_is_one_line_without_secrets(
    agentv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _crash_in_the_target(monkeypatch)
    result = accord("eval", agentv / "ev.yaml")
    assert result.exit_code == 3
    _no_secret(result)
    assert "Traceback" not in result.stderr and "locals" not in result.stderr
    assert len(result.stderr) < 2000  # was a Rich traceback with locals: 700 kB per case
    assert "RuntimeError: the agent broke using [redacted]" in result.stderr
    assert "please report it" in result.stderr and "--debug" in result.stderr
    assert KEY not in stored_text(agentv)


def test_debug_shows_the_plain_traceback_still_without_secrets(
    agentv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _crash_in_the_target(monkeypatch)
    result = accord("--debug", "eval", agentv / "ev.yaml")
    assert result.exit_code == 3
    _no_secret(result)
    assert "Traceback (most recent call last)" in result.stderr
    assert "raise RuntimeError(f\"the agent broke using {config['env']}\")" in result.stderr
    assert "locals" not in result.stderr and "│" not in result.stderr


def test_an_internal_error_of_the_command_is_one_line_and_exit_70(
    agentv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from accord.tasks.suites.commands import eval as eval_command

    def broken(*args: Any) -> None:
        raise KeyError(KEY)

    monkeypatch.setattr(eval_command, "gate_result", broken)
    result = accord("eval", agentv / "ev.yaml")
    assert result.exit_code == 70
    _no_secret(result)
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[0] == "error: internal error: KeyError: '[redacted]'"
    assert "please report it with the command you ran" in result.stderr
    debug = accord("--debug", "eval", agentv / "ev.yaml")
    assert debug.exit_code == 70
    _no_secret(debug)
    assert "Traceback (most recent call last)" in debug.stderr and "gate_result" in debug.stderr


@pytest.fixture
def http_server() -> Iterator[Recorder]:
    server = Recorder(get_status=401)  # a GET to /ok answers, any other is refused
    yield server
    server.close()


SCENARIOS = """\
agent_class: scen_agents.Echo
allow_env: [MY_TOKEN]
allow_hosts: [127.0.0.1]
scenarios:
  - name: Denied
    expected_output: ok
    input_message: |
      Data: {{ HTTP_GET %(url)s/denied '{"Authorization": "Bearer {{ ENV MY_TOKEN }}"}' }}
  - name: Fetched
    expected_output: ok
    input_message: |
      Data: {{ HTTP_GET %(url)s/ok '{"Authorization": "Bearer {{ ENV MY_TOKEN }}"}' }}
      for {{ ENV MY_TOKEN }}
"""


def test_a_failing_macro_never_shows_the_token_it_was_given(
    scenario_project: Callable[..., Path],
    http_server: Recorder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_TOKEN", TOKEN)
    root = scenario_project(SCENARIOS % {"url": http_server.url})
    # ENV's values may reach the hosts the file allows: a power of a file the user trusts
    config = root / "config.yml"
    config.write_text(config.read_text() + "trusted: [scenarios.yaml]\n")
    result = run_scenarios(root)
    assert result.exit_code == 1
    assert http_server.seen.count(f"Bearer {TOKEN}") == 2  # the request still carried it
    cases = {c["id"]: c for c in result.suite()["cases"]}
    assert cases["Denied"]["status"] == "error"
    assert "HTTP_GET" in cases["Denied"]["error"] and "HTTP 401" in cases["Denied"]["error"]
    assert "Bearer [redacted]" in cases["Denied"]["error"]
    assert cases["Fetched"]["output"] == "[none] Data: rows: 3\nfor [redacted]\n"
    reports = [p.read_text() for p in (root / "reports").iterdir()]
    assert len(reports) == 2  # the scenario page and its JSON: --output-dir's one set
    for text in [result.stdout, result.stderr, stored_text(root), *reports]:
        assert TOKEN not in text
    assert "Bearer [redacted]" in result.stderr


def test_a_variable_value_is_masked_in_a_target_validation_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_KEY_OR_SO", KEY)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yml").write_text("models: []\n")
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: openai\n    model: gpt\n"
        "    api_key: x\n    max_tokens: ${{ AZURE_KEY_OR_SO }}\n"
    )
    (tmp_path / "ev.yaml").write_text(
        "tests:\n  - id: a\n    criteria: c\n    input: hi\n"
        "    execution:\n      evaluators:\n        - {name: c, type: contains, value: x}\n"
    )
    for fmt in ("pretty", "json"):
        result = accord("eval", tmp_path / "ev.yaml", "--format", fmt)
        assert result.exit_code == 2
        _no_secret(result)
        assert "invalid literal for int() with base 10: '[redacted]'" in result.stderr
        assert "Traceback" not in result.stderr


RAY_KEY = "sk-ray-env-5555555555-zyxwvut"
RAY_CONFIG_KEY = "sk-ray-config-6666666666-qrstuv"


@pytest.mark.slow
def test_the_ray_executor_keeps_keys_out_of_rays_session_files(
    ray_cluster: Any, tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ray's runtime-env agent logs every `runtime_env` it sets up, in its session folder
    (mode 644, kept after the run): no key may travel that way, and the calls still get
    theirs."""
    monkeypatch.setenv("MY_RAY_KEY", RAY_KEY)
    (tmp_path / "config.yml").write_text(
        "models:\n"
        f"  - {{name: by_env, model: openai/fake-model, api_base: '{fake_llm.url}', "
        "key_var: MY_RAY_KEY, max_retries: 0}\n"
        f"  - {{name: in_file, model: openai/fake-model, api_base: '{fake_llm.url}', "
        f"api_key: {RAY_CONFIG_KEY}, max_retries: 0}}\n"
    )
    (tmp_path / "two.workflow.yml").write_text(
        "tasks:\n"
        "  - {name: a, type: agent, model: by_env, prompt: hello}\n"
        "  - {name: b, type: agent, model: in_file, prompt: hello}\n"
    )
    result = accord("run", tmp_path / "two.workflow.yml", "--executor", "ray",
                    "--format", "json", "--cache", "off")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert sorted(fake_llm.authorizations) == [f"Bearer {RAY_CONFIG_KEY}", f"Bearer {RAY_KEY}"]
    session = Path(ray_cluster._private.worker._global_node.get_session_dir_path())
    files = [p for p in session.rglob("*") if p.is_file() and not p.is_symlink()]
    assert any(p.name.startswith("runtime_env_agent") for p in files)  # the log is there
    for path in files:
        data = path.read_bytes()
        assert RAY_KEY.encode() not in data and RAY_CONFIG_KEY.encode() not in data, path


def test_a_run_whose_answer_repeats_the_key_shows_it_nowhere(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    (tmp_path / "config.yml").write_text(
        f"models:\n  - {{name: m, model: openai/fake-model, api_base: '{fake_llm.url}', "
        f"api_key: {CONFIG_KEY}, max_retries: 0}}\n"
    )
    (tmp_path / "w.workflow.yml").write_text(
        "tasks:\n  - {name: a, type: agent, model: m, prompt: what is my key?}\n"
    )
    for fmt in ("pretty", "json"):
        fake_llm.script(f"your key is {CONFIG_KEY}")
        result = accord("run", tmp_path / "w.workflow.yml", "--format", fmt, "--cache", "off")
        assert result.exit_code == 0, result.stderr
        assert "your key is [redacted]" in result.stdout
        _no_secret(result)
    assert fake_llm.authorizations == [f"Bearer {CONFIG_KEY}"] * 2
    assert CONFIG_KEY not in stored_text(tmp_path)
