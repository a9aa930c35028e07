"""The target proxy of a code judge with `target: {max_calls: N}` (AgentV's
runtime/target-proxy.ts): an HTTP server on 127.0.0.1 for the script's lifetime, reached
through `AGENTV_TARGET_PROXY_URL` with the bearer token `AGENTV_TARGET_PROXY_TOKEN`.

- `GET /info`: `{targetName, maxCalls, callCount, availableTargets}`.
- `POST /invoke` `{question, systemPrompt?}`: `{outputMessages, rawText}` from the case's
  judge (AgentV's proxy answers with the judge provider); 429 past `max_calls` (default 50).
- `POST /invokeBatch` `{requests: [...]}`: the answers in order; 429 when the batch would
  pass the budget.

A request naming another `target` is refused (400) with the one target it may name. The
token is random per script run and masked in everything accord writes.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web

from accord.engine.masking import remember

DEFAULT_MAX_CALLS = 50
Ask = Callable[[str, str | None], Awaitable[str]]


class TargetProxy:
    def __init__(self, name: str, ask: Ask, max_calls: int) -> None:
        self.name = name
        self.ask = ask
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
        return await handler(request)

    async def _info(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "targetName": self.name,
                "maxCalls": self.max_calls,
                "callCount": self.calls,
                "availableTargets": [self.name],
            }
        )

    async def _answer(self, body: Any) -> tuple[int, dict[str, Any]]:
        if not isinstance(body, dict) or not isinstance(body.get("question"), str):
            return 400, {"error": "Missing required field: question"}
        if not body["question"]:
            return 400, {"error": "Missing required field: question"}
        wanted = body.get("target")
        if wanted is not None and wanted != self.name:
            return 400, {"error": f"Unknown target '{wanted}'. Available: {self.name}"}
        self.calls += 1
        system = body.get("systemPrompt")
        text = await self.ask(body["question"], system if isinstance(system, str) else None)
        return 200, {"outputMessages": [{"role": "assistant", "content": text}], "rawText": text}

    async def _invoke(self, request: web.Request) -> web.Response:
        if self.calls >= self.max_calls:
            return web.json_response(
                {"error": f"Max calls exceeded (limit: {self.max_calls})"}, status=429
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
                    f"{len(requests)}, limit: {self.max_calls})"
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
                data = {"outputMessages": [], "rawText": f"Error: {data['error']}"}
            responses.append(data)
        return web.json_response({"responses": responses})


@asynccontextmanager
async def target_proxy(name: str, ask: Ask, max_calls: int) -> AsyncIterator[dict[str, str]]:
    """The proxy running on a free port of 127.0.0.1; yields the script's environment."""
    proxy = TargetProxy(name, ask, max_calls)
    runner = web.AppRunner(proxy.app(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        yield {
            "AGENTV_TARGET_PROXY_URL": f"http://127.0.0.1:{port}",
            "AGENTV_TARGET_PROXY_TOKEN": proxy.token,
        }
    finally:
        await runner.cleanup()
