"""The fake OpenAI server of the AgentV 4 tests, named to a project's `.agentv` catalog."""

from __future__ import annotations

import pytest

from tests.fakes import FakeOpenAI
from tests.frontends.agentv.v4 import harness


@pytest.fixture
def fake(
    request: pytest.FixtureRequest, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> FakeOpenAI:
    """The fake server answering with the test module's `answer` (harness.answer where the
    module has none), named to the catalog by FAKE_URL and FAKE_KEY."""
    return harness.serving(fake_llm, monkeypatch, getattr(request.module, "answer", harness.answer))
