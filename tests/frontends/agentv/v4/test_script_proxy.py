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
import os
import re
import shutil
import socket
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply
from tests.frontends.agentv.v4.harness import (
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


# what AgentV scores (the differential test checks it against AgentV's own run)
EXPECTED = {
    # both claims in the passages: the script's 1 beside the rubric's 1
    "every-claim-found": {"score": 1.0, "passed": True, "assertions": [1.0, 1.0]},
    # one claim of two: 0.5, the test's mean 0.75 under the threshold 0.8
    "one-claim-unsupported": {"score": 0.75, "passed": False, "assertions": [1.0, 0.5]},
    # four claims after one call: a batch past max_calls 4 (429), the script's 0
    "too-many-claims-for-the-budget": {"score": 0.5, "passed": False,
                                       "assertions": [1.0, 0.0]},
}  # fmt: skip


@pytest.mark.reference
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


def test_the_proxys_calls_are_counted_recorded_and_replayed(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """The script's calls are the run's model calls: counted as the grader's judge calls,
    stored in the run's cache, and answered from it under `--cache replay` without one
    request reaching a model."""
    path = suite(tmp_path / "project")
    first = accord("eval", path, "--format", "json")
    assert first.exit_code == 1, first.stderr
    report = json.loads(first.stdout)["suites"][0]
    grader = next(e for e in report["evaluators"] if e["name"] == "claim_support")
    # per test one call for its claims and one per claim checked: 1 + 2, 1 + 2, and 1 (the
    # third test's batch is refused)
    assert grader["judge_calls"] == 7
    assert report["model_calls"] == 3 + 3 + 7  # the answers, the rubrics, the proxy's
    fake.requests.clear()
    fake.responder = lambda body: Reply.error(500, "no model may be asked now")
    again = accord("eval", path, "--format", "json", "--cache", "replay")
    assert again.exit_code == 1, again.stderr
    replayed = json.loads(again.stdout)["suites"][0]
    assert {c["id"]: round(c["score"], 4) for c in replayed["cases"]} == {
        name: found["score"] for name, found in EXPECTED.items()
    }
    assert fake.requests == []


# a script that asks the proxy what the grounded-answers script does not: a provider of the
# catalog accord does not call (a coding agent), an unknown path; and reports what it saw
PROBE = r"""
import json, os, sys, urllib.error, urllib.request
url, token = os.environ["AGENTV_PROVIDER_PROXY_URL"], os.environ["AGENTV_PROVIDER_PROXY_TOKEN"]
def call(path, body=None):
    request = urllib.request.Request(url + path, data=None if body is None else
        json.dumps(body).encode(), headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)
seen = {
    "info": call("/info"),
    "agent": call("/invoke", {"question": "hi", "provider": "agent"}),
    "agent_in_batch": call("/invokeBatch", {"requests": [{"question": "hi", "provider": "agent"}]}),
    "grader": call("/invoke", {"question": " Is 4 even? ", "systemPrompt": " Be brief. "}),
    "elsewhere": call("/elsewhere"),
    "variables": sorted(os.environ),
}
open("probe-seen.json", "w").write(json.dumps(seen))
print(json.dumps({"score": 1, "reason": "probed"}))
"""

# the suite probing: one test, or one conversation whose turn has the grader (AgentV at
# 58f316ca2 lists the eval's provider first for a turn's grader too, not a conversation's
# own target: run by hand with the coding-agent label left out, which AgentV would start)
PROBED = {
    "test": "tests:\n  - id: probe\n    vars:\n      input: When did the Harbor Bridge open?\n"
    "    assert:\n      - type: script\n",
    "turn": "tests:\n  - id: probe\n    mode: conversation\n    turns:\n"
    "      - input: When did the Harbor Bridge open?\n        assert:\n"
    "          - type: script\n",
}


@pytest.mark.parametrize("form", sorted(PROBED))
def test_a_catalog_provider_accord_does_not_call_is_answered_with_the_reason(
    tmp_path: Path, fake: FakeOpenAI, form: str
) -> None:
    # the other tests' project (catalog, config.yml) with this suite in place of theirs
    root = tmp_path / "project"
    path = project(root, NAME)
    indent = " " * (12 if form == "turn" else 8)
    path.write_text(
        "providers: [llm]\nprompts: ['{{ input }}']\n"
        + PROBED[form]
        # the interpreter itself: a launcher such as pyenv's adds variables of its own
        + f"{indent}command: [{sys.executable}, probe.py]\n{indent}provider: true\n"
    )
    (path.parent / "probe.py").write_text(PROBE)
    with (root / ".agentv" / "providers.yaml").open("a") as catalog:
        catalog.write("- id: copilot-cli\n  label: agent\n")
    run = accord("eval", path, "--format", "json", "--cache", "off")
    assert run.exit_code == 0, run.stderr + run.stdout
    seen = json.loads((path.parent / "probe-seen.json").read_text())
    # provider-proxy.ts: /info names the default (the grader) and every label a request may
    # name: the eval's provider, then the catalog's
    labels = ["llm", "llm", "grader", "agent"]
    assert seen["info"] == [200, {"providerLabel": "grader", "maxCalls": 50, "callCount": 0,
                                  "availableProviderLabels": labels}]  # fmt: skip
    # a label of the catalog accord does not call: the call fails (500) with the reason,
    # in a batch the item's rawText says it
    status, said = seen["agent"]
    assert status == 500 and "'copilot-cli'" in said["error"], said
    status, batch = seen["agent_in_batch"]
    assert status == 200 and batch["responses"][0]["rawText"].startswith("Error: "), batch
    assert "'copilot-cli'" in batch["responses"][0]["rawText"]
    # the grader's answer in AgentV's shape, its tokens counted; the system prompt and the
    # question trimmed, as llm-providers.ts buildChatPrompt sends them
    status, answered = seen["grader"]
    assert status == 200 and set(answered) == {"output", "rawText", "tokenUsage"}, answered
    assert answered["output"] == [{"role": "assistant", "content": answered["rawText"]}]
    assert answered["tokenUsage"]["input"] > 0
    asked = next(r["messages"] for r in fake.requests if "Is 4 even?" in json.dumps(r))
    assert asked == [{"role": "system", "content": "Be brief."},
                     {"role": "user", "content": "Is 4 even?"}]  # fmt: skip
    assert seen["elsewhere"] == [404, {"error": "Not found"}]
    # the script's environment is accord's with the proxy's two variables, as AgentV gives
    # it (script-grader.ts: the process's, the proxy's, the workspace's): no key of the
    # catalog's models, no address of theirs
    proxy_variables = {"AGENTV_PROVIDER_PROXY_URL", "AGENTV_PROVIDER_PROXY_TOKEN"}
    assert set(seen["variables"]) == set(os.environ) | proxy_variables
