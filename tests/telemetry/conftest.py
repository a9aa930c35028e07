"""The telemetry tests' fixtures: an OTLP/HTTP receiver, the project, and the executor
tests' Ray cluster (started once per test process)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import fake_model_config
from tests.executors.conftest import ray_cluster
from tests.fakes import FakeOpenAI
from tests.telemetry.project import AGENT, ANSWER, SUITE, WORKFLOW, respond
from tests.telemetry.receiver import Receiver, http_receiver

__all__ = ["ray_cluster", "receiver", "shop"]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    got = http_receiver()
    yield got
    got.close()


@pytest.fixture
def shop(tmp_path: Path, fake_llm: FakeOpenAI) -> Path:
    fake_llm.responder = respond
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "sales.csv").write_text("region,units\nEast,3\nWest,5\nEast,4\n")
    config = fake_model_config(fake_llm).replace("api_key: test-key", "key_var: SHOP_API_KEY")
    config += "databases:\n  - {name: shop, type: duckdb, dataset: data}\n"
    (tmp_path / "config.yml").write_text(config)
    (tmp_path / "shop.workflow.yml").write_text(WORKFLOW)
    (tmp_path / "analyst.agent.yml").write_text(AGENT)
    (tmp_path / "s.eval.yml").write_text(SUITE % json.dumps(sys.executable))
    (tmp_path / "answer.py").write_text(ANSWER)
    return tmp_path
