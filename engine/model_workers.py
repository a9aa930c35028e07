"""Model calls spread over worker processes (`model_workers: N` in config.yml).

litellm spends about 3 ms of CPU per call on the event loop's thread (request building and
response parsing); at hundreds of concurrent calls that CPU, not the provider, sets the pace
(benchmark B3). Each worker process runs its own event loop and litellm; the parent keeps
everything else: the cache, the rate limiters, retries, usage. A call crosses a pipe as plain
data (the litellm keyword arguments out; the answer's text, tool calls, tokens and cost back),
and a provider error comes back with its kind, status code and Retry-After so the parent's
retry policy treats it exactly as it would in-process.
"""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing
import threading
from typing import Any

from accord.engine.errors import ModelError


class WorkerCallError(Exception):
    """A provider error raised in a worker, carried back with what retries need."""

    def __init__(
        self, kind: str, message: str, status_code: int | None, retry_after: str | None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status_code = status_code
        self.litellm_response_headers = {"retry-after": retry_after} if retry_after else None


def answer_fields(litellm: Any, response: Any) -> dict[str, Any]:
    """The parts of a litellm response the engine keeps (shared by both paths)."""
    choice = response.choices[0]
    message = choice.message
    calls = [
        (call.id or f"call_{index}", call.function.name or "", call.function.arguments or "")
        for index, call in enumerate(getattr(message, "tool_calls", None) or [])
    ]
    usage = getattr(response, "usage", None)
    hidden = getattr(response, "_hidden_params", None) or {}
    cost: float | None = hidden.get("response_cost")
    if cost is None and "response_cost" not in hidden:
        try:
            cost = float(litellm.completion_cost(completion_response=response))
        except Exception:  # litellm raises for models missing from its price table
            cost = None
    return {
        "text": message.content or "",
        "tool_calls": calls,
        "input_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
        "output_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
        "cost": cost,
    }


REFUSED = "ConnectionRefused"  # the kind of an error whose cause is a refused connection


def refused_connection(exc: BaseException) -> bool:
    """A refused connection (ECONNREFUSED) anywhere in the error's chain: litellm reports it
    as a connection error, or as an InternalServerError, several wrappers above the cause."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ConnectionRefusedError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _error_fields(exc: BaseException) -> tuple[str, str, int | None, str | None]:
    headers: Any = getattr(exc, "litellm_response_headers", None)
    response = getattr(exc, "response", None)
    if headers is None and response is not None:
        headers = getattr(response, "headers", None)
    retry_after = None
    if headers:
        value = headers.get("retry-after") or headers.get("Retry-After")
        retry_after = str(value) if value is not None else None
    status = getattr(exc, "status_code", None)
    message = str(getattr(exc, "message", "") or exc)
    kind = REFUSED if refused_connection(exc) else type(exc).__name__  # its chain stays here
    return kind, message, status if isinstance(status, int) else None, retry_after


def _worker_main(conn: Any) -> None:
    """A worker: read calls from the pipe, answer them concurrently on one event loop."""
    from accord.engine.models import load_litellm

    litellm = load_litellm()

    async def handle(call_id: int, kwargs: dict[str, Any]) -> None:
        try:
            response = await litellm.acompletion(**kwargs)
            reply: tuple[Any, ...] = (call_id, True, answer_fields(litellm, response))
        except Exception as exc:
            reply = (call_id, False, _error_fields(exc))
        conn.send(reply)

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        running: set[asyncio.Task[None]] = set()
        while True:
            request = await loop.run_in_executor(None, _receive, conn)
            if request is None:
                return
            task = loop.create_task(handle(*request))
            running.add(task)
            task.add_done_callback(running.discard)

    asyncio.run(serve())


def _settle_future(future: asyncio.Future[Any], ok: bool, outcome: Any) -> None:
    if future.done():
        return
    if ok:
        future.set_result(outcome)
    else:
        future.set_exception(outcome)


def _receive(conn: Any) -> Any:
    try:
        return conn.recv()
    except (EOFError, OSError):
        return None


class ModelWorkers:
    """A pool of worker processes; `call` sends litellm keyword arguments to the least busy."""

    def __init__(self, count: int) -> None:
        context = multiprocessing.get_context("spawn")
        self._conns: list[Any] = []
        self._procs: list[Any] = []
        self._busy: list[int] = []
        self._pending: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[Any]]] = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()
        for _ in range(count):
            parent, child = context.Pipe()
            process = context.Process(target=_worker_main, args=(child,), daemon=True)
            process.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(process)
            self._busy.append(0)
            threading.Thread(
                target=self._read,
                args=(len(self._conns) - 1,),
                daemon=True,
                name="accord-model-worker",
            ).start()

    def _read(self, index: int) -> None:
        conn = self._conns[index]
        while True:
            try:
                call_id, ok, payload = conn.recv()
            except (EOFError, OSError):
                self._fail_all(f"model worker {index} exited")
                return
            self._resolve(call_id, index, ok, payload)

    def _resolve(self, call_id: int, index: int, ok: bool, payload: Any) -> None:
        with self._lock:
            entry = self._pending.pop(call_id, None)
            if entry is not None:
                self._busy[index] -= 1
        if entry is None:
            return  # the caller gave up (timeout): the late answer is dropped
        loop, future = entry
        outcome: Any = payload if ok else WorkerCallError(*payload)
        loop.call_soon_threadsafe(_settle_future, future, ok, outcome)

    def _fail_all(self, reason: str) -> None:
        with self._lock:
            pending, self._pending = self._pending, {}
        for loop, future in pending.values():
            loop.call_soon_threadsafe(_settle_future, future, False, ModelError(reason))

    async def call(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Send one call to the least busy worker; its answer fields, or the provider error."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        with self._lock:
            index = min(range(len(self._conns)), key=self._busy.__getitem__)
            call_id = next(self._ids)
            self._pending[call_id] = (loop, future)
            self._busy[index] += 1
        try:
            self._conns[index].send((call_id, kwargs))
        except (OSError, ValueError) as exc:
            with self._lock:
                self._pending.pop(call_id, None)
                self._busy[index] -= 1
            raise ModelError(f"model worker {index} is gone: {exc}") from None
        try:
            result: dict[str, Any] = await future
        finally:
            with self._lock:
                if self._pending.pop(call_id, None) is not None:
                    self._busy[index] -= 1
        return result

    def close(self) -> None:
        for conn in self._conns:
            conn.close()
        for process in self._procs:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
