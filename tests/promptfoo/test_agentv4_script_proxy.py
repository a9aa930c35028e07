"""AgentV 4's script grader with `provider` (graders/script-grader.ts, runtime/provider-proxy.ts
at commit 58f316ca2): the script calls models through a proxy on loopback, and accord's
proxy answers it through the models door.

The suite (tests/data/agentv4/grounded-answers) has one script grader for every test,
`claim_support.py`: it checks the proxy (a wrong token, an unknown provider label, `/info`,
its environment), asks the grader model for the answer's claims (`/invoke` with a system
prompt), then asks a second catalog provider, `second-opinion`, whether each claim is in the
passages (`/invokeBatch` naming it, no system prompt); `provider: {max_calls: 4}` makes the
third test's batch pass the budget (429). Both tools run it against one fake OpenAI server
(tests/fakes.py); the differential test compares their scores and verdicts, and every
request the models received.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.fakes import FakeOpenAI, Reply
from tests.promptfoo.test_agentv4_differential import (
    AGENTV,
    judge,
    project,
    run_accord,
    run_agentv,
)

NAME = "grounded-answers"
# a catalog provider besides `llm` and `grader`: the one the script names per request
CHECKER = """\
- id: openai
  label: second-opinion
  base_url: "{{ env.FAKE_URL }}"
  api_key: "{{ env.FAKE_KEY }}"
  model: fake-checker
"""
# the model under test: a fixed answer per question
ANSWERS = {
    "Harbor Bridge": "The Harbor Bridge opened to traffic in 1932. "
    "The Harbor Bridge is 1149 metres long.",
    "Lake Orrin": "Lake Orrin is 212 metres deep at its deepest point. "
    "Lake Orrin is home to silver trout.",
    "Velmar festival": "The Velmar festival starts on 3 May. It lasts a week. "
    "It draws ten thousand visitors. It ends with fireworks.",
}
CLAIMS_SYSTEM = "You split an answer into its factual claims"


def answer(body: dict[str, Any]) -> Reply:
    """The grader model lists an answer's sentences as its claims; `second-opinion`
    (model fake-checker) says yes when a passage holds the claim; AgentV's judge checks the
    rubrics; the model under test answers from ANSWERS."""
    messages = body["messages"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    user = messages[-1]["content"]
    if body["model"] == "fake-checker":
        claim = re.search(r"Claim: (.*?)\.?\n", user)
        held = claim is not None and claim.group(1) in user.split("Claim:")[0]
        return Reply(text="yes" if held else "no")
    if system.startswith(CLAIMS_SYSTEM):
        said = re.search(r"Answer: (.*?)\n\nCriteria:", user, re.DOTALL)
        text = said.group(1) if said else ""
        return Reply(text=json.dumps({"claims": re.findall(r"[^.]+\.", text)}))
    if len(messages) == 2 and system:
        found = judge(system, user)
        if found is not None:
            return found
    question = json.dumps(messages)
    return Reply(text=next((a for k, a in ANSWERS.items() if k in question), "no answer"))


def sent(fake: FakeOpenAI) -> list[str]:
    """Every request the models received (model and messages), in a fixed order."""
    return sorted(json.dumps([r["model"], r["messages"]]) for r in fake.requests)


def suite(root: Path) -> Path:
    found = project(root, NAME)
    with (root / ".agentv" / "providers.yaml").open("a") as catalog:
        catalog.write(CHECKER)
    return found


@pytest.fixture
def fake(fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    fake_llm.responder = answer
    monkeypatch.setenv("FAKE_URL", fake_llm.url)
    monkeypatch.setenv("FAKE_KEY", "test-key")
    return fake_llm


EXPECTED = {
    # both claims in the passages: the script's 1 beside the rubric's 1
    "every-claim-found": {"score": 1.0, "passed": True, "assertions": [1.0, 1.0]},
    # one claim of two: 0.5, the test's mean 0.75 under the threshold 0.8
    "one-claim-unsupported": {"score": 0.75, "passed": False, "assertions": [1.0, 0.5]},
    # four claims after one call: a batch past max_calls 4 (429), the script's 0
    "too-many-claims-for-the-budget": {"score": 0.5, "passed": False,
                                       "assertions": [1.0, 0.0]},
}  # fmt: skip


@pytest.mark.skipif(
    shutil.which("node") is None or not AGENTV.exists(),
    reason=f"needs node and AgentV built from source at {AGENTV}",
)
def test_a_script_grader_calling_models_scores_in_accord_as_in_agentv(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    expected = run_agentv(suite(tmp_path / "agentv"))
    agentv_sent = sent(fake)
    fake.requests.clear()
    got = run_accord(suite(tmp_path / "accord"))
    assert expected == EXPECTED
    assert got == expected
    # the grader model, the checker and the model under test received the same messages
    # from both: the script's system prompt as given, AgentV's default system prompt where
    # the script gives none (llm-providers.ts buildChatPrompt), the question as written
    assert sent(fake) == agentv_sent
    checked = [r for r in fake.requests if r["model"] == "fake-checker"]
    assert len(checked) == 4  # two claims of the first test, two of the second


def test_the_proxy_refuses_a_wrong_token_and_is_gone_after_the_run(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """Each script run has its own proxy on 127.0.0.1 (the script checks it refuses a wrong
    token with 401); after the run nothing listens at any of their addresses."""
    got = run_accord(suite(tmp_path / "project"))
    assert got == EXPECTED
    addresses = (tmp_path / "project" / "evals" / "proxy-addresses.txt").read_text().split()
    assert len(set(addresses)) == 3
    for address in addresses:
        parsed = urlparse(address)
        assert parsed.hostname == "127.0.0.1"
        with pytest.raises(ConnectionRefusedError), socket.socket() as probe:
            probe.settimeout(5)
            probe.connect((parsed.hostname, parsed.port or 80))
