"""A model endpoint where nothing listens is reported at the first refused connection: a
retry would meet the same closed port (it used to take 44 s of retries to say so)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.bounds import PROCESS_SECONDS
from tests.faults.helpers import accord, assert_no_traceback


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # closed again: a connection to it is refused


@pytest.mark.slow
@pytest.mark.parametrize("workers", [0, 1])  # also from a model worker process
def test_a_refused_connection_fails_at_once_naming_the_endpoint(
    tmp_path: Path, workers: int
) -> None:
    base = f"http://127.0.0.1:{closed_port()}/v1"
    (tmp_path / "config.yml").write_text(
        f"models:\n  - name: local\n    model: openai/gpt-test\n    api_base: {base}\n"
        "    api_key: k\n    max_retries: 6\ndefaults:\n  model: local\n"
        + (f"model_workers: {workers}\n" if workers else "")
    )
    path = tmp_path / "ask.workflow.yml"
    path.write_text("tasks:\n  - name: ask\n    type: agent\n    prompt: hi\n")
    done = accord("run", str(path), "--format", "json", cwd=tmp_path, timeout=PROCESS_SECONDS)
    assert_no_traceback(done)
    assert done.code == 3, done.stderr
    assert f"connection refused by {base}" in done.stderr
    doc = json.loads(done.stdout)
    assert doc["summary"]["usage"]["retries"] == 0  # one attempt, not seven
    assert "attempts" not in doc["tasks"][0]["error"]


# every test here runs through both paths of an `openai/` model (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("model_path")
