"""Runs as OpenTelemetry traces, sent over OTLP to the team's own collector
(docs/observability.md).

On when config.yml has a `telemetry:` entry with an `endpoint`, or when the standard
`OTEL_EXPORTER_OTLP_ENDPOINT` (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set; off otherwise,
and then nothing here imports OpenTelemetry and every hook is one test of a module global.

A run is one trace: a span for the run (`runner.execute`), one per scheduler node (this module's
`RunTrace` is one of the run's observers), and under a node's span one per model call, tool
call, SQL query and program run (the hooks `traced_completion`, `traced_tool`,
`traced_database` and `traced_program`). Every span is made in the run's own process, the
Ray executor's too (its workers do the work the driver awaits), so a run on a cluster is one
trace as well. Spans are handed to OpenTelemetry's `BatchSpanProcessor`, whose own thread
sends them; at the command's end the last ones get `telemetry.flush_timeout` seconds (5) to
leave. A collector that cannot be reached costs the run nothing more, and is said once, in
one line on stderr.

Prompts, answers, tool arguments and results, SQL and command lines are sent only under
`telemetry.content: true`; every text sent is masked (engine/masking) first.
"""

from __future__ import annotations

import atexit
import functools
import json
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from . import log
from .errors import ConfigError
from .masking import mask, mask_data, remember

DEFAULT_SERVICE = "accord"
CONTENT_CHARS = 32 * 1024  # a content attribute is cut at this many characters
ERROR_CHARS = 1000
PROTOCOLS = ("http/protobuf", "grpc")
# a batch leaves at most this long after its first span ends (OpenTelemetry's default: 5 s)
SCHEDULE_DELAY_MS = 1000
# spans waiting to be sent (OpenTelemetry's default, 2,048, dropped a third of a 10,000-node
# run's: B25), and sent per request
QUEUE_SPANS = 32_768
BATCH_SPANS = 2048
ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
PROTOCOL_VARS = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
HEADER_VARS = ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS")

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])

# True once a run has started a trace in this process: the hooks do nothing before
_on = False


@dataclass(frozen=True)
class Settings:
    """Where and how a run's trace goes."""

    endpoint: str  # the URL spans are posted to (http), or the collector's address (grpc)
    protocol: str
    headers: tuple[tuple[str, str], ...]
    service_name: str
    content: bool
    flush_timeout: float
    source: str  # what turned telemetry on: `config.yml` or the variable's name


def settings(spec: Any, environ: Mapping[str, str] | None = None) -> Settings | None:
    """The run's telemetry settings from config.yml's `telemetry:` entry (`spec`, or None)
    and the standard variables; None when off."""
    env = os.environ if environ is None else environ
    if spec is not None and not spec.enabled:
        return None
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    endpoint, source, exact = None, "config.yml", False
    if spec is not None and spec.endpoint:
        endpoint = spec.endpoint
    else:
        for name in ENDPOINT_VARS:
            if env.get(name, "").strip():
                endpoint, source = env[name].strip(), name
                exact = name == ENDPOINT_VARS[0]  # the traces URL itself, used as given
                break
    if endpoint is None:
        return None
    protocol = spec.protocol if spec is not None and spec.protocol else None
    for name in PROTOCOL_VARS:
        if protocol is None and env.get(name, "").strip():
            protocol = env[name].strip()
            if protocol not in PROTOCOLS:
                raise ConfigError(
                    f"{name}={protocol} is not a protocol accord sends traces over: use "
                    f"{' or '.join(PROTOCOLS)}"
                )
    protocol = protocol or "http/protobuf"
    if "://" not in endpoint:
        endpoint = f"http://{endpoint}" if protocol == "grpc" else endpoint
        if protocol != "grpc":
            raise ConfigError(
                f"telemetry endpoint '{endpoint}' ({source}) is not a URL: give http(s)://host:port"
            )
    if protocol != "grpc" and not exact and not endpoint.rstrip("/").endswith("/v1/traces"):
        endpoint = endpoint.rstrip("/") + "/v1/traces"
    service = (spec.service_name if spec is not None else None) or env.get(
        "OTEL_SERVICE_NAME", ""
    ).strip()
    return Settings(
        endpoint=endpoint,
        protocol=protocol,
        headers=_headers(spec, env),
        service_name=service or DEFAULT_SERVICE,
        content=bool(spec is not None and spec.content),
        flush_timeout=float(spec.flush_timeout) if spec is not None else 5.0,
        source=source,
    )


def _parse_headers(text: str, where: str) -> list[tuple[str, str]]:
    """`name=value,name2=value2` (OTEL_EXPORTER_OTLP_HEADERS's form, values URL-encoded)."""
    from urllib.parse import unquote

    out = []
    for item in text.split(","):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"{where}: headers are written name=value,name2=value2")
        out.append((name.strip().lower(), unquote(value.strip())))
    return out


def _headers(spec: Any, env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """Every header, its value remembered as a secret (an Authorization header is a key)."""
    found: list[tuple[str, str]] = []
    for name in reversed(HEADER_VARS):
        if env.get(name):
            found += _parse_headers(env[name], name)
    if spec is not None and spec.headers_var:
        if spec.headers_var not in env:
            raise ConfigError(
                f"telemetry.headers_var names {spec.headers_var}, which is not set: set it, "
                "or remove headers_var from config.yml"
            )
        found += _parse_headers(env[spec.headers_var], spec.headers_var)
    if spec is not None:
        found += [(name.lower(), str(value)) for name, value in spec.headers.items()]
    merged = dict(found)  # later ones win: config.yml's over the environment's
    for value in merged.values():
        remember(value)
        if value.lower().startswith(("basic ", "bearer ")):
            remember(value.split(" ", 1)[1])
    return tuple(merged.items())


# -- the exporter (one per process and settings) --------------------------------------------


class _Pipeline:
    """A tracer provider whose batch processor sends spans to one collector."""

    def __init__(self, config: Settings) -> None:
        self.config = config
        try:
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            if config.protocol == "grpc":
                from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                    OTLPSpanExporter as GrpcExporter,
                )

                inner: Any = GrpcExporter(
                    endpoint=config.endpoint,
                    insecure=config.endpoint.startswith("http://"),
                    headers=dict(config.headers) or None,
                    timeout=config.flush_timeout,
                )
            else:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
                    OTLPSpanExporter as HttpExporter,
                )

                inner = HttpExporter(
                    endpoint=config.endpoint,
                    headers=dict(config.headers) or None,
                    timeout=config.flush_timeout,
                )
        except ImportError as exc:
            extra = "grpc" if config.protocol == "grpc" else "http"
            raise ConfigError(
                f"telemetry is on ({config.source}: {mask(config.endpoint)}) but OpenTelemetry's "
                f"SDK and OTLP/{extra} exporter are not installed ({exc.name or exc}): "
                "pip install 'accord[otel]', or turn telemetry off"
            ) from None
        version = _version()
        self.warnings = _Warnings(config)
        self.exporter = _ReportingExporter(inner, self.warnings)
        resource = Resource.create(
            {"service.name": config.service_name, "service.version": version}
        )
        # shut down by `close` (bounded), never by the SDK's own exit hook (unbounded)
        self.provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        self.provider.add_span_processor(
            BatchSpanProcessor(
                cast(Any, self.exporter),
                max_queue_size=QUEUE_SPANS,
                schedule_delay_millis=SCHEDULE_DELAY_MS,
                max_export_batch_size=BATCH_SPANS,
            )
        )
        self.tracer = self.provider.get_tracer("accord", version)
        self.closed = False

    def close(self) -> None:
        """Send what is left, waiting at most `flush_timeout` seconds; then let go."""
        if self.closed:
            return
        self.closed = True
        done = threading.Event()

        def shut() -> None:
            try:
                self.provider.shutdown()
            finally:
                done.set()

        threading.Thread(target=shut, name="accord-telemetry-flush", daemon=True).start()
        if not done.wait(self.config.flush_timeout):
            self.warnings.once(
                f"spans still unsent after {self.config.flush_timeout:g} s "
                "(telemetry.flush_timeout), dropped"
            )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("accord")
    except PackageNotFoundError:  # run from a checkout, not installed
        return "unknown"


class _Warnings:
    """One line on stderr for the first export that failed; OpenTelemetry's own log lines
    (a warning for each failed batch and retry) are kept to give that line its reason."""

    def __init__(self, config: Settings) -> None:
        self.config = config
        self.said = False
        self.reason = ""
        self.lock = threading.Lock()
        otel = logging.getLogger("opentelemetry")
        otel.addHandler(_Remember(self))
        otel.propagate = False  # never Python's last-resort printing to stderr

    def once(self, what: str) -> None:
        with self.lock:
            if self.said:
                return
            self.said = True
        reason = f" ({self.reason})" if self.reason else ""
        line = (
            f"accord: telemetry: {what}: could not send spans to {self.config.endpoint}"
            f"{reason}; runs are not affected (said once)\n"
        )
        try:
            sys.stderr.write(mask(line))
            sys.stderr.flush()
        except (OSError, ValueError):  # no stderr left at exit: nothing to say it on
            pass


class _Remember(logging.Handler):
    """Keeps the first line OpenTelemetry logged about an export, as the warning's reason."""

    def __init__(self, warnings: _Warnings) -> None:
        super().__init__(logging.WARNING)
        self.warnings = warnings

    def emit(self, record: logging.LogRecord) -> None:
        if not self.warnings.reason:
            try:
                text = record.getMessage().strip()
            except Exception:  # a message that does not format: keep none
                return
            self.warnings.reason = text.splitlines()[0][:300] if text else ""


class _ReportingExporter:
    """The OTLP exporter, saying once when a batch could not be sent."""

    def __init__(self, inner: Any, warnings: _Warnings) -> None:
        self.inner = inner
        self.warnings = warnings
        self.sent = 0

    def export(self, spans: Any) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            result = self.inner.export(spans)
        except Exception as exc:  # an exporter's bug must not reach the batch thread
            self.warnings.reason = self.warnings.reason or f"{type(exc).__name__}: {exc}"
            result = SpanExportResult.FAILURE
        if result is SpanExportResult.SUCCESS:
            self.sent += len(spans)
        else:
            self.warnings.once(f"{len(spans)} spans lost")
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


_pipelines: dict[Settings, _Pipeline] = {}
_pipelines_lock = threading.Lock()
_exit_hook: list[bool] = []


def _pipeline(config: Settings) -> _Pipeline:
    global _on
    with _pipelines_lock:
        found = _pipelines.get(config)
        if found is None:
            found = _pipelines[config] = _Pipeline(config)
            if not _exit_hook:
                atexit.register(shutdown)
                _exit_hook.append(True)
        _on = True
        return found


def shutdown() -> None:
    """Send every pipeline's last spans (each bounded by its flush timeout) and close it: at
    exit, or by a caller that runs on (a test); the next run opens a new one."""
    with _pipelines_lock:
        pipelines = list(_pipelines.values())
        _pipelines.clear()
    for pipeline in pipelines:
        pipeline.close()


# -- a run's trace ----------------------------------------------------------------------------

# the open span of each running node (and the trace it belongs to), for the spans under it
_active: dict[Any, tuple[RunTrace, Any]] = {}
# a call's span inside a node (a tool call), for the calls under it: (node, trace, span)
_inner: ContextVar[tuple[Any, RunTrace, Any] | None] = ContextVar("accord_span", default=None)


def start_run(
    spec: Any, run_id: str, workflow: str, path: Path | str, resumed_from: str | None = None
) -> RunTrace | None:
    """The run's trace, its span started; None when telemetry is off (`ConfigError` when on
    and unusable: no SDK, a bad protocol)."""
    config = settings(spec)
    if config is None:
        return None
    from .paths import shown_path

    return RunTrace(_pipeline(config), run_id, workflow, shown_path(Path(path)), resumed_from)


def _attrs(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _content(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(mask_data(value), default=str)
    return mask(text[:CONTENT_CHARS])


class RunTrace:
    """A run's trace: its span, and a span per scheduler node (a run observer)."""

    def __init__(
        self, pipeline: _Pipeline, run_id: str, workflow: str, path: str, resumed: str | None
    ) -> None:
        from opentelemetry import trace
        from opentelemetry.trace import SpanKind, Status, StatusCode

        self.pipeline = pipeline
        self.tracer = pipeline.tracer
        self.content = pipeline.config.content
        self.run_id = run_id
        self._trace = trace
        self._status = Status
        self._code = StatusCode
        self._kind = SpanKind
        self._ok = Status(StatusCode.OK)
        self.span = self.tracer.start_span(
            f"run {workflow}",
            attributes=_attrs(
                {
                    "accord.run_id": run_id,
                    "accord.workflow": workflow,
                    "accord.workflow.path": path,
                    "accord.resumed_from": resumed,
                }
            ),
        )
        self._context = trace.set_span_in_context(self.span)
        self._nodes: dict[Any, Any] = {}  # node -> its open span

    # -- nodes (the run's observer) --

    def _parent_context(self, node: Any) -> Any:
        parent = self._nodes.get(getattr(node, "parent", None))
        return self._context if parent is None else self._trace.set_span_in_context(parent)

    def node_started(self, node: Any) -> None:
        span = self.tracer.start_span(
            node.key,
            context=self._parent_context(node),
            attributes={
                "accord.run_id": self.run_id,
                "accord.task.key": node.key,
                "accord.task.name": node.name,
                "accord.task.type": node.type,
            },
        )
        self._nodes[node] = span
        _active[node] = (self, span)

    def node_finished(self, node: Any, result: Any) -> None:
        span = self._nodes.pop(node, None)
        _active.pop(node, None)
        if span is None:  # never started (skipped, or cancelled before it could start)
            span = self.tracer.start_span(
                node.key,
                context=self._parent_context(node),
                attributes={
                    "accord.run_id": self.run_id,
                    "accord.task.key": node.key,
                    "accord.task.name": node.name,
                    "accord.task.type": node.type,
                },
            )
        status = result.status.value
        attributes: dict[str, Any] = {"accord.status": status}
        if result.attempts:
            attributes["accord.attempts"] = result.attempts
        if status == "failed":
            attributes["error.type"] = "task_failed"
        elif status != "succeeded" and result.error:
            attributes["accord.reason"] = mask(result.error[:ERROR_CHARS])
        span.set_attributes(attributes)
        if node.type.startswith("eval_"):
            _evaluation(span, node, result.output)
        if status == "failed":
            span.set_status(
                self._status(self._code.ERROR, mask((result.error or "failed")[:ERROR_CHARS]))
            )
        elif status == "succeeded":
            span.set_status(self._ok)
        span.end()

    # -- the run --

    def finish(self, result: Any = None, error: BaseException | None = None) -> None:
        """End the run's span (and any node span left open by a run that stopped)."""
        for node, span in list(self._nodes.items()):
            span.set_attribute("accord.status", "cancelled")
            span.end()
            _active.pop(node, None)
        self._nodes.clear()
        span = self.span
        if result is not None:
            span.set_attribute("accord.status", result.status.value)
            for name, count in result.counts().items():
                span.set_attribute(f"accord.tasks.{name}", count)
            usage = result.usage.total if result.usage is not None else None
            if usage is not None:
                span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
                span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
                span.set_attribute("accord.model_calls", usage.calls)
                span.set_attribute("accord.cache_hits", usage.cached)
                if usage.cost is not None:
                    span.set_attribute("accord.cost", float(usage.cost))
            if result.error:
                span.set_status(self._status(self._code.ERROR, mask(result.error[:ERROR_CHARS])))
                if result.failed_task:
                    span.set_attribute("accord.failed_task", result.failed_task)
            else:
                span.set_status(self._status(self._code.OK))
        elif error is not None:
            span.set_attribute("accord.status", "interrupted")
            text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            span.set_status(self._status(self._code.ERROR, mask(text[:ERROR_CHARS])))
        span.end()

    # -- calls inside a node --

    @contextmanager
    def call(
        self, node: Any, parent: Any, name: str, kind: str, attributes: dict[str, Any]
    ) -> Iterator[Any]:
        span = self.tracer.start_span(
            name,
            context=self._trace.set_span_in_context(parent),
            kind=self._kind.CLIENT if kind == "client" else self._kind.INTERNAL,
            attributes=_attrs(attributes),
        )
        token = _inner.set((node, self, span))
        try:
            yield span
        except BaseException as exc:
            self.failed(span, exc)
            raise
        finally:
            _inner.reset(token)
            span.end()

    def failed(self, span: Any, exc: BaseException | str) -> None:
        if isinstance(exc, str):
            kind, text = "error", exc
        else:
            kind = getattr(exc, "kind", None) or type(exc).__name__
            text = str(exc) or type(exc).__name__
        span.set_attribute("error.type", str(kind))
        span.set_status(self._status(self._code.ERROR, mask(text[:ERROR_CHARS])))


def _evaluation(span: Any, node: Any, output: Any) -> None:
    """An evaluation node's case, evaluator, score, threshold and verdict."""
    tctx = getattr(node.body, "__self__", None)
    spec = getattr(getattr(tctx, "task", None), "spec", None)
    case = getattr(spec, "case_ref", None)
    if case is not None:
        span.set_attribute("accord.eval.case_id", str(case.id))
        span.set_attribute("accord.eval.repeat", int(getattr(spec, "repeat", 0)))
    if output is None:
        return
    if node.type == "eval_check":
        name = getattr(output, "name", None)
        score = getattr(output, "score", None)
        passed = getattr(output, "passed", None)
        label = None if passed is None else ("pass" if passed else "fail")
        for key, value in {
            "accord.eval.evaluator": name,
            "accord.eval.evaluator_type": getattr(output, "kind", None),
            "accord.eval.score": None if score is None else float(score),
            "accord.eval.threshold": getattr(output, "threshold", None),
            "accord.eval.passed": passed,
            "accord.eval.error": getattr(output, "error", None),
            "accord.eval.skipped": getattr(output, "skipped", None),
            "gen_ai.evaluation.name": name,
            "gen_ai.evaluation.score.value": None if score is None else float(score),
            "gen_ai.evaluation.score.label": label,
        }.items():
            if value is not None:
                span.set_attribute(key, mask(value) if isinstance(value, str) else value)
    elif node.type == "eval_verdict":
        score = getattr(output, "score", None)
        for key, value in {
            "accord.eval.verdict": getattr(output, "verdict", None)
            or getattr(output, "status", None),
            "accord.eval.status": getattr(output, "status", None),
            "accord.eval.score": None if score is None else float(score),
            "accord.eval.passed": getattr(output, "passed", None),
            "accord.eval.error": getattr(output, "error", None),
        }.items():
            if value is not None:
                span.set_attribute(key, mask(value) if isinstance(value, str) else value)
    elif node.type == "eval_target":
        error = getattr(output, "error", None)
        if error:
            span.set_attribute("accord.eval.error", mask(str(error)[:ERROR_CHARS]))


def _where() -> tuple[Any, RunTrace, Any] | None:
    """(the node, its trace, the span a call made here goes under), or None: no trace."""
    node = log.current_node.get()
    if node is None:
        return None
    inner = _inner.get()
    if inner is not None and inner[0] is node:
        return inner
    found = _active.get(node)
    return None if found is None else (node, found[0], found[1])


# -- the hooks ------------------------------------------------------------------------------


def _provider(litellm_model: str) -> str:
    provider = litellm_model.split("/", 1)[0] if "/" in litellm_model else "openai"
    return {"local": "accord.local", "azure": "azure.ai.openai", "vertex_ai": "gcp.vertex_ai",
            "gemini": "gcp.gemini", "bedrock": "aws.bedrock"}.get(provider, provider)  # fmt: skip


def traced_completion(method: F) -> F:
    """`ModelClient.complete` under a GenAI `chat` span (OpenTelemetry's GenAI semantic
    conventions; cost and cache hit as `accord.*`)."""

    @functools.wraps(method)
    async def complete(self: Any, model_name: Any, messages: Any, **kwargs: Any) -> Any:
        where = _where() if _on else None
        if where is None:
            return await method(self, model_name, messages, **kwargs)
        node, trace, parent = where
        model = self.catalog.resolve(model_name)
        requested = model.litellm_model.split("/", 1)[-1]
        provider = _provider(model.litellm_model)
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.system": provider,
            "gen_ai.request.model": requested,
            "gen_ai.request.temperature": kwargs.get("temperature"),
            "gen_ai.request.seed": kwargs.get("seed"),
            "accord.model": model.name,
            "accord.sample": kwargs.get("sample") or None,
            "accord.tools_offered": len(kwargs["tools"]) if kwargs.get("tools") else None,
        }
        if trace.content:
            attributes["gen_ai.input.messages"] = _content(messages)
        with trace.call(node, parent, f"chat {requested}", "client", attributes) as span:
            completion = await method(self, model_name, messages, **kwargs)
            span.set_attribute("gen_ai.response.model", requested)
            span.set_attribute("gen_ai.usage.input_tokens", completion.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", completion.output_tokens)
            reason = "tool_calls" if completion.tool_calls else "stop"
            span.set_attribute("gen_ai.response.finish_reasons", [reason])
            span.set_attribute("accord.cache_hit", bool(completion.cached))
            if completion.cost is not None:
                span.set_attribute("accord.cost", float(completion.cost))
            if trace.content:
                span.set_attribute("gen_ai.output.messages", _content([completion.message()]))
            return completion

    return complete  # type: ignore[return-value]


def traced_tool(method: F) -> F:
    """An agent's tool call (`Toolbox.call`) under an `execute_tool` span; a reply starting
    `error:` is the tool's failure."""

    @functools.wraps(method)
    async def call(self: Any, name: str, arguments: str) -> Any:
        where = _where() if _on else None
        if where is None:
            return await method(self, name, arguments)
        node, trace, parent = where
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.type": "function",
        }
        if trace.content:
            attributes["gen_ai.tool.call.arguments"] = _content(arguments)
        with trace.call(node, parent, f"execute_tool {name}", "internal", attributes) as span:
            reply = await method(self, name, arguments)
            text = str(reply)
            if text.startswith("error:"):
                trace.failed(span, text[len("error:") :].strip())
            if trace.content:
                span.set_attribute("gen_ai.tool.call.result", _content(text))
            return reply

    return call  # type: ignore[return-value]


def traced_program(method: F) -> F:
    """A program run (`programs.run_program`, a Ray executor's `program`) under a span:
    the program's name, exit code, and whether it was killed at its time limit."""

    @functools.wraps(method)
    async def run(*args: Any, **kwargs: Any) -> Any:
        where = _where() if _on else None
        if where is None:
            return await method(*args, **kwargs)
        node, trace, parent = where
        argv = next((a for a in args if isinstance(a, list)), kwargs.get("argv")) or ["?"]
        program = os.path.basename(str(argv[0]))
        attributes: dict[str, Any] = {"process.executable.name": program}
        if trace.content:
            attributes["process.command_args"] = [mask(str(a))[:CONTENT_CHARS] for a in argv]
        with trace.call(node, parent, f"program {program}", "internal", attributes) as span:
            done = await method(*args, **kwargs)
            code = getattr(done, "code", None)
            if code is None and isinstance(done, tuple):
                code = done[2]
            timed_out = bool(getattr(done, "timed_out", False))
            if code is not None:
                span.set_attribute("process.exit.code", int(code))
            if timed_out:
                span.set_attribute("accord.timed_out", True)
                trace.failed(span, "killed at its time limit")
            elif code:
                trace.failed(span, f"exited with {code}")
            return done

    return run  # type: ignore[return-value]


D = TypeVar("D")


def traced_database(db: D, name: str, kind: str) -> D:
    """`db` with a span around each query when telemetry is on (`Databases.get`)."""
    return cast(D, _TracedDatabase(db, name, kind)) if _on else db


_DB_SYSTEMS = {"postgres": "postgresql"}


class _TracedDatabase:
    """A database whose queries are spans (`db.*` semantic conventions)."""

    def __init__(self, db: Any, name: str, kind: str) -> None:
        self._db = db
        self._name = name
        self._system = _DB_SYSTEMS.get(kind, kind)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._db, attr)

    async def _traced(self, what: str, sql: str | None, call: Callable[[], Awaitable[Any]]) -> Any:
        where = _where()
        if where is None:
            return await call()
        node, trace, parent = where
        attributes: dict[str, Any] = {
            "db.system.name": self._system,
            "db.system": self._system,
            "db.namespace": self._name,
            "db.operation.name": what,
        }
        if trace.content and sql is not None:
            attributes["db.query.text"] = _content(sql)
        with trace.call(node, parent, f"{what} {self._name}", "client", attributes) as span:
            result = await call()
            rows = getattr(result, "rows", None)
            if isinstance(rows, list):
                span.set_attribute("db.response.returned_rows", len(rows))
            return result

    async def query(self, sql: str, limit: int | None = None) -> Any:
        return await self._traced("query", sql, lambda: self._db.query(sql, limit))

    async def columns(self) -> Any:
        return await self._traced("columns", None, self._db.columns)

    async def validate(self, sql: str) -> None:
        await self._traced("validate", sql, lambda: self._db.validate(sql))

    def close(self) -> None:
        self._db.close()
