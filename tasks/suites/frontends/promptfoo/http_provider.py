"""promptfoo's `http` provider (0.118, `src/providers/http.ts`): a request to the user's own
app, its answer read as promptfoo reads it.

- The URL is the id (`https://host/path`) or `config.url` (with the id `http`/`https`);
  `method` (GET unless given), `headers`, `queryParams` and `body` (text, or a mapping or
  list whose strings are rendered one by one and read as JSON when they are JSON, as
  `processJsonBody` reads them) are templates filled with the test's vars and `prompt`.
  A mapping body makes the content type `application/json`, a text one
  `application/x-www-form-urlencoded` (unless `headers` says otherwise), as promptfoo's
  `getDefaultHeaders`.
- `transformRequest`, `validateStatus`, `sessionParser`, `transformResponse` (or its old
  name `responseParser`): JavaScript, inline or `file://FILE.js[:FUNCTION]`, run on node
  (node_functions.py) with their inputs as arguments. Without `transformResponse` the output
  is the JSON the app answered, else its text.
- A status `validateStatus` refuses fails the test with promptfoo's words ("HTTP call
  failed with status ..."); without `validateStatus` every status is an answer, as in
  promptfoo. A refused connection fails at once; other connection errors and 429s are tried
  again up to `maxRetries` (4) times, waiting as the models door waits.

Security (docs/security.md): the request goes to the URL the config names and nowhere else.
A template reading the environment (`{{ env.KEY }}` in a header, the body, the URL's query)
sends that value to the URL: when the file writes the URL, that needs the user's trust in the
file (engine/keys.py, as an `apiBaseUrl` with a key from the environment). Code written in
the file (an inline transform, validator or parser) runs only in a trusted file
(engine/programs.py `admit_code`); a `file://` module of the project needs no trust. Every
value from the file is data: no shell reads any of it, and the prompt, vars and the
response reach the JavaScript as arguments, never as code.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal
from urllib.parse import quote_plus, urlsplit

from jinja2 import nodes
from pydantic import Field

from .....engine import keys
from .....engine.paths import PathError, inside
from .....engine.yamlmarks import Loc
from ....evaluators.cases import Case, Output
from ...core.targets import Target, TargetFailure, target
from . import templating
from .node_functions import JAVASCRIPT_SUFFIXES, NODE_RUNS, run_node

if TYPE_CHECKING:
    from .....engine.context import TaskContext

# http.ts HttpProviderConfigSchema's keys accord reads
CONFIG_KEYS = (
    "url", "method", "headers", "body", "queryParams", "transformRequest", "transformResponse",
    "responseParser", "validateStatus", "sessionParser", "maxRetries", "tokenEstimation",
)  # fmt: skip
REFUSED_KEYS = {
    "request": "a raw HTTP request ('request') is not run by accord: write its parts as "
    "url, method, headers and body",
    "useHttps": "'useHttps' goes with a raw 'request', which accord does not run",
    "signatureAuth": "'signatureAuth' (a request signed with a key or certificate file) is "
    "not run by accord",
}
FUNCTIONS = ("transformRequest", "transformResponse", "responseParser", "validateStatus",
             "sessionParser")  # fmt: skip
DEFAULT_RETRIES = 4  # fetch.ts fetchWithRetries
BACKOFF_ENV = "ACCORD_RETRY_BACKOFF"
_METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT")  # fetch normalizes their case


class HttpProblem(ValueError):
    """A config the http provider cannot run: the message, and the key path it is about."""

    def __init__(self, message: str, *key: str | int) -> None:
        super().__init__(message)
        self.message = message
        self.key = key


class _Layered(Mapping[str, Any]):
    """`env` as promptfoo's templates see it: the config's `env:` over the process
    environment (read through engine/keys.py, so each value looked up is masked)."""

    def __init__(self, own: Mapping[str, Any]) -> None:
        self._own = own
        self._environment = keys.environment()

    def __getitem__(self, name: str) -> Any:
        if name in self._own:
            return self._own[name]
        return self._environment[name]

    def __iter__(self) -> Iterator[str]:
        return iter({*self._own, *self._environment})

    def __len__(self) -> int:
        return len({*self._own, *self._environment})


def is_http(pid: str) -> bool:
    """registry.ts: an id starting `http:` or `https:`, or `http`/`https` alone."""
    return pid in ("http", "https") or pid.startswith(("http:", "https:"))


def env_names(source: str) -> set[str]:
    """The names a template reads from `env` (`env.X`, `env['X']`); `*` when it reads `env`
    some other way (the whole mapping, a computed name)."""
    if "env" not in source or "{" not in source:
        return set()
    ast = templating.environment().parse(source)
    found: set[str] = set()
    named: set[int] = set()
    for node in ast.find_all((nodes.Getattr, nodes.Getitem)):
        inner = node.node  # type: ignore[attr-defined]
        if not (isinstance(inner, nodes.Name) and inner.name == "env"):
            continue
        named.add(id(inner))
        if isinstance(node, nodes.Getattr):
            found.add(node.attr)
        elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
            found.add(str(node.arg.value))
        else:
            found.add("*")
    if any(n.name == "env" and id(n) not in named for n in ast.find_all(nodes.Name)):
        found.add("*")
    return found


def _templates(config: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Every template of the config with its key path: url, method, header and query values,
    the body's strings."""
    for key in ("url", "method"):
        if isinstance(config.get(key), str):
            yield (key,), config[key]
    for key in ("headers", "queryParams"):
        for name, value in (config.get(key) or {}).items():
            if isinstance(value, str):
                yield (key, name), value

    def walk(value: Any, path: Loc) -> Iterator[tuple[Loc, str]]:
        if isinstance(value, str):
            yield path, value
        elif isinstance(value, list):
            for index, item in enumerate(value):
                yield from walk(item, (*path, index))
        elif isinstance(value, dict):
            for name, item in value.items():
                yield from walk(item, (*path, name))

    yield from walk(config.get("body"), ("body",))


def _function(value: Any, key: str, base: Path, root: Path) -> dict[str, str | None]:
    """A function given in the config: `{code}` (inline JavaScript) or `{file, function}`
    (a module of the project, resolved from the config's folder as promptfoo resolves it)."""
    if not isinstance(value, str) or not value.strip():
        raise HttpProblem(f"'{key}' is JavaScript code or file://FILE.js[:FUNCTION]", key)
    if not value.startswith("file://"):
        if key == "transformRequest" and ("{{" in value or "{%" in value):
            # promptfoo renders the prompt into this code before running it
            raise HttpProblem(
                "'transformRequest' writes a template ({{ }}): promptfoo puts the prompt into "
                "the code there, which accord never does; use the function's argument "
                "`prompt` instead (`return {text: prompt}`)",
                key,
            )
        return {"code": value}
    name, function = value[len("file://") :], None
    head, sep, tail = name.partition(":")
    if sep and head.endswith(JAVASCRIPT_SUFFIXES):
        name, function = head, tail or None
    if not name.endswith(JAVASCRIPT_SUFFIXES):
        raise HttpProblem(
            f"'{key}' names '{name}', which is not a JavaScript file: promptfoo imports a "
            f"{' or '.join(NODE_RUNS)} module here",
            key,
        )
    if not name.endswith(NODE_RUNS):
        raise HttpProblem(
            f"'{key}' names the TypeScript file '{name}': accord runs {', '.join(NODE_RUNS)} "
            "modules on node (promptfoo compiles TypeScript with tsx); compile it to .js",
            key,
        )
    try:
        relative = (base / name).resolve().relative_to(root.resolve())
        path = inside(root, relative, f"the http provider's {key} file")
    except (ValueError, PathError):
        raise HttpProblem(
            f"'{key}' names '{name}', outside the project root {root}: a provider runs only "
            "the project's own code",
            key,
        ) from None
    if not path.is_file():
        raise HttpProblem(f"'{key}' names '{name}': no such file under {base}", key)
    return {"file": str(relative), "function": function}


def build(
    pid: str,
    config: dict[str, Any],
    base: Path,
    root: Path,
    *,
    file: Path,
    env: dict[str, Any],
) -> HttpTarget:
    """The target of an http provider entry; `HttpProblem` at its key for what accord
    cannot run, or may not send (engine/keys.py). `file` writes the entry, `env` is the
    config's `env:`."""
    _known_keys(config)
    url = config.get("url") or pid
    if not isinstance(url, str) or url in ("http", "https"):
        at = ("url",) if "url" in config else ()
        raise HttpProblem(
            "the http provider needs its URL: `id: https://HOST/PATH`, or `config: {url: ...}`",
            *at,
        )
    method = config.get("method")
    if method is not None and not isinstance(method, str):
        raise HttpProblem("'method' is text (GET, POST, ...)", "method")
    body = config.get("body")
    if (body is None or body == "") and method != "GET":
        # http.ts's constructor: `invariant(config.body || config.method === 'GET', ...)`
        raise HttpProblem(
            f"Expected HTTP provider {url} to have a config containing {{body}}: give the "
            "request's `body` (with {{prompt}} where the prompt goes), or `method: GET`"
        )
    if body is not None and not isinstance(body, str | dict | list):
        raise HttpProblem("'body' is text, a mapping or a list", "body")
    _text_maps(config)
    retries = config.get("maxRetries", DEFAULT_RETRIES)
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise HttpProblem("'maxRetries' is a whole number, 0 or more", "maxRetries")
    for path, source in _templates(config):
        try:
            templating.check(source)
        except templating.NunjucksDifference as exc:
            raise HttpProblem(exc.message, *path) from None
    functions = {}
    for key in FUNCTIONS:
        if config.get(key) is not None:
            functions["transformResponse" if key == "responseParser" else key] = _function(
                config[key], key, base, root
            )
    if functions:
        from .asserts.scripts import node_path

        if node_path() is None:
            key = next(iter(functions))
            raise HttpProblem(f"'{key}' is JavaScript, run on Node.js: no 'node' on the PATH",
                              "responseParser" if key not in config else key)  # fmt: skip
    if isinstance(body, dict | list) and _json_type(config) is False:
        raise HttpProblem(
            "Content-Type is not application/json, but body is an object or array. The body "
            "must be a string if the Content-Type is not application/json.",
            "headers",
        )
    # the names the templates read from the environment, and which of them the config's
    # own `env:` gives (a value written in the file)
    read: dict[str, tuple[str | int, ...]] = {}
    for path, source in _templates(config):
        for name in env_names(source):
            read.setdefault(name, path)
    own = {k: v for k, v in env.items() if k in read}
    _key_rule(url, read, own, file, root)
    folder = base.resolve()
    return HttpTarget(
        url=url, method=method, headers=dict(config.get("headers") or {}), body=body,
        query=config.get("queryParams"), functions=functions, retries=retries,
        estimate=_estimation(config), own_env=own,
        cwd=str(folder.relative_to(root.resolve())) if folder != root.resolve() else ".",
    )  # fmt: skip


def _known_keys(config: dict[str, Any]) -> None:
    from .....engine.errors import did_you_mean

    for key in config:
        if key in REFUSED_KEYS:
            raise HttpProblem(REFUSED_KEYS[key], key)
        if key not in CONFIG_KEYS:
            hint = did_you_mean(key, CONFIG_KEYS, before="", after=" ")
            raise HttpProblem(
                f"http provider config key '{key}' is not one promptfoo's http provider "
                f"reads: {hint}known keys: {', '.join(CONFIG_KEYS)}",
                key,
            )


def _text_maps(config: dict[str, Any]) -> None:
    """`headers` and `queryParams`: names to text (http.ts's schema)."""
    for key in ("headers", "queryParams"):
        given = config.get(key)
        if given is None:
            continue
        if not isinstance(given, dict):
            raise HttpProblem(f"'{key}' is a mapping of names to text", key)
        for name, value in given.items():
            if not isinstance(value, str):
                raise HttpProblem(f"{key} '{name}' is text (quote it: '{value}')", key, name)


def _estimation(config: dict[str, Any]) -> float | None:
    """tokenEstimation's multiplier when it is enabled."""
    estimation = config.get("tokenEstimation")
    if estimation is None:
        return None
    if not isinstance(estimation, dict) or set(estimation) - {"enabled", "multiplier"}:
        raise HttpProblem("'tokenEstimation' is {enabled, multiplier}", "tokenEstimation")
    if not estimation.get("enabled"):
        return None
    multiplier = estimation.get("multiplier", 1.3)
    if not isinstance(multiplier, int | float) or isinstance(multiplier, bool) or multiplier < 0.01:
        raise HttpProblem(
            "tokenEstimation's multiplier is a number of 0.01 or more",
            "tokenEstimation",
            "multiplier",
        )
    return float(multiplier)


def _json_type(config: dict[str, Any]) -> bool | None:
    """Whether the request's content type is JSON: None when a template decides it."""
    headers = config.get("headers") or {}
    named = [v for k, v in headers.items() if k.lower().startswith("content-type")]
    if any("{" in v for v in named):
        return None
    if named:
        return any("application/json" in v for v in named)
    return isinstance(config.get("body"), dict | list) and config.get("method") != "GET"


def _key_rule(
    url: str,
    read: dict[str, tuple[str | int, ...]],
    own: dict[str, Any],
    file: Path,
    root: Path,
) -> None:
    """A value the templates read from the process environment goes to `url`: refused
    unless the environment chose the URL, or the user trusts `file` (engine/keys.py)."""
    from_environment = [(n, p) for n, p in read.items() if n not in own and n != "*"]
    if "*" in read:
        from_environment.insert(0, ("(the whole environment)", read["*"]))
    if not from_environment:
        return
    name, path = from_environment[0]
    layered = _Layered(own)
    try:
        shown = keys.rendered(lambda: templating.render(url, {"env": layered}))
    except templating.NunjucksDifference:
        shown = url
    refused = keys.destination_refusal(
        file, root, url=shown, key=name, what="the http provider ",
        instead="Give the URL from the environment too (url: '{{ env.APP_URL }}'), or write "
        "the value itself in the file",
    )  # fmt: skip
    if refused is not None:
        raise HttpProblem(refused, *path)


@target("promptfoo-http")
class HttpTarget(Target):
    """promptfoo's http provider: one request to the config's URL per case."""

    type: Literal["promptfoo-http"] = "promptfoo-http"
    url: str
    method: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    body: Any = None
    query: dict[str, str] | None = None
    functions: dict[str, dict[str, str | None]] = Field(default_factory=dict)
    retries: int = DEFAULT_RETRIES
    estimate: float | None = None  # tokenEstimation's multiplier, when enabled
    cwd: str = "."
    # the config's `env:` values the templates read (written in the file)
    own_env: dict[str, Any] = Field(default_factory=dict, repr=False)
    default_timeout: ClassVar[float | None] = 300.0  # promptfoo's REQUEST_TIMEOUT_MS

    def describe(self) -> str:
        return f"http {keys.shown_url(self.url)}"

    def admission(self, file: Path, root: Path) -> str | None:
        from .....engine.programs import admit_code

        for key, spec in self.functions.items():
            if "code" in spec:
                refused = admit_code(file, root, f"the http provider's {key}")
                if refused is not None:
                    return refused
        return None

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        prompt = case.prompt
        variables = {**case.metadata.get("vars", {}), "prompt": prompt}
        env = _Layered(self.own_env)
        context = {**variables, "env": env}
        headers = self._headers(context)
        cwd = tctx.root / self.cwd
        transformed: Any = prompt
        if "transformRequest" in self.functions:
            answer = await run_node(
                {"kind": "request", "transformRequest": self._spec("transformRequest", tctx),
                 "prompt": prompt},
                cwd, self.seconds(), "the http provider's transformRequest",
            )  # fmt: skip
            transformed = answer.get("result")
        url = _render(self.url, context)
        method = _render(self.method or "GET", context) or "POST"
        is_json = _content_json(headers)
        body = _request_body(is_json, transformed, self.body, {**variables, "prompt": transformed},
                             env)  # fmt: skip
        if self.query:
            url = _with_query(url, {k: _render(v, context) for k, v in self.query.items()})
        data: bytes | None = None
        if method != "GET":
            if is_json:
                text = body if isinstance(body, str) else js_json(body)
            else:
                text = _js_string(body).strip()
            data = text.encode()
        status, reason, answer_headers, raw = await self._send(url, method, headers, data)
        parsed = _json_parse(raw)
        steps: dict[str, Any] = {
            k: self._spec(k, tctx)
            for k in ("validateStatus", "sessionParser", "transformResponse")
            if k in self.functions
        }
        result: Any = {"output": parsed if _truthy(parsed) else raw}
        if steps:
            response = {"data": raw, "cached": False, "status": status, "statusText": reason,
                        "headers": answer_headers}  # fmt: skip
            answer = await run_node(
                {"kind": "response", "response": response, "parsed": parsed, **steps},
                cwd, self.seconds(), "the http provider",
            )  # fmt: skip
            if answer.get("failed"):
                raise TargetFailure(f"HTTP call failed with status {status} {reason}: {raw}")
            if "transformResponse" in steps:
                result = answer.get("result", _UNDEFINED)
        return self._output(result, raw, prompt, transformed)

    def _spec(self, key: str, tctx: TaskContext) -> dict[str, Any]:
        spec = dict(self.functions[key])
        if spec.get("file"):
            spec["file"] = str(inside(tctx.root, str(spec["file"]), f"{key} file").resolve())
        return spec

    def _headers(self, context: dict[str, Any]) -> dict[str, str]:
        """http.ts getHeaders: the default content type, then the config's (names in lower
        case), each value rendered."""
        defaults: dict[str, str] = {}
        if self.method != "GET":
            if isinstance(self.body, dict | list):
                defaults = {"content-type": "application/json"}
            elif isinstance(self.body, str):
                defaults = {"content-type": "application/x-www-form-urlencoded"}
        merged = {**defaults, **{k.lower(): v for k, v in self.headers.items()}}
        headers = {k: _render(v, context) for k, v in merged.items()}
        if isinstance(self.body, dict | list) and not _content_json(headers):
            raise TargetFailure(
                "Content-Type is not application/json, but body is an object or array. The "
                "body must be a string if the Content-Type is not application/json."
            )
        return headers

    async def _send(
        self, url: str, method: str, headers: dict[str, str], data: bytes | None
    ) -> tuple[int, str, dict[str, str], str]:
        """The request, tried again on a connection error or a 429 (as fetchWithRetries),
        waiting as the models door waits; (status, status text, headers, text)."""
        import aiohttp

        from .....engine.retry import RetryPolicy, wait_out

        backoff = float(os.environ.get(BACKOFF_ENV) or 1.0)
        policy = RetryPolicy(attempts=self.retries + 1, backoff=backoff, cap=30.0, jitter=True)
        verb = method.upper() if method.upper() in _METHODS else method
        seconds = self.seconds()
        problem = ""
        for attempt in range(1, self.retries + 2):
            retry_after: float | None = None
            try:
                async with (
                    aiohttp.ClientSession(trust_env=True) as session,
                    session.request(
                        verb, _exact(url), data=data, headers=headers, allow_redirects=True,
                        timeout=aiohttp.ClientTimeout(total=seconds),
                    ) as response,
                ):  # fmt: skip
                    content = await response.read()
                    got = _headers_of(response.headers)
                    if response.status != 429 and not _exhausted(got):
                        return (response.status, response.reason or "", got,
                                content.decode("utf-8", "replace"))  # fmt: skip
                    problem = f"HTTP {response.status} {response.reason or ''}".strip()
                    retry_after = _seconds(got.get("retry-after"))
            except aiohttp.InvalidURL:
                raise TargetFailure(f"the http provider's URL is not valid: '{url}'") from None
            except (aiohttp.ClientError, TimeoutError, OSError) as exc:
                if _refused(exc):
                    raise TargetFailure(
                        f"connection refused by {keys.shown_url(url)} (nothing listens there: "
                        "start the app, or fix the provider's url)"
                    ) from None
                problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            if attempt > self.retries:
                break
            await wait_out(policy.delay(attempt, retry_after))
        raise TargetFailure(f"Request failed after {self.retries} retries: {problem}")

    def _output(self, result: Any, raw: str, prompt: str, transformed: Any) -> Output:
        """http.ts processResponseWithTokenEstimation, then the evaluator's reading: an
        `error` fails the test, no output is 'No output'."""
        if isinstance(result, dict) and _truthy(result.get("output")):
            response = dict(result)
        else:
            response = {"output": result}
        usage = None
        if self.estimate is not None and "tokenUsage" not in response:
            sent = transformed if isinstance(transformed, str) else prompt
            answer = result if isinstance(result, str) else (
                result.get("output") if isinstance(result, dict)
                and isinstance(result.get("output"), str) and result.get("output") else raw
            )  # fmt: skip
            usage = {"input": _estimate(sent, self.estimate),
                     "output": _estimate(answer, self.estimate)}  # fmt: skip
        return provider_output(response, "the http provider", usage)


def provider_output(response: Any, what: str, usage: dict[str, int] | None = None) -> Output:
    """A promptfoo ProviderResponse as accord's Output: its `error` fails the case, an
    output that is null (or absent) is promptfoo's 'No output'; `tokenUsage` and `cost` are
    kept."""
    if not isinstance(response, dict):
        raise TargetFailure(f"{what} returned {js_json(response)[:200]}, not a response object")
    if response.get("error"):
        error = response["error"]
        raise TargetFailure(error if isinstance(error, str) else js_json(error))
    output = response.get("output", _UNDEFINED)
    if output is None or output is _UNDEFINED:
        raise TargetFailure("No output")
    tokens = response.get("tokenUsage")
    if usage is None and isinstance(tokens, dict):
        counts = {"input": tokens.get("prompt"), "output": tokens.get("completion")}
        usage = {k: int(v) for k, v in counts.items()
                 if isinstance(v, int | float) and not isinstance(v, bool)}  # fmt: skip
    cost = response.get("cost")
    spent = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
    if isinstance(output, str):
        return Output(text=output, usage=usage or None, cost=spent)
    return Output(text=js_json(output), value=output, usage=usage or None, cost=spent)


_UNDEFINED: Any = object()


def js_json(value: Any) -> str:
    """JavaScript's `JSON.stringify(value)` (asserts/graded.py's, without loading it)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _truthy(value: Any) -> bool:
    """JavaScript's truthiness."""
    if value is None or value is False or value is _UNDEFINED:
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value != 0 and not math.isnan(value)
    if isinstance(value, str):
        return value != ""
    return True


def _render(source: str, context: dict[str, Any]) -> str:
    try:
        return templating.render(source, context)
    except templating.NunjucksDifference as exc:
        raise TargetFailure(f"the http provider's template: {exc.message}") from None


def _render_object(value: Any, context: dict[str, Any]) -> Any:
    """promptfoo's renderVarsInObject: every string rendered, keys left as they are."""
    if isinstance(value, str):
        return _render(value, context)
    if isinstance(value, list):
        return [_render_object(v, context) for v in value]
    if isinstance(value, dict):
        return {k: _render_object(v, context) for k, v in value.items()}
    return value


def _json_parse(text: str) -> Any:
    """JSON.parse, None where it throws (NaN and Infinity are no JSON there)."""

    def refuse(name: str) -> Any:
        raise ValueError(name)

    try:
        return json.loads(text, parse_constant=refuse)
    except (ValueError, RecursionError):
        return None


def _parsed_strings(value: Any) -> Any:
    """processJsonBody's second pass: each string that is JSON becomes its value."""
    if isinstance(value, list):
        return [_parsed_strings(v) for v in value]
    if isinstance(value, dict):
        return {k: _parsed_strings(v) for k, v in value.items()}
    if isinstance(value, str):
        parsed = _json_parse(value)
        return value if parsed is None and value.strip() != "null" else parsed
    return value


def _request_body(
    is_json: bool, transformed: Any, body: Any, variables: dict[str, Any], env: Mapping[str, Any]
) -> Any:
    """http.ts determineRequestBody."""
    context = {**variables, "env": env}
    if is_json:
        if isinstance(transformed, dict | list):
            # Object.assign({}, body || {}, transformed): a list's or a text's items by index
            return {**_as_object(body), **_as_object(transformed)}
        rendered = _render_object(body, context)
        if isinstance(rendered, dict | list):
            return _parsed_strings(rendered)
        if isinstance(rendered, str):
            parsed = _json_parse(rendered)
            if parsed is not None or rendered.strip() == "null":
                return parsed
            if rendered.strip().startswith(("{", "[")) and isinstance(body, str):
                escaped = {k: json.dumps(v, ensure_ascii=False)[1:-1] if isinstance(v, str) else v
                           for k, v in variables.items()}  # fmt: skip
                again = _json_parse(_render(body, {**escaped, "env": env}))
                if again is not None:
                    return again
            return rendered
        return rendered
    if body is None:
        return None
    return _render_object(body, context)


def _as_object(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return {str(k): v for k, v in value.items()}
    if isinstance(value, list | str):
        return {str(i): v for i, v in enumerate(value)}
    return {}


def _content_json(headers: Mapping[str, str]) -> bool:
    return any(k.lower().startswith("content-type") and "application/json" in v
               for k, v in headers.items())  # fmt: skip


def _js_string(value: Any) -> str:
    """JavaScript's String(value) for the values a body can be."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, list):
        return ",".join("" if v is None else _js_string(v) for v in value)
    return str(value)


def _with_query(url: str, params: dict[str, str]) -> str:
    """The URL with each parameter appended as URLSearchParams writes it."""
    query = "&".join(f"{_form(k)}={_form(v)}" for k, v in params.items())
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return f"{url}{'&' if '?' in url else '?'}{query}"
    head, _, fragment = url.partition("#")
    joined = f"{head}{'&' if parts.query else ('' if head.endswith('?') else '?')}{query}"
    return f"{joined}#{fragment}" if fragment else joined


def _exact(url: str) -> Any:
    """The URL sent as written (yarl would decode `%7E` and re-encode others); one with
    characters a URL cannot hold is encoded as fetch's URL parser encodes them."""
    from yarl import URL

    if all(33 <= ord(c) < 127 for c in url):
        return URL(url, encoded=True)
    return URL(url)


def _form(text: str) -> str:
    """application/x-www-form-urlencoded as the URL standard writes it (`*` kept, `~` not)."""
    return quote_plus(text, safe="*").replace("~", "%7E")


def _headers_of(headers: Any) -> dict[str, str]:
    """Headers as fetch's `Object.fromEntries(headers.entries())`: names in lower case, the
    values of a repeated name joined by ', '."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def _exhausted(headers: dict[str, str]) -> bool:
    """fetch.ts isRateLimited: a rate limit header at zero."""
    return any(headers.get(h) == "0" for h in ("x-ratelimit-remaining",
               "x-ratelimit-remaining-requests", "x-ratelimit-remaining-tokens"))  # fmt: skip


def _seconds(value: str | None) -> float | None:
    try:
        return float(value) if value else None
    except ValueError:
        return None


def _refused(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ConnectionRefusedError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__ or getattr(current, "os_error", None)
    return False


def _estimate(text: Any, multiplier: float) -> int:
    """http.ts estimateTokenCount: words times the multiplier, rounded up."""
    if not isinstance(text, str) or not text:
        return 0
    return math.ceil(len(text.split()) * multiplier)
