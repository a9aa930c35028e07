"""`--executor ray`: the work runs in the cluster's workers, and the run is still one trace,
made in the driver (the spans of the SQL queries the database actors ran, of the model calls
the model actors made, and of the programs Ray tasks ran, each under its node)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from accord.cli import main
from tests.telemetry.project import (
    SECRET,
    children,
    ended_run,
    nodes,
    root_of,
    stored,
    with_telemetry,
)
from tests.telemetry.receiver import Receiver

pytestmark = [pytest.mark.usefixtures("ray_cluster"), pytest.mark.slow]


def cli(root: Path, *args: str) -> str:
    from accord.engine import telemetry

    previous = os.getcwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(previous)
        telemetry.shutdown()  # what the command's exit does: the last spans are sent
    assert result.exit_code in (0, 1), result.stderr
    return result.stdout


def test_a_ray_run_is_one_trace(
    shop: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [n for n in os.environ if n.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("SHOP_API_KEY", SECRET)
    with_telemetry(shop, endpoint=receiver.url)
    cli(shop, "run", "shop.workflow.yml", "--cache", "off", "--executor", "ray")
    spans = receiver.wait(ended_run)
    assert len({s.trace_id for s in spans}) == 1
    run_id, results = stored(shop)
    assert root_of(spans)["accord.run_id"] == run_id
    by_key = nodes(spans)
    assert set(results) <= set(by_key)
    (query,) = children(spans, by_key["totals"])
    assert query["db.system.name"] == "duckdb" and query["db.response.returned_rows"] == 2
    asked = children(spans, by_key["ask"])
    assert sum(s.get("gen_ai.operation.name") == "chat" for s in asked) == 2
    assert sum(s.get("gen_ai.operation.name") == "execute_tool" for s in asked) == 1


def test_a_ray_eval_is_one_trace(
    shop: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [n for n in os.environ if n.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    with_telemetry(shop, endpoint=receiver.url)
    out = cli(shop, "eval", "s.eval.yml", "--cache", "off", "--executor", "ray",
              "--format", "json")  # fmt: skip
    assert [c["status"] for c in json.loads(out)["suites"][0]["cases"]] == ["passed", "failed"]
    spans = receiver.wait(ended_run)
    assert len({s.trace_id for s in spans}) == 1
    by_key = nodes(spans)
    (program,) = children(spans, by_key["six.target"])
    assert program.name == "program " + Path(sys.executable).name  # a Ray task ran it
    assert by_key["nine.contains"]["accord.eval.passed"] is False
