"""An OpenAI-compatible HTTP server on 127.0.0.1 with scripted replies.

Tests point a model at it (`openai/<anything>` with `api_base`), so the real litellm path runs:
HTTP, JSON, retries, timeouts. Replies come from a queue or a function of the request.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer."""

    text: str | None = None
    tool_calls: list[tuple[str, Any]] = field(default_factory=list)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    delay: float = 0.0
    drop: bool = False
    trickle: float = 0.0  # seconds between 16-byte pieces of the body

    @classmethod
    def tool(cls, name: str, arguments: Any) -> Reply:
        return cls(tool_calls=[(name, arguments)])

    @classmethod
    def error(cls, status: int, message: str = "scripted error", **headers: str) -> Reply:
        body = json.dumps({"error": {"message": message, "type": "scripted", "code": status}})
        return cls(status=status, raw=body.encode(), headers=dict(headers))


Responder = Callable[[dict[str, Any]], Reply]


class _Server(ThreadingHTTPServer):
    # a burst of new connections (many calls at once) overflows socketserver's default
    # backlog of 5, and the client's retry of a dropped connection waits a whole second
    request_queue_size = 128


class FakeOpenAI:
    """The server; `requests` records every request body it received."""

    def __init__(self) -> None:
        self.queue: deque[Reply] = deque()
        self.responder: Responder | None = None
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []  # each request's Authorization header
        self.paths: list[str] = []  # each request's path (with its query)
        self.api_keys: list[str | None] = []  # each request's api-key header (Azure's)
        self.latency = 0.0
        # `/embeddings`: the vector of each input text, and the requests received
        self.embed: Callable[[str], list[float]] = letter_counts
        self.embedded: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = _Server(("127.0.0.1", 0), self._handler())
        server.daemon_threads = True
        # a client that gave up (a timeout under test) makes the reply fail: expected, quiet
        server.handle_error = lambda request, address: None  # type: ignore[method-assign]
        self.server = server
        self.thread = threading.Thread(target=server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def script(self, *replies: Reply | str) -> None:
        """Queue replies, answered in order (a string is a text reply)."""
        for reply in replies:
            self.queue.append(Reply(text=reply) if isinstance(reply, str) else reply)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self.queue:
                return self.queue.popleft()
        if self.responder is not None:
            return self.responder(body)
        last = body["messages"][-1].get("content") or ""
        return Reply(text=f"echo: {last}")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out in separate writes: without this, Nagle's algorithm and
            # the client's delayed ACK add ~40 ms to every reply
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.authorizations.append(self.headers.get("authorization"))
                fake.paths.append(self.path)
                fake.api_keys.append(self.headers.get("api-key"))
                if self.path.endswith("/embeddings"):
                    self._embeddings(body)
                    return
                reply = fake.next_reply(_as_chat(self.path, body))
                if fake.latency or reply.delay:
                    time.sleep(fake.latency + reply.delay)
                if reply.drop:
                    self.wfile.write(b'HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{"id":')
                    self.wfile.flush()
                    self.close_connection = True
                    return
                if body.get("stream") and reply.raw is None and reply.status == 200:
                    self._stream(body, reply)
                    return
                payload = reply.raw if reply.raw is not None else _completion(body, reply)
                if reply.raw is None and self.path.startswith("/api/"):
                    payload = _ollama(self.path, body, reply)
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if not reply.trickle:
                    self.wfile.write(payload)
                    return
                for start in range(0, len(payload), 16):
                    try:
                        self.wfile.write(payload[start : start + 16])
                        self.wfile.flush()
                    except OSError:  # the client gave up
                        return
                    time.sleep(reply.trickle)

            def _stream(self, body: dict[str, Any], reply: Reply) -> None:
                # a client that asks for `stream: true` (AgentV's, through pi-ai) reads
                # server-sent events: the whole answer in one delta, then the usage
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                for chunk in _stream_chunks(body, reply):
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def _embeddings(self, body: dict[str, Any]) -> None:
                with fake._lock:
                    fake.embedded.append(body)
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = [
                    {"object": "embedding", "index": i, "embedding": fake.embed(str(text))}
                    for i, text in enumerate(texts)
                ]
                payload = json.dumps(
                    {
                        "object": "list",
                        "data": data,
                        "model": body.get("model"),
                        "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


def _as_chat(path: str, body: dict[str, Any]) -> dict[str, Any]:
    """The request as a chat's: Ollama's `/api/generate` sends a prompt, not messages."""
    if path.startswith("/api/"):
        body.setdefault("messages", [{"content": body.get("prompt")}])
    return body


def _ollama(path: str, body: dict[str, Any], reply: Reply) -> bytes:
    """Ollama's answer (docs/api.md): `/api/chat` a message, `/api/generate` a response."""
    text = reply.text or ""
    answer: dict[str, Any] = {
        "model": body.get("model"), "created_at": "2026-01-01T00:00:00Z", "done": True,
        "done_reason": "stop", "prompt_eval_count": 7, "eval_count": max(1, len(text.split())),
    }  # fmt: skip
    if path.endswith("/api/chat"):
        answer["message"] = {"role": "assistant", "content": text}
    else:
        answer["response"] = text
    return json.dumps(answer).encode()


def _completion(body: dict[str, Any], reply: Reply) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
            for i, (name, args) in enumerate(reply.tool_calls)
        ]
    prompt_tokens = sum(len(str(m.get("content") or "")) // 4 + 1 for m in body["messages"])
    completion_tokens = len(reply.text or "") // 4 + 1
    return json.dumps(
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    ).encode()


def _stream_chunks(body: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
    """The chunks of a streamed chat completion carrying what `_completion` would."""
    whole = json.loads(_completion(body, reply))
    choice = whole["choices"][0]
    delta = dict(choice["message"])
    if "tool_calls" in delta:
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(delta["tool_calls"])]
    base = {k: whole[k] for k in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"
    return [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
        {**base, "choices": [], "usage": whole["usage"]},
    ]


def letter_counts(text: str) -> list[float]:
    """A 26-dimensional embedding: how often each letter a-z occurs."""
    lowered = text.lower()
    return [float(lowered.count(chr(ord("a") + i))) for i in range(26)]


def hashed_words(text: str, dims: int = 64) -> list[float]:
    """A bag-of-words embedding: each word counts in the slot its SHA-256 picks, so texts
    sharing words are near and others far, the same in every process."""
    import hashlib

    vector = [0.0] * dims
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dims] += 1.0
    return vector
