"""The proxy through which a grading script calls models, in AgentV's two forms: an HTTP
server on 127.0.0.1 for the script's lifetime, each request carrying a bearer token made for
that one run (and masked in everything accord writes). Every call is the caller's `ask`,
which goes through the models door.

- The target proxy of a seed-002 code judge with `target: {max_calls: N}` (AgentV's
  runtime/target-proxy.ts), `target_proxy`: `AGENTV_TARGET_PROXY_URL` and
  `AGENTV_TARGET_PROXY_TOKEN`; `GET /info` `{targetName, maxCalls, callCount,
  availableTargets}`; answers `{outputMessages, rawText}`; a request may name any target
  of the project's targets.yaml (`target`), the default being the judge.
- The provider proxy of an AgentV 4 script grader with `provider: {max_calls: N}` (AgentV
  4's runtime/provider-proxy.ts), `provider_proxy`: `AGENTV_PROVIDER_PROXY_URL` and
  `AGENTV_PROVIDER_PROXY_TOKEN`; `GET /info` `{providerLabel, maxCalls, callCount,
  availableProviderLabels}`; answers `{output, rawText, tokenUsage}`; a request may name
  any provider label the proxy lists (`provider`), the default being the grader's.

Both: `POST /invoke` `{question, systemPrompt?}` (400 without a question, or naming a
provider it does not know; 429 once `max_calls` calls were made, default 50; 500 with the
call's error); `POST /invokeBatch` `{requests: [...]}`, the answers in order, 429 when the
batch would pass the budget, a bad item answered `{rawText: "Error: ..."}` and not counted;
401 without the token, 404 for any other path.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from ......engine.masking import remember

DEFAULT_MAX_CALLS = 50


@dataclass(frozen=True)
class Answer:
    """A model's reply to one proxied question, with its tokens when known."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None


Ask = Callable[[str, str | None], Awaitable[str]]
Answering = Callable[[str, str | None], Awaitable[Answer]]
# the way to the provider a label names (None: the default); None when there is no such one
Route = Callable[[str | None], Answering | None]


@dataclass(frozen=True)
class Wire:
    """What differs between AgentV's two proxies: variable names, the /info keys, the
    answer's key, the field naming another provider and its word in errors."""

    url_var: str
    token_var: str
    info: tuple[str, str, str, str]  # the default's label, max calls, call count, labels
    output: str
    override: str
    word: str
    usage: bool


TARGET_WIRE = Wire(
    "AGENTV_TARGET_PROXY_URL", "AGENTV_TARGET_PROXY_TOKEN",
    ("targetName", "maxCalls", "callCount", "availableTargets"), "outputMessages", "target",
    "target", usage=False,
)  # fmt: skip
PROVIDER_WIRE = Wire(
    "AGENTV_PROVIDER_PROXY_URL", "AGENTV_PROVIDER_PROXY_TOKEN",
    ("providerLabel", "maxCalls", "callCount", "availableProviderLabels"), "output",
    "provider", "provider", usage=True,
)  # fmt: skip


class ModelProxy:
    def __init__(
        self, wire: Wire, name: str, labels: Sequence[str], route: Route, max_calls: float
    ) -> None:
        self.wire = wire
        self.name = name
        self.labels = list(labels)
        self.route = route
        self.max_calls = max_calls
        self.calls = 0
        self.token = secrets.token_hex(32)
        remember(self.token)

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._auth])
        app.router.add_get("/info", self._info)
        app.router.add_post("/invoke", self._invoke)
        app.router.add_post("/invokeBatch", self._invoke_batch)
        return app

    @web.middleware
    async def _auth(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.json_response({"error": "Unauthorized"}, status=401)
        try:
            return await handler(request)
        except (web.HTTPNotFound, web.HTTPMethodNotAllowed):
            return web.json_response({"error": "Not found"}, status=404)

    async def _info(self, request: web.Request) -> web.Response:
        label, limit, count, labels = self.wire.info
        return web.json_response(
            {label: self.name, limit: self.max_calls, count: self.calls, labels: self.labels}
        )

    async def _answer(self, body: Any) -> tuple[int, dict[str, Any]]:
        if not isinstance(body, dict) or not isinstance(body.get("question"), str):
            return 400, {"error": "Missing required field: question"}
        if not body["question"]:
            return 400, {"error": "Missing required field: question"}
        wanted = body.get(self.wire.override)
        answering = self.route(None if wanted is None or wanted == self.name else str(wanted))
        if answering is None:
            return 400, {
                "error": f"Unknown {self.wire.word} '{wanted}'. Available: {', '.join(self.labels)}"
            }
        self.calls += 1
        system = body.get("systemPrompt")
        answer = await answering(body["question"], system if isinstance(system, str) else None)
        data: dict[str, Any] = {
            self.wire.output: [{"role": "assistant", "content": answer.text}],
            "rawText": answer.text,
        }
        if self.wire.usage and answer.input_tokens is not None:
            data["tokenUsage"] = {"input": answer.input_tokens, "output": answer.output_tokens}
        return 200, data

    async def _invoke(self, request: web.Request) -> web.Response:
        if self.calls >= self.max_calls:
            return web.json_response(
                {"error": f"Max calls exceeded (limit: {_shown(self.max_calls)})"}, status=429
            )
        try:
            status, data = await self._answer(await request.json())
        except Exception as exc:  # the script sees the failure, as AgentV's 500
            return web.json_response({"error": str(exc)}, status=500)
        return web.json_response(data, status=status)

    async def _invoke_batch(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError as exc:
            return web.json_response({"error": str(exc)}, status=500)
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list):
            return web.json_response(
                {"error": "Missing required field: requests (array)"}, status=400
            )
        if self.calls + len(requests) > self.max_calls:
            return web.json_response(
                {
                    "error": f"Batch would exceed max calls (current: {self.calls}, batch: "
                    f"{len(requests)}, limit: {_shown(self.max_calls)})"
                },
                status=429,
            )
        responses = []
        for item in requests:
            try:
                status, data = await self._answer(item)
            except Exception as exc:
                status, data = 500, {"error": str(exc)}
            if status != 200:
                data = {self.wire.output: [], "rawText": f"Error: {data['error']}"}
            responses.append(data)
        return web.json_response({"responses": responses})


def _shown(limit: float) -> str:
    """A limit as JavaScript prints a number: 4, not 4.0."""
    return str(int(limit)) if float(limit).is_integer() else str(limit)


@asynccontextmanager
async def _serving(proxy: ModelProxy) -> AsyncIterator[dict[str, str]]:
    """The proxy on a free port of 127.0.0.1 (never another interface); yields the
    script's environment; closed when the block ends, however it ends."""
    runner = web.AppRunner(proxy.app(), access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        yield {
            proxy.wire.url_var: f"http://127.0.0.1:{port}",
            proxy.wire.token_var: proxy.token,
        }
    finally:
        await runner.cleanup()


def target_proxy(
    name: str, ask: Ask, max_calls: int, labels: Sequence[str] = (),
    others: dict[str, Ask] | None = None,
) -> AbstractAsyncContextManager[dict[str, str]]:  # fmt: skip
    """A seed-002 code judge's target proxy: a question to `ask` (the judge, `name`), or to
    the target a request names among `others` (AgentV's targetResolver); `labels` are
    those /info lists."""

    def answering(asker: Ask) -> Answering:
        async def answer(question: str, system: str | None) -> Answer:
            return Answer(await asker(question, system))

        return answer

    def route(label: str | None) -> Answering | None:
        if label is None:
            return answering(ask)
        other = (others or {}).get(label)
        return answering(other) if other is not None else None

    return _serving(ModelProxy(TARGET_WIRE, name, list(labels) or [name], route, max_calls))


def provider_proxy(
    name: str, labels: Sequence[str], route: Route, max_calls: float
) -> AbstractAsyncContextManager[dict[str, str]]:
    """An AgentV 4 script grader's provider proxy: `name` the default provider's label,
    `labels` those a request may name, `route` the way to each."""
    return _serving(ModelProxy(PROVIDER_WIRE, name, labels, route, max_calls))
