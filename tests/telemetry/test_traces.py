"""Runs as OpenTelemetry traces, received by a real OTLP receiver on 127.0.0.1 (HTTP with
protobuf, and gRPC): each `accord run`, `eval` and `test` is one trace whose span tree is the
run store's, with GenAI spans for model calls, tool calls, SQL queries and programs; content
only when asked, masked; off, OpenTelemetry is never imported; a collector that is not there
costs a bounded flush and one line."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from pathlib import Path

import pytest

from tests.telemetry.project import (
    SECRET,
    children,
    ended_run,
    nodes,
    root_of,
    run,
    stored,
    with_telemetry,
)
from tests.telemetry.receiver import Receiver, grpc_receiver


def test_a_workflow_is_one_trace_shaped_like_its_run(shop: Path, receiver: Receiver) -> None:
    with_telemetry(shop, endpoint=receiver.url)
    done = run(shop, "run", "shop.workflow.yml", "--cache", "off")
    assert done.code == 0, done.stderr
    spans = receiver.wait(ended_run)
    assert len({s.trace_id for s in spans}) == 1
    run_id, results = stored(shop)
    top = root_of(spans)
    assert top.name == "run shop" and top["accord.run_id"] == run_id
    assert top["accord.status"] == "succeeded" and top.status == 1
    assert top.resource["service.name"] == "accord"
    by_key = nodes(spans)
    # every stored result is a node span with the same status, and every span is the run's
    for key, status in results.items():
        assert by_key[key]["accord.status"] == status, key
        assert by_key[key]["accord.run_id"] == run_id
    # each node under the node that ran it: the loop's iterations, the consistency samples
    # and judge pair, and the top-level tasks under the run
    parent_of = {s.span_id: s for s in spans}
    for key, span in by_key.items():
        parent = parent_of[span.parent_id]
        expected = {"each[0].line": "each", "each[1].line": "each", "best.run_0": "best",
                    "best.run_1": "best", "best.select": "best",
                    "best.select.judge[0,1]": "best.select"}  # fmt: skip
        assert parent.get("accord.task.key") == expected.get(key), key
    assert {"each[0].line", "each[1].line", "best.select.judge[0,1]"} <= set(by_key)
    assert by_key["best.select.judge[0,1]"]["accord.task.type"] == "judge"
    # a model call: GenAI attributes, under the node that made it
    ask = by_key["ask"]
    calls = [s for s in children(spans, ask) if s["gen_ai.operation.name"] == "chat"]
    assert len(calls) == 2
    call = calls[0]
    assert call.name == "chat fake-model" and call.kind == 3  # SPAN_KIND_CLIENT
    assert call["gen_ai.provider.name"] == call["gen_ai.system"] == "openai"
    assert call["gen_ai.request.model"] == "fake-model"
    assert call["gen_ai.usage.input_tokens"] > 0 and call["gen_ai.usage.output_tokens"] > 0
    assert call["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert calls[1]["gen_ai.response.finish_reasons"] == ["stop"]
    assert call["accord.cache_hit"] is False
    # the tool call, and the query it ran under it
    (tool,) = [s for s in children(spans, ask) if s["gen_ai.operation.name"] == "execute_tool"]
    assert tool["gen_ai.tool.name"] == "run_sql" and tool.status != 2
    (query,) = children(spans, tool)
    assert query["db.system.name"] == "duckdb" and query["db.namespace"] == "shop"
    assert query["db.response.returned_rows"] == 1
    (sql,) = children(spans, by_key["totals"])
    assert sql["db.operation.name"] == "query" and sql["db.response.returned_rows"] == 2
    judge_calls = children(spans, by_key["best.select.judge[0,1]"])
    assert judge_calls and {s["gen_ai.operation.name"] for s in judge_calls} == {"chat"}
    # no content unless asked: no prompt, answer, arguments or SQL; never the key
    everything = json.dumps([s.attributes for s in spans])
    for held in ("gen_ai.input.messages", "gen_ai.output.messages", "db.query.text",
                 "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"):  # fmt: skip
        assert held not in everything
    assert SECRET not in everything and "Which region" not in everything
    # times nest
    for span in spans:
        if span.parent_id:
            parent = parent_of[span.parent_id]
            assert parent.start <= span.start <= span.end <= parent.end, span.name


def test_content_is_sent_when_asked_and_masked(shop: Path, receiver: Receiver) -> None:
    with_telemetry(shop, endpoint=receiver.url, content=True)
    done = run(shop, "run", "shop.workflow.yml", "--cache", "off")
    assert done.code == 0, done.stderr
    spans = receiver.wait(ended_run)
    by_key = nodes(spans)
    first = min(children(spans, by_key["ask"]), key=lambda s: s.start)
    prompt = json.loads(first["gen_ai.input.messages"])
    assert prompt[-1]["content"] == "Which region sold most? My key is [redacted]"
    assert "tool_calls" in first["gen_ai.output.messages"]
    (tool,) = [s for s in spans if s.get("gen_ai.tool.name") == "run_sql"]
    assert "SUM(units)" in tool["gen_ai.tool.call.arguments"]
    assert "| total |" in tool["gen_ai.tool.call.result"]
    (sql,) = children(spans, by_key["totals"])
    assert sql["db.query.text"].startswith("SELECT region")
    assert SECRET not in json.dumps([s.attributes for s in spans])


def test_an_eval_suite_carries_cases_evaluators_scores_and_verdicts(
    shop: Path, receiver: Receiver
) -> None:
    with_telemetry(shop, endpoint=receiver.url)
    done = run(shop, "eval", "s.eval.yml", "--cache", "off")
    assert done.code == 1, done.stderr  # case `nine` fails its `contains`
    spans = receiver.wait(ended_run)
    run_id, results = stored(shop)
    assert root_of(spans)["accord.run_id"] == run_id
    by_key = nodes(spans)
    assert set(results) <= set(by_key)
    for case in ("six", "nine"):
        target = by_key[f"{case}.target"]
        assert target["accord.task.type"] == "eval_target"
        assert target["accord.eval.case_id"] == case
        (program,) = children(spans, target)
        assert program.name == "program " + Path(sys.executable).name
        assert program["process.exit.code"] == 0
    check = by_key["nine.contains"]
    assert check["accord.eval.case_id"] == "nine"
    assert check["accord.eval.evaluator"] == check["gen_ai.evaluation.name"] == "contains"
    assert check["accord.eval.score"] == 0.0 and check["accord.eval.passed"] is False
    assert check["gen_ai.evaluation.score.label"] == "fail"
    assert by_key["six.contains"]["accord.eval.score"] == 1.0
    assert by_key["six.contains"]["accord.eval.threshold"] == ">= 1"
    assert by_key["nine.verdict"]["accord.eval.verdict"] == "failed"
    assert by_key["six.verdict"]["accord.eval.verdict"] == "passed"
    assert by_key["six.verdict"]["accord.eval.score"] == 1.0


def test_accord_test_is_one_trace_too(shop: Path, receiver: Receiver) -> None:
    (shop / "t.workflow.yml").write_text(
        "tasks:\n  - {name: answer, type: agent, model: fake, prompt: Say which region}\n"
        "tests:\n  - {type: consistency, task_ref: answer, n: 2}\n"
    )
    with_telemetry(shop, endpoint=receiver.url)
    done = run(shop, "test", "t.workflow.yml", "--cache", "off")
    assert done.code == 0, done.stderr
    spans = receiver.wait(ended_run)
    assert len({s.trace_id for s in spans}) == 1
    run_id, results = stored(shop)
    assert root_of(spans)["accord.run_id"] == run_id
    assert set(results) <= set(nodes(spans))
    assert sum(s.get("gen_ai.operation.name") == "chat" for s in spans) == 2


def test_the_standard_variables_turn_it_on(shop: Path, receiver: Receiver) -> None:
    done = run(
        shop, "run", "shop.workflow.yml", "--cache", "off",
        OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url, OTEL_SERVICE_NAME="nightly-analysis",
        OTEL_EXPORTER_OTLP_HEADERS="x-team=data,authorization=Bearer%20tok-5150-secret",
    )  # fmt: skip
    assert done.code == 0, done.stderr
    spans = receiver.wait(ended_run)
    assert root_of(spans).resource["service.name"] == "nightly-analysis"
    assert receiver.paths[0] == "/v1/traces"
    assert receiver.headers[0]["x-team"] == "data"
    assert receiver.headers[0]["authorization"] == "Bearer tok-5150-secret"


def test_grpc(shop: Path) -> None:
    pytest.importorskip("grpc")
    pytest.importorskip("opentelemetry.exporter.otlp.proto.grpc")
    receiver = grpc_receiver()
    try:
        with_telemetry(shop, endpoint=receiver.url, protocol="grpc", headers={"x-key": "k1"})
        done = run(shop, "run", "shop.workflow.yml", "--cache", "off")
        assert done.code == 0, done.stderr
        spans = receiver.wait(ended_run)
        run_id, results = stored(shop)
        assert root_of(spans)["accord.run_id"] == run_id
        assert set(results) <= set(nodes(spans))
        assert receiver.headers[0]["x-key"] == "k1"
    finally:
        receiver.close()


def test_off_nothing_imports_opentelemetry(shop: Path) -> None:
    """A run without telemetry (here the lean OpenAI client: litellm is not imported either)
    leaves no `opentelemetry` module in the process."""
    script = (
        "import sys\nfrom accord.cli import main\n"
        "try:\n    main(['run', 'shop.workflow.yml', '--cache', 'off'])\n"
        "except SystemExit as e:\n    assert not e.code, e.code\n"
        "print('loaded:', sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    done = run(shop, "--version")  # the environment `run` gives, checked to work
    assert done.code == 0
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["SHOP_API_KEY"] = SECRET
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=shop, env=env, capture_output=True, text=True,
        timeout=90, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert "loaded: []" in out.stdout


def test_an_unreachable_collector_is_said_once_and_the_run_goes_on(shop: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with_telemetry(shop, endpoint=f"http://127.0.0.1:{port}", flush_timeout=2)
    done = run(shop, "run", "shop.workflow.yml", "--cache", "off")
    assert done.code == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "telemetry" in line]
    assert len(lines) == 1, done.stderr
    assert f"127.0.0.1:{port}" in lines[0] and "runs are not affected" in lines[0]


def test_a_collector_that_never_answers_costs_a_bounded_flush(shop: Path) -> None:
    """A collector that takes the connection and never answers: the command still ends (the
    flush at exit gives up after `flush_timeout`), and says so once."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])  # kept open, never read
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        port = listener.getsockname()[1]
        with_telemetry(shop, endpoint=f"http://127.0.0.1:{port}", flush_timeout=1)
        done = run(shop, "run", "shop.workflow.yml", "--cache", "off")
        assert done.code == 0, done.stderr
        lines = [line for line in done.stderr.splitlines() if "telemetry" in line]
        assert len(lines) == 1, done.stderr
        assert held  # the export did reach it
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        listener.close()


def test_without_the_sdk_a_configured_run_stops_with_a_clear_message(
    shop: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    blocked = tmp_path_factory.mktemp("no_otel")
    (blocked / "opentelemetry").mkdir()
    (blocked / "opentelemetry" / "__init__.py").write_text(
        "raise ImportError('opentelemetry is not installed', name='opentelemetry')\n"
    )
    path = os.pathsep.join([str(blocked), os.environ.get("PYTHONPATH", "")])
    with_telemetry(shop, endpoint="http://127.0.0.1:9")
    done = run(shop, "run", "shop.workflow.yml", "--cache", "off", PYTHONPATH=path)
    assert done.code == 2, done.stderr
    assert "pip install 'accord[otel]'" in done.stderr
    assert not (shop / ".accord" / "runs.db").exists() or not stored(shop)[1]


def test_a_bad_telemetry_entry_is_a_config_error_with_its_line(shop: Path) -> None:
    with_telemetry(shop, endpoint="http://127.0.0.1:9", protocol="http/json")
    done = run(shop, "run", "shop.workflow.yml")
    assert done.code == 2
    assert "config.yml" in done.stderr and "protocol" in done.stderr
