"""OTLP receivers on 127.0.0.1 for the telemetry tests: OTLP/HTTP (protobuf) and, where
grpcio is installed, OTLP/gRPC (a `TraceService`). Both decode what they receive with
OpenTelemetry's own proto package and keep every span, flattened to `Span`."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def value(any_value: AnyValue) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    return None if kind is None else getattr(any_value, kind)


@dataclass
class Span:
    """One received span, with its resource's attributes."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    kind: int
    start: int
    end: int
    status: int  # 0 unset, 1 ok, 2 error
    message: str
    attributes: dict[str, Any]
    resource: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.attributes[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.attributes.get(key, default)


@dataclass
class Receiver:
    """What a receiver got: spans, the requests' headers and paths; `wait` for a count."""

    spans: list[Span] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)
    url: str = ""
    close: Callable[[], None] = lambda: None

    def take(self, body: bytes, headers: dict[str, str], path: str) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        found = []
        for resource_spans in request.resource_spans:
            resource = {a.key: value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for s in scope_spans.spans:
                    found.append(
                        Span(
                            trace_id=s.trace_id.hex(),
                            span_id=s.span_id.hex(),
                            parent_id=s.parent_span_id.hex(),
                            name=s.name,
                            kind=s.kind,
                            start=s.start_time_unix_nano,
                            end=s.end_time_unix_nano,
                            status=s.status.code,
                            message=s.status.message,
                            attributes={a.key: value(a.value) for a in s.attributes},
                            resource=resource,
                        )
                    )
        with self.changed:
            self.spans.extend(found)
            self.headers.append(headers)
            self.paths.append(path)
            self.changed.notify_all()

    def wait(self, test: Callable[[list[Span]], bool], timeout: float = 30.0) -> list[Span]:
        """The spans once `test` holds of them (AssertionError after `timeout` seconds)."""
        with self.changed:
            if not self.changed.wait_for(lambda: test(self.spans), timeout):
                raise AssertionError(f"the receiver got {len(self.spans)} spans only")
            return list(self.spans)


def http_receiver() -> Receiver:
    got = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                import gzip

                body = gzip.decompress(body)
            got.take(body, {k.lower(): v for k, v in self.headers.items()}, self.path)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    got.url = f"http://127.0.0.1:{server.server_address[1]}"

    def close() -> None:
        server.shutdown()
        server.server_close()
        thread.join()

    got.close = close
    return got


def grpc_receiver() -> Receiver:
    """An OTLP/gRPC receiver (ImportError without grpcio)."""
    from concurrent import futures

    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

    got = Receiver()

    class Service(trace_service_pb2_grpc.TraceServiceServicer):  # type: ignore[misc]
        def Export(self, request: Any, context: Any) -> Any:
            headers = {k: v for k, v in context.invocation_metadata()}
            got.take(request.SerializeToString(), headers, "grpc")
            return ExportTraceServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Service(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    got.url = f"http://127.0.0.1:{port}"
    got.close = lambda: server.stop(grace=None).wait()
    return got
