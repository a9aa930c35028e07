"""A user's app on loopback for the http provider's tests: a few routes answering as small
apps do, every request recorded. Started by a test's fixture, shut down at its end."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: str


@dataclass
class App:
    """The routes: `POST /chat` (JSON `{message}` -> `{reply: {text}, words}`), `GET
    /search?q=` (text), `POST /form` (its body back as text), `/status/N` (status N, a body
    saying so), `POST /session` (a session id header), `/empty` (an empty body)."""

    server: ThreadingHTTPServer
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _answer(handler: BaseHTTPRequestHandler, app: App) -> None:
    length = int(handler.headers.get("content-length") or 0)
    body = handler.rfile.read(length).decode() if length else ""
    with app.lock:
        app.seen.append(Seen(handler.command, handler.path,
                             {k.lower(): v for k, v in handler.headers.items()}, body))  # fmt: skip
    parts = urlsplit(handler.path)
    status, kind, extra = 200, "application/json", {}
    if parts.path == "/chat":
        message = json.loads(body).get("message", "") if body else ""
        text = json.dumps({"reply": {"text": f"echo: {message}"}, "words": len(message.split())})
    elif parts.path == "/search":
        query = parse_qs(parts.query).get("q", [""])[0]
        text, kind = f"found {query}", "text/plain"
    elif parts.path == "/form":
        text, kind = f"form: {body}", "text/plain"
    elif parts.path.startswith("/status/"):
        status = int(parts.path.rsplit("/", 1)[1])
        text, kind = f"status {status} body", "text/plain"
    elif parts.path == "/session":
        text, extra = json.dumps({"ok": True}), {"x-session-id": "sess-42"}
    elif parts.path == "/empty":
        text = ""
    else:
        status, text, kind = 404, "no such route", "text/plain"
    data = text.encode()
    handler.send_response(status)
    handler.send_header("content-type", kind)
    handler.send_header("content-length", str(len(data)))
    for name, value in extra.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)


def start_app() -> App:
    """The app, serving on a thread of its own until `stop()`."""
    holder: list[App] = []

    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            _answer(self, holder[0])

        do_GET = do_POST = do_PUT = do_DELETE = _any

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    app = App(server)
    holder.append(app)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return app
