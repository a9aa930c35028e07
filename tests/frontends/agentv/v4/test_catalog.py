"""AgentV's provider catalog (`.agentv/providers.yaml`) as AgentV writes it: its `openai`
model provider (targets.ts, resolveOpenAIConfig) runs as a model of accord's models door,
its key read from the variable `{{ env.NAME }}` names; what accord cannot run is refused at
load naming the catalog's line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.evals.conftest import Run, accord
from tests.fakes import FakeOpenAI, Reply

SUITE = """\
name: t
providers: [llm]
prompts: ['{{ q }}']
tests:
  - id: one
    vars: {q: capital of France?}
    assert:
      - type: contains
        value: Paris
"""


def _project(root: Path, catalog: str) -> Path:
    (root / "config.yml").write_text("")
    (root / ".agentv").mkdir()
    (root / ".agentv" / "providers.yaml").write_text(catalog)
    (root / "evals").mkdir()
    (root / "evals" / "suite.yaml").write_text(SUITE)
    return root / "evals" / "suite.yaml"


def _refused(run: Run, *parts: str) -> None:
    assert run.exit_code == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    for part in parts:
        assert part in run.stderr, run.stderr


def test_an_agentv_openai_provider_runs_on_its_base_url_with_the_key_of_its_variable(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_BASE", fake_llm.url.removesuffix("/v1") + "/")
    monkeypatch.setenv("FAKE_KEY", "sk-from-env")
    fake_llm.responder = lambda body: Reply(text="It is Paris.")
    suite = _project(tmp_path, (
        "- id: openai\n  label: llm\n  base_url: '{{ env.FAKE_BASE }}'\n"
        "  api_key: '{{ env.FAKE_KEY }}'\n  model: fake-model\n  temperature: 0\n"
    ))  # fmt: skip
    run = accord("eval", suite, "--format", "json", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    case = json.loads(run.stdout)["suites"][0]["cases"][0]
    assert (case["status"], case["output"]) == ("passed", "It is Paris.")
    # `/v1` added to the base URL as AgentV's normalizeOpenAIBaseUrl does; the key sent
    assert fake_llm.requests[0]["model"] == "fake-model"
    assert fake_llm.requests[0]["temperature"] == 0
    assert fake_llm.authorizations == ["Bearer sk-from-env"]
    assert "sk-from-env" not in run.stdout + run.stderr
    # AgentV sets no max_tokens unless the entry gives max_output_tokens (promptfoo's 1024
    # is promptfoo's OpenAI provider's, not AgentV's)
    assert "max_tokens" not in fake_llm.requests[0]


# an `azure` entry of AgentV's catalog (.agentv/providers.yaml), every value from the
# environment as AgentV's resolveAzureConfig reads them
AZURE = """\
- label: llm
  id: azure
  model: "{{ env.TEAM_AZURE_DEPLOYMENT }}"
  endpoint: "{{ env.TEAM_AZURE_URL }}"
  version: "{{ env.TEAM_AZURE_VERSION }}"
  api_key: "{{ env.TEAM_AZURE_KEY }}"
"""


@pytest.mark.parametrize(
    ("version", "path", "auth"),
    [
        # no version: AgentV's default `v1`, the resource's /openai/v1 API, the key as bearer
        (None, "/openai/v1/chat/completions", "authorization"),
        ("v1", "/openai/v1/chat/completions", "authorization"),
        # a dated version: the deployment's path with api-version, the key as api-key
        (
            "api-version=2024-10-21",
            "/openai/deployments/my-deploy/chat/completions?api-version=2024-10-21",
            "api-key",
        ),
    ],
)
def test_agentvs_azure_catalog_entry_runs_once_its_variables_are_set(
    tmp_path: Path,
    fake_llm: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    version: str | None,
    path: str,
    auth: str,
) -> None:
    monkeypatch.setenv("TEAM_AZURE_URL", fake_llm.url.removesuffix("/v1"))
    monkeypatch.setenv("TEAM_AZURE_KEY", "azure-secret-key")
    monkeypatch.setenv("TEAM_AZURE_DEPLOYMENT", "my-deploy")
    if version is None:
        monkeypatch.delenv("TEAM_AZURE_VERSION", raising=False)
    else:
        monkeypatch.setenv("TEAM_AZURE_VERSION", version)
    fake_llm.responder = lambda body: Reply(text="It is Paris.")
    run = accord("eval", _project(tmp_path, AZURE), "--format", "json", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    case = json.loads(run.stdout)["suites"][0]["cases"][0]
    assert (case["status"], case["output"]) == ("passed", "It is Paris.")
    assert fake_llm.paths == [path]
    sent = fake_llm.authorizations if auth == "authorization" else fake_llm.api_keys
    assert sent == (["Bearer azure-secret-key"] if auth == "authorization" else
                    ["azure-secret-key"])  # fmt: skip
    assert "max_tokens" not in fake_llm.requests[0]
    # the key is read at the call, never stored or shown
    assert "azure-secret-key" not in run.stdout + run.stderr
    stored = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".yml"]
    assert not [p for p in stored if b"azure-secret-key" in p.read_bytes()]


def test_an_azure_entry_with_api_format_is_refused_as_agentv_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEAM_AZURE_URL", "https://res.openai.azure.com")
    monkeypatch.setenv("TEAM_AZURE_KEY", "k")
    monkeypatch.setenv("TEAM_AZURE_DEPLOYMENT", "d")
    suite = _project(tmp_path, AZURE + "  api_format: chat\n")
    _refused(accord("eval", suite), "suite.yaml:2", "providers.yaml:1", "api_format")


def test_a_key_written_in_the_catalog_is_refused_as_agentv_refuses_it(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    suite = _project(tmp_path, (
        "- id: copilot-cli\n  label: default\n"
        f"- id: openai\n  label: llm\n  base_url: {fake_llm.url}\n  api_key: sk-literal\n"
        "  model: m\n"
    ))  # fmt: skip
    _refused(accord("eval", suite), "suite.yaml:2", "providers.yaml:3", "{{ env.NAME }}")


@pytest.mark.parametrize(
    ("entry", "parts"),
    [
        ("- id: copilot-cli\n  label: llm\n",
         ("'copilot-cli'", "providers.yaml:1", "coding agent", "define 'llm' there")),
        ("- id: openai\n  label: llm\n  api_key: '{{ env.K }}'\n  model: m\n  workers: 3\n",
         ("key 'workers'",)),
        ("- id: openai\n  label: llm\n  api_key: '{{ env.K }}'\n  model: m\n"
         "  api_format: responses\n", ("chat completions",)),
        ("- id: openai\n  label: llm\n  api_key: '{{ env.K }}'\n  model: '{{ env.NO_SUCH_VAR }}'\n",
         ("NO_SUCH_VAR", "not set")),
        ("- id: anthropic\n  label: llm\n  api_key: '{{ env.K }}'\n", ("needs 'model'",)),
    ],
)  # fmt: skip
def test_a_catalog_entry_accord_cannot_run_is_refused_at_load(
    tmp_path: Path, entry: str, parts: tuple[str, ...]
) -> None:
    suite = _project(tmp_path, entry)
    _refused(accord("eval", suite), "suite.yaml:2", *parts)
