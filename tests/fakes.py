"""An OpenAI-compatible HTTP server on 127.0.0.1 with scripted replies.

Tests point a model at it (`openai/<anything>` with `api_base`), so the real litellm path runs:
HTTP, JSON, retries, timeouts. Replies come from a queue or a function of the request. The
same server speaks the other APIs by path, each in its own answer and error shapes: Azure
OpenAI's deployment URL (OpenAI's format), Anthropic's Messages (`/v1/messages`), Gemini's
generateContent (`/models/<m>:generateContent`) and Ollama's `/api/chat` and `/api/generate`.
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

    error_message: str | None = None  # an error answered in the shape of the API asked

    @classmethod
    def error(cls, status: int, message: str = "scripted error", **headers: str) -> Reply:
        return cls(status=status, error_message=message, headers=dict(headers))


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
        # each request's headers, lower-cased names (x-api-key, anthropic-version, ...)
        self.headers: list[dict[str, str]] = []
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

    def next_reply(self, body: dict[str, Any], chat: dict[str, Any] | None = None) -> Reply:
        """The reply to a request; `chat` is its view as an OpenAI chat (`messages`, each
        with a text `content`) when its API's body is another shape."""
        with self._lock:
            self.requests.append(body)
            if self.queue:
                return self.queue.popleft()
        view = body if chat is None else chat
        if self.responder is not None:
            return self.responder(view)
        last = view["messages"][-1].get("content") or ""
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
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                if self.path.endswith("/embeddings"):
                    self._embeddings(body)
                    return
                api = _api(self.path)
                reply = fake.next_reply(body, _as_chat(api, body))
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
                payload = _payload(api, self.path, body, reply)
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


def _payload(api: str, path: str, body: dict[str, Any], reply: Reply) -> bytes:
    """The reply's body: its raw bytes, an error in the API's shape, or the API's answer."""
    if reply.raw is not None:
        return reply.raw
    if reply.error_message is not None:
        return _error(api, reply.status, reply.error_message)
    return ANSWERS[api](path, body, reply)


def _api(path: str) -> str:
    """Which API a request's path belongs to."""
    route = path.split("?", 1)[0]
    if route.endswith(("/api/chat", "/api/generate")):
        return "ollama"
    if route.endswith("/messages"):
        return "anthropic"
    if route.endswith(":generateContent"):
        return "gemini"
    return "openai"


def _text_of(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of blocks."""
    if isinstance(content, list):
        return "".join(str(part.get("text") or "") for part in content if isinstance(part, dict))
    return str(content or "")


def _as_chat(api: str, body: dict[str, Any]) -> dict[str, Any] | None:
    """The request as an OpenAI chat's (for the responder and the echo), or None when it is
    one: Ollama's `/api/generate` sends a prompt, Gemini `contents` of `parts`."""
    if api == "ollama" and "messages" not in body:
        return {**body, "messages": [{"role": "user", "content": body.get("prompt")}]}
    if api == "anthropic":
        messages = [{"role": m.get("role"), "content": _text_of(m.get("content"))}
                    for m in body.get("messages") or []]  # fmt: skip
        return {**body, "messages": messages}
    if api == "gemini":
        messages = [{"role": c.get("role"), "content": _text_of(c.get("parts"))}
                    for c in body.get("contents") or []]  # fmt: skip
        return {**body, "messages": messages}
    return None


def _error(api: str, status: int, message: str) -> bytes:
    """An error body as each API documents it."""
    if api == "anthropic":
        kind = {400: "invalid_request_error", 401: "authentication_error", 403:
                "permission_error", 404: "not_found_error", 429: "rate_limit_error",
                529: "overloaded_error"}.get(status, "api_error")  # fmt: skip
        return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
    if api == "gemini":
        state = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
                 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}.get(status, "UNKNOWN")  # fmt: skip
        return json.dumps({"error": {"code": status, "message": message, "status": state}}).encode()
    if api == "ollama":
        return json.dumps({"error": message}).encode()
    return json.dumps({"error": {"message": message, "type": "scripted", "code": status}}).encode()


def _prompt_tokens(body: dict[str, Any], chat: dict[str, Any] | None) -> int:
    messages = (chat or body)["messages"]
    return sum(len(str(m.get("content") or "")) // 4 + 1 for m in messages)


def _anthropic(path: str, body: dict[str, Any], reply: Reply) -> bytes:
    """Anthropic's Messages answer: content blocks (text, tool_use) and usage."""
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for i, (name, args) in enumerate(reply.tool_calls):
        arguments = json.loads(args) if isinstance(args, str) else args
        content.append({"type": "tool_use", "id": f"toolu_{i}", "name": name,
                        "input": arguments})  # fmt: skip
    return json.dumps({
        "id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model"),
        "content": content, "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": _prompt_tokens(body, _as_chat("anthropic", body)),
                  "output_tokens": len(reply.text or "") // 4 + 1,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    }).encode()  # fmt: skip


def _gemini(path: str, body: dict[str, Any], reply: Reply) -> bytes:
    """Gemini's generateContent answer: a candidate's parts and usageMetadata."""
    parts: list[dict[str, Any]] = []
    if reply.text:
        parts.append({"text": reply.text})
    for name, args in reply.tool_calls:
        arguments = json.loads(args) if isinstance(args, str) else args
        parts.append({"functionCall": {"name": name, "args": arguments}})
    prompt = _prompt_tokens(body, _as_chat("gemini", body))
    output = len(reply.text or "") // 4 + 1
    model = path.split("/models/", 1)[-1].split(":", 1)[0]
    return json.dumps({
        "candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": "STOP",
                        "index": 0}],
        "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": output,
                          "totalTokenCount": prompt + output},
        "modelVersion": model, "responseId": "fake",
    }).encode()  # fmt: skip


def _ollama(path: str, body: dict[str, Any], reply: Reply) -> bytes:
    """Ollama's answer (docs/api.md): `/api/chat` a message (tool calls with arguments as
    objects), `/api/generate` a response."""
    text = reply.text or ""
    answer: dict[str, Any] = {
        "model": body.get("model"), "created_at": "2026-01-01T00:00:00Z", "done": True,
        "done_reason": "stop", "prompt_eval_count": 7, "eval_count": max(1, len(text.split())),
    }  # fmt: skip
    if path.split("?", 1)[0].endswith("/api/chat"):
        answer["message"] = {"role": "assistant", "content": text}
        if reply.tool_calls:
            answer["message"]["tool_calls"] = [
                {"function": {"name": name,
                              "arguments": json.loads(args) if isinstance(args, str) else args}}
                for name, args in reply.tool_calls
            ]  # fmt: skip
    else:
        answer["response"] = text
    return json.dumps(answer).encode()


def _openai(path: str, body: dict[str, Any], reply: Reply) -> bytes:
    return _completion(body, reply)


ANSWERS: dict[str, Callable[[str, dict[str, Any], Reply], bytes]] = {
    "openai": _openai, "anthropic": _anthropic, "gemini": _gemini, "ollama": _ollama,
}  # fmt: skip


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
