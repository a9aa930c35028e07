"""Shared fixtures: no test reaches the network; a scripted OpenAI-compatible server."""

from __future__ import annotations

import ipaddress
import os
import socket
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import FakeOpenAI
from tests.faults.fuzz_summary import pytest_terminal_summary as pytest_terminal_summary

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else None
    if host is not None:
        try:
            allowed = ipaddress.ip_address(host).is_loopback
        except ValueError:
            allowed = host == "localhost"
        if not allowed:
            raise OSError(f"tests may not reach the network (tried {host})")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def trusted(*files: Path) -> None:
    """The user trusts `files` as they are now (`accord trust FILES`, recorded in the test's
    own store): for a file that runs a program that is not the project's own (a PATH program,
    an absolute path, `sh -c`, `python3 -c`) or code written in it (engine/programs.py)."""
    from accord.engine import trust

    trust.grant(list(files))


def trust_project(folder: Path) -> None:
    """The user trusts every YAML, JSON, JSONL and CSV file of the project holding `folder`
    (its nearest folder with config.yml, else `folder`): a differential test's suite runs
    inline code or programs of the PATH as promptfoo and AgentV run them."""
    root = next((f for f in (folder, *folder.parents) if (f / "config.yml").is_file()), folder)
    files = [
        path
        for path in root.rglob("*")
        if path.is_file()
        and path.suffix in (".yaml", ".yml", ".json", ".jsonl", ".csv")
        and ".accord" not in path.parts
    ]
    trusted(*files)


@pytest.fixture(autouse=True)
def _own_trust_store(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """`accord trust` records outside the project (engine/trust.py): each test has its own
    record, never the user's, and inherited by the `accord` processes it starts."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))


@pytest.fixture(autouse=True)
def _fresh_secrets() -> None:
    """Each test is a command of its own: no secret remembered by an earlier one."""
    from accord.engine.masking import forget

    forget()


@pytest.fixture
def fake_llm() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    yield server
    server.close()


def fake_model_config(fake: FakeOpenAI, **extra: Any) -> str:
    """A config.yml `models:` entry named `fake` that points at the fake server."""
    fields = {"max_retries": 2, **extra}
    lines = [
        "  - name: fake",
        "    model: openai/fake-model",
        f"    api_base: {fake.url}",
        "    api_key: test-key",
    ]
    lines += [f"    {k}: {v}" for k, v in fields.items()]
    return "models:\n" + "\n".join(lines) + "\n"


def write_project(
    root: Path,
    server: FakeOpenAI,
    files: dict[str, str] | None = None,
    *,
    defaults: str | None = "judge_model: fake",
    config_extra: str = "",
    dedent: bool = False,
    **model: Any,
) -> Path:
    """A project in `root`: a config.yml whose model `fake` is `server` (`model`: more fields
    of its entry), then `defaults:` with the one line `defaults` (none when None), then
    `config_extra`; and `files` (relative path -> text, dedented with `dedent`). Returns
    `root`."""
    config = fake_model_config(server, **model)
    if defaults is not None:
        config += f"defaults:\n  {defaults}\n"
    (root / "config.yml").write_text(config + config_extra, encoding="utf-8")
    for name, text in (files or {}).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip() if dedent else text, encoding="utf-8")
    return root


@pytest.fixture
def project(tmp_path: Path, fake_llm: FakeOpenAI) -> Callable[..., Path]:
    """`project(files, **model)` writes `files` into tmp_path beside a config.yml whose model
    `fake`, the judge, is the fake server, and returns tmp_path (write_project). A folder whose
    tests need another project overrides it in its conftest."""

    def make(files: dict[str, str], **model: Any) -> Path:
        return write_project(tmp_path, fake_llm, files, **model)

    return make


@pytest.fixture(params=["lean", "litellm"])
def model_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test once per path an `openai/` model can take (engine/openai_wire.py):
    ACCORD_MODEL_CLIENT, read at each call, is inherited by the `accord` processes tests start.
    Use with `pytestmark = pytest.mark.usefixtures("model_path")`."""
    choice: str = request.param
    monkeypatch.setenv("ACCORD_MODEL_CLIENT", choice)
    return choice


@pytest.fixture
def write(tmp_path: Path) -> Any:
    """Write a file under tmp_path: `write("a.workflow.yml", text)`."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return _write


# Tests whose outcome depends on time or signals (a timeout, a kill, Ctrl-C): each waits for
# an event, never a fixed sleep. tests/faults/test_under_load.py runs them again beside two
# busy loops, so that a busy CI machine cannot make them fail.
TIMING_TESTS = (
    "tests/engine/test_query_cancel.py",
    "tests/faults/test_hangs.py",
    "tests/faults/test_refused_endpoint.py",
    "tests/faults/test_render_budget.py::test_a_task_timeout_bounds_its_render",
    "tests/faults/test_render_budget.py::test_sigterm_stops_a_long_render",
    "tests/faults/test_timeouts_end.py",
    "tests/frontends/scenarios/test_macro_interrupt.py",
    "tests/frontends/scenarios/test_scenarios.py::test_ctrl_c_exits_130",
    "tests/store/test_crash_harness.py",
    "tests/store/test_resume_and_interrupt.py",
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "timing: depends on time or signals (run under load too)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(TIMING_TESTS):
            item.add_marker(pytest.mark.timing)
