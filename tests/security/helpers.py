"""Shared by the attack tests of the doors: a project written from a mapping of files,
`accord` run in it in a process of its own, what a refusal and a failed attack look like,
and a loopback server recording where keys went (`Recorder`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# a test's text that runs five commands wherever it is read as shell code
ATTACK = "a $(touch pwned1) `touch pwned2`; touch pwned3 \"$(touch pwned4)\" '$(touch pwned5)'"


def accord(
    root: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`accord ARGS` run in `root` in a process of its own (the trust record is the test's:
    XDG_DATA_HOME, tests/conftest.py)."""
    return subprocess.run(
        [sys.executable, "-m", "accord.cli", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )


def pwned(*folders: Path) -> list[str]:
    """The files an attack created (`pwned*`) under `folders`."""
    return sorted(p.name for folder in folders for p in folder.rglob("pwned*"))


def refused(run: subprocess.CompletedProcess[str], *said: str) -> None:
    """Refused at load: exit 2, no traceback, every text of `said` (the file and line among
    them) on stderr."""
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    for text in said:
        assert text in run.stderr, run.stderr


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


class Recorder:
    """A loopback HTTP server recording the Authorization header of each request (`seen`,
    in order; `requests`: with its path). A GET to `/ok` answers 200 `rows: 3`, any other
    GET `fine` with `get_status`; a POST answers an OpenAI chat completion saying 'hello'.
    `close()` stops it."""

    def __init__(self, get_status: int = 200) -> None:
        self.seen: list[str | None] = []
        self.requests: list[str] = []  # "PATH AUTHORIZATION" of each
        self.get_status = get_status
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                recorder.record(self)
                status, body = (200, b"rows: 3") if self.path == "/ok" else (
                    recorder.get_status, b"fine"
                )  # fmt: skip
                self.answer(status, body, "text/plain")

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                recorder.record(self)
                self.answer(200, _COMPLETION, "application/json")

            def answer(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def record(self, handler: BaseHTTPRequestHandler) -> None:
        self.seen.append(handler.headers.get("Authorization"))
        self.requests.append(f"{handler.path} {self.seen[-1]}")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


_COMPLETION = json.dumps(
    {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "hello"},
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
).encode()
