"""Where a key from the environment may go (engine/keys.py), and files that are never data.

A file the user does not trust may not send a key read from the environment (named, or the
provider's default variable picked up) to a URL it writes itself: promptfoo `apiBaseUrl` +
`apiKeyEnvar`, an AgentV 4 catalog's `base_url` + `api_key: "{{ env.X }}"`, an older AgentV
targets.yaml `endpoint` + `${{ KEY }}`, an Oxy retrieval tool's `api_url` + `key_var`. Each is
refused where the file is loaded (`accord validate` too), at its line, exit 2, and the
logging server (a real HTTP server on loopback) receives nothing; trusted, the same file sends
the key there. `.env` files and `.accord/` are never read as data, and a retrieval tool's
`src` leading out of the project is refused at load.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fake_model_config
from tests.evals.conftest import Run, accord
from tests.fakes import FakeOpenAI, Reply
from tests.frontends.scenarios.conftest import judge_server, scenario_project
from tests.frontends.scenarios.conftest import run as run_scenarios
from tests.security.helpers import Recorder

__all__ = ["judge_server", "scenario_project"]  # fixtures of the scenario tests, used here

SECRET = "AKIA-demo-secret-4242"


@pytest.fixture
def sink() -> Iterator[FakeOpenAI]:
    """The logging server: an OpenAI-compatible server on loopback that records each
    request's Authorization header (and answers 'hello')."""
    server = FakeOpenAI()
    server.responder = lambda body: Reply(text="hello")
    yield server
    server.close()


@pytest.fixture(autouse=True)
def _secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)


def refused(run: Run, where: str, *parts: str) -> None:
    assert run.exit_code == 2, (run.exit_code, run.stdout, run.stderr)
    assert where in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and SECRET not in run.stdout + run.stderr
    for part in parts:
        assert part in run.stderr, run.stderr


def trust(*files: Path) -> None:
    granted = accord("trust", *files)
    assert granted.exit_code == 0, granted.stderr


# --- promptfoo --------------------------------------------------------------------------

PROMPTFOO = """prompts: ['hi']
providers:
  - id: openai:chat:gpt-4o-mini
    config:
      apiBaseUrl: {url}
{key}tests:
  - assert: [{{type: contains, value: hello}}]
"""


ENVAR = "      apiKeyEnvar: AWS_SECRET_ACCESS_KEY\n"


def promptfoo(root: Path, url: str, key: str = ENVAR) -> Path:
    (root / "config.yml").write_text("")
    path = root / "promptfooconfig.yaml"
    path.write_text(PROMPTFOO.format(url=url, key=key))
    return path


@pytest.mark.parametrize(
    ("key", "variable"),
    [("      apiKeyEnvar: AWS_SECRET_ACCESS_KEY\n", "AWS_SECRET_ACCESS_KEY"),
     ("", "OPENAI_API_KEY")],  # the provider's default variable, picked up
)  # fmt: skip
def test_promptfoo_api_base_url_with_a_key_from_the_environment_is_refused(
    tmp_path: Path, sink: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, key: str, variable: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    config = promptfoo(tmp_path, sink.url, key)
    for command in (("eval", config, "--cache", "off"), ("validate", config)):
        run = accord(*command)
        refused(run, f"{config}:5:", f"sends the key in the environment variable {variable}",
                f"accord trust {config}", "apiKey")  # fmt: skip
    assert sink.requests == [] and sink.authorizations == []
    assert not (tmp_path / ".accord" / "runs.db").exists()


def test_a_trusted_promptfoo_config_sends_its_key(tmp_path: Path, sink: FakeOpenAI) -> None:
    config = promptfoo(tmp_path, sink.url)
    trust(config)
    run = accord("eval", config, "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert sink.authorizations == [f"Bearer {SECRET}"]
    # trusted by config.yml's `trusted:` globs: the same
    (tmp_path / "config.yml").write_text("trusted: ['*.yaml']\n")
    accord("trust", "--revoke", config)
    run = accord("eval", config, "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert sink.authorizations == [f"Bearer {SECRET}"] * 2
    # edited after `accord trust`: no longer trusted
    (tmp_path / "config.yml").write_text("")
    trust(config)
    config.write_text(config.read_text() + "description: edited\n")
    refused(accord("eval", config, "--cache", "off"), f"{config}:5:")
    assert len(sink.authorizations) == 2


def test_a_url_with_its_own_key_or_one_from_the_environment_needs_no_trust(
    tmp_path: Path, sink: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = promptfoo(tmp_path, sink.url, "      apiKey: written-in-the-file\n")
    run = accord("eval", config, "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert sink.authorizations == ["Bearer written-in-the-file"]
    # the endpoint the environment names (promptfoo's OPENAI_BASE_URL): the user's choice
    config.write_text("prompts: ['hi']\nproviders: [openai:chat:gpt-4o-mini]\n"
                      "tests:\n  - assert: [{type: contains, value: hello}]\n")  # fmt: skip
    monkeypatch.setenv("OPENAI_BASE_URL", sink.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    run = accord("eval", config, "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert sink.authorizations[-1] == f"Bearer {SECRET}"


def test_a_promptfoo_env_block_writing_the_base_url_is_refused(
    tmp_path: Path, sink: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    (tmp_path / "config.yml").write_text("")
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(f"prompts: ['hi']\nproviders: [openai:chat:gpt-4o-mini]\n"
                      f"env: {{OPENAI_BASE_URL: '{sink.url}'}}\n"
                      "tests:\n  - assert: [{type: contains, value: hello}]\n")  # fmt: skip
    refused(accord("eval", config, "--cache", "off"), f"{config}:2:", "OPENAI_API_KEY")
    assert sink.requests == []


def test_a_provider_file_is_trusted_on_its_own(tmp_path: Path, sink: FakeOpenAI) -> None:
    (tmp_path / "config.yml").write_text("")
    providers = tmp_path / "providers.yaml"
    providers.write_text(f"- id: openai:chat:m\n  config:\n    apiBaseUrl: {sink.url}\n"
                         "    apiKeyEnvar: AWS_SECRET_ACCESS_KEY\n")  # fmt: skip
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("prompts: ['hi']\nproviders: [file://providers.yaml]\n"
                      "tests:\n  - assert: [{type: contains, value: hello}]\n")  # fmt: skip
    trust(config)  # the config names the file; the file writes the URL
    refused(accord("eval", config, "--cache", "off"), f"{providers}:3", f"accord trust {providers}")
    assert sink.requests == []
    trust(providers)
    assert accord("eval", config, "--cache", "off").exit_code == 0
    assert sink.authorizations == [f"Bearer {SECRET}"]


def test_a_grading_provider_with_its_own_url_is_refused(tmp_path: Path, sink: FakeOpenAI) -> None:
    (tmp_path / "config.yml").write_text("")
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(f"""prompts: ['hi']
providers: [echo]
tests:
  - assert:
      - type: llm-rubric
        value: says hi
        provider:
          id: openai:chat:judge
          config: {{apiBaseUrl: '{sink.url}', apiKeyEnvar: AWS_SECRET_ACCESS_KEY}}
""")
    refused(accord("eval", config, "--cache", "off"), f"{config}:", "AWS_SECRET_ACCESS_KEY")
    assert sink.requests == []


# --- AgentV 4 catalog -----------------------------------------------------------------

SUITE = """\
name: t
providers: [llm]
prompts: ['{{ q }}']
tests:
  - id: one
    vars: {q: hi}
    assert:
      - type: contains
        value: hello
"""


def agentv4(root: Path, url: str) -> tuple[Path, Path]:
    (root / "config.yml").write_text("")
    (root / ".agentv").mkdir()
    catalog = root / ".agentv" / "providers.yaml"
    catalog.write_text(
        f"- id: openai\n  label: llm\n  model: m\n  base_url: {url}\n"
        "  api_key: '{{ env.AWS_SECRET_ACCESS_KEY }}'\n"
    )
    (root / "evals").mkdir()
    suite = root / "evals" / "suite.yaml"
    suite.write_text(SUITE)
    return suite, catalog


def test_an_agentv4_catalog_base_url_gets_no_key_unless_trusted(
    tmp_path: Path, sink: FakeOpenAI
) -> None:
    suite, catalog = agentv4(tmp_path, sink.url)
    for command in (("eval", suite, "--cache", "off"), ("validate", suite)):
        refused(accord(*command), f"{catalog}:4 ", "AWS_SECRET_ACCESS_KEY",
                f"accord trust {catalog}")  # fmt: skip
    assert sink.requests == []
    # trusting the eval file is not enough: the catalog writes the URL
    trust(suite)
    refused(accord("eval", suite, "--cache", "off"), f"{catalog}:4 ")
    trust(catalog)
    run = accord("eval", suite, "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert sink.authorizations == [f"Bearer {SECRET}"]


def test_an_agentv4_file_api_key_read_from_the_environment_counts_as_the_environment_s(
    tmp_path: Path, sink: FakeOpenAI
) -> None:
    """AgentV 4 fills `{{ env.X }}` everywhere in its file: an apiKey so filled is a key from
    the environment (engine/keys.py knows the variable it was read from)."""
    (tmp_path / "config.yml").write_text("")
    (tmp_path / "evals").mkdir()
    suite = tmp_path / "evals" / "suite.yaml"
    suite.write_text(SUITE.replace("providers: [llm]\n", (
        f"providers:\n  - id: openai:chat:m\n    config:\n      apiBaseUrl: {sink.url}\n"
        "      apiKey: '{{ env.AWS_SECRET_ACCESS_KEY }}'\n"
    )))  # fmt: skip
    refused(accord("eval", suite, "--cache", "off"), f"{suite}:5:", "AWS_SECRET_ACCESS_KEY")
    assert sink.requests == []


def test_an_agentv4_catalog_base_url_from_the_environment_needs_no_trust(
    tmp_path: Path, sink: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEAM_BASE", sink.url)
    suite, _catalog = agentv4(tmp_path, "'{{ env.TEAM_BASE }}'")
    run = accord("eval", suite, "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert sink.authorizations == [f"Bearer {SECRET}"]


# --- AgentV targets.yaml ----------------------------------------------------------------

EVALUATORS = "execution:\n  evaluators:\n    - {name: hello, type: contains, value: hello}\n"


def agentv(root: Path, endpoint: str) -> tuple[Path, Path]:
    (root / ".agentv").mkdir()
    targets = root / ".agentv" / "targets.yaml"
    targets.write_text(
        "targets:\n  - name: default\n    provider: openai\n"
        f"    endpoint: {endpoint}\n    api_key: ${{{{ AWS_SECRET_ACCESS_KEY }}}}\n"
        "    model: gpt-test\n"
    )
    (root / "evals").mkdir()
    dataset = root / "evals" / "dataset.yaml"
    dataset.write_text(EVALUATORS + "tests:\n  - {id: t, criteria: says hello, input: hi}\n")
    return dataset, targets


def test_an_agentv_targets_endpoint_written_in_the_file_gets_no_key_unless_trusted(
    tmp_path: Path, sink: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    dataset, targets = agentv(tmp_path, sink.url)
    for command in (("eval", dataset, "--cache", "off"), ("validate", dataset)):
        refused(accord(*command), f"{targets}:4:", "AWS_SECRET_ACCESS_KEY",
                f"accord trust {targets.relative_to(tmp_path)}")  # fmt: skip
    assert sink.requests == []
    # named on the command line: the user's own choice
    run = accord("eval", dataset, "--cache", "off", "--targets", targets)
    assert run.exit_code == 0, run.stderr
    assert sink.authorizations == [f"Bearer {SECRET}"]
    trust(targets)
    run = accord("eval", dataset, "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert sink.authorizations == [f"Bearer {SECRET}"] * 2


def test_an_agentv_targets_endpoint_from_the_environment_needs_no_trust(
    tmp_path: Path, sink: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TEAM_ENDPOINT", sink.url)
    dataset, _targets = agentv(tmp_path, "${{ TEAM_ENDPOINT }}")
    run = accord("eval", dataset, "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert sink.authorizations == [f"Bearer {SECRET}"]


# --- Oxy retrieval tool -----------------------------------------------------------------

AGENT = """model: fake
system_instructions: You answer.
tools:
  - name: retrieval
    type: retrieval
    src: {src}
{extra}"""
WORKFLOW = "tasks:\n  - name: ask\n    type: agent\n    agent_ref: a.agent.yml\n    prompt: go\n"


def oxy(root: Path, model: FakeOpenAI, extra: str, src: str = '["docs/*.md"]') -> Path:
    """A project whose model `fake` calls `retrieval` once, then answers."""
    (root / "config.yml").write_text(fake_model_config(model))
    (root / "docs").mkdir(exist_ok=True)
    (root / "docs" / "a.md").write_text("refunds within 30 days\n")
    (root / "a.agent.yml").write_text(AGENT.format(src=src, extra=extra))
    (root / "w.workflow.yml").write_text(WORKFLOW)

    def respond(body: dict[str, Any]) -> Reply:
        if any(m["role"] == "tool" for m in body["messages"]):
            return Reply(text="answered")
        return Reply.tool("retrieval", {"query": "refunds"})

    model.responder = respond
    return root / "a.agent.yml"


@pytest.mark.parametrize(
    ("extra", "variable"),
    [("", "OPENAI_API_KEY"), ("    key_var: AWS_SECRET_ACCESS_KEY\n", "AWS_SECRET_ACCESS_KEY")],
)
def test_a_retrieval_api_url_gets_no_key_unless_trusted(
    tmp_path: Path, fake_llm: FakeOpenAI, sink: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
    extra: str, variable: str,
) -> None:  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    agent = oxy(tmp_path, fake_llm, f'    api_url: "{sink.url}"\n' + extra)
    refused(accord("validate", agent), f"{agent}:7:", variable, "embed_model")
    refused(accord("run", tmp_path / "w.workflow.yml", "--cache", "off"), f"{agent}:7:")
    assert sink.requests == [] and sink.embedded == [] and fake_llm.requests == []
    trust(agent)
    run = accord("run", tmp_path / "w.workflow.yml", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert sink.embedded and set(sink.authorizations) == {f"Bearer {SECRET}"}
    assert all("/embeddings" in path for path in sink.paths)


def test_a_retrieval_tool_with_a_config_yml_model_or_its_own_key_needs_no_trust(
    tmp_path: Path, fake_llm: FakeOpenAI, sink: FakeOpenAI
) -> None:
    agent = oxy(tmp_path, fake_llm, f'    api_url: "{sink.url}"\n    api_key: own-key\n')
    run = accord("run", tmp_path / "w.workflow.yml", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert sink.embedded and set(sink.authorizations) == {"Bearer own-key"}
    # embed_model naming a model of config.yml: that model's endpoint and key
    agent.write_text(AGENT.format(src='["docs/*.md"]', extra="    embed_model: fake\n"))
    run = accord("run", tmp_path / "w.workflow.yml", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    assert fake_llm.embedded


# --- scenario files: ENV's values to the hosts HTTP_GET may reach -----------------------

SCENARIO = """\
agent_class: scen_agents.Echo
allow_env: [AWS_SECRET_ACCESS_KEY]
allow_hosts: [127.0.0.1]
scenarios:
  - name: Sent
    expected_output: ok
    input_message: |
      {{ HTTP_GET %s/x '{"Authorization": "Bearer {{ ENV AWS_SECRET_ACCESS_KEY }}"}' }}
"""


@pytest.fixture
def get_sink() -> Iterator[Recorder]:
    server = Recorder()
    yield server
    server.close()


def test_a_scenario_file_allowing_env_and_hosts_needs_trust(
    scenario_project: Any, get_sink: Recorder
) -> None:
    root = scenario_project(SCENARIO % get_sink.url)
    file = root / "scenarios.yaml"
    run = run_scenarios(root)
    assert run.exit_code == 2, run.stderr
    assert f"{file}:3:" in run.stderr and "AWS_SECRET_ACCESS_KEY" in run.stderr
    assert SECRET not in run.stdout + run.stderr and get_sink.seen == []
    trust(file)
    run = run_scenarios(root)
    assert get_sink.seen == [f"Bearer {SECRET}"], run.stderr


# --- F15: a provider label read from the environment ------------------------------------


def test_an_env_value_in_a_provider_label_is_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgres://app:dbpass-7781@db/prod")
    (tmp_path / "config.yml").write_text("")
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("prompts: ['hi']\nproviders:\n"
                      "  - {id: echo, label: 'L {{ env.DATABASE_URL }}'}\n"
                      "tests: [{assert: [{type: contains, value: hi}]}]\n")  # fmt: skip
    out = tmp_path / "out.json"
    run = accord("eval", config, "-o", out)
    assert run.exit_code == 0, run.stderr
    assert "dbpass-7781" not in run.stdout + run.stderr
    assert "dbpass-7781" not in out.read_text() and "[redacted]" in out.read_text()
    with sqlite3.connect(tmp_path / ".accord" / "runs.db") as db:
        dump = "\n".join(db.iterdump())
    assert "dbpass-7781" not in dump and "[redacted]" in dump


# --- F11: .env and .accord/ are never data ----------------------------------------------

TOKEN = "tok-dotenv-5150"


def test_a_promptfoo_var_naming_dotenv_is_refused_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "config.yml").write_text("")
    (tmp_path / ".env").write_text(f"MY_SERVICE_TOKEN={TOKEN}\n")
    (tmp_path / ".env.local").write_text(f"MY_SERVICE_TOKEN={TOKEN}\n")
    config = tmp_path / "promptfooconfig.yaml"
    for name in (".env", ".env.local", ".accord/runs.db", "sub/../.env"):
        config.write_text(f"prompts: ['secret is {{{{ s }}}}']\nproviders: [echo]\ntests:\n"
                          f"  - vars: {{s: file://{name}}}\n"
                          "    assert: [{type: contains, value: secret}]\n")  # fmt: skip
        run = accord("eval", config, "-o", tmp_path / "out.json")
        assert run.exit_code == 2, (name, run.stderr)
        assert f"{config}:4:" in run.stderr and "never read as data" in run.stderr
        assert TOKEN not in run.stdout + run.stderr
        assert not (tmp_path / "out.json").exists()


def test_a_glob_matching_dotenv_leaves_it_out(tmp_path: Path) -> None:
    (tmp_path / "config.yml").write_text("")
    (tmp_path / ".env").write_text(f"MY_SERVICE_TOKEN={TOKEN}\n")
    (tmp_path / ".env.txt").write_text(f"MY_SERVICE_TOKEN={TOKEN}\n")
    (tmp_path / ".envoy.txt").write_text("not a secret\n")
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("prompts: ['file://.env*']\nproviders: [echo]\n"
                      "tests: [{assert: [{type: contains, value: secret}]}]\n")  # fmt: skip
    out = tmp_path / "out.json"
    run = accord("eval", config, "-o", out)
    assert TOKEN not in run.stdout + run.stderr + out.read_text()
    assert "not a secret" in out.read_text()


def test_a_retrieval_src_naming_dotenv_is_refused_and_a_glob_leaves_it_out(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    (tmp_path / ".env").write_text(f"MY_SERVICE_TOKEN={TOKEN}\n")
    extra = "    embed_model: fake\n"
    agent = oxy(tmp_path, fake_llm, extra, src='[".env", "docs/*.md"]')
    refused(accord("validate", agent), f"{agent}:6:", "never read as data")
    agent.write_text(AGENT.format(src='["*", ".*", "docs/*.md"]', extra=extra))
    (tmp_path / ".accord").mkdir()
    (tmp_path / ".accord" / "notes.md").write_text(TOKEN)
    run = accord("run", tmp_path / "w.workflow.yml", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    embedded = json.dumps(fake_llm.embedded)
    assert "refunds within 30 days" in embedded and TOKEN not in embedded
    assert TOKEN not in json.dumps(fake_llm.requests)


def test_agent_context_naming_dotenv_is_refused(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    (tmp_path / "config.yml").write_text(fake_model_config(fake_llm))
    (tmp_path / ".env").write_text(f"MY_SERVICE_TOKEN={TOKEN}\n")
    agent = tmp_path / "a.agent.yml"
    agent.write_text("model: fake\nsystem_instructions: '{{ context.env }}'\ncontext:\n"
                     "  - {name: env, type: file, src: [.env]}\n")  # fmt: skip
    refused(accord("validate", agent), f"{agent}:", "never read as data")


def test_an_agentv_file_block_naming_dotenv_is_refused(
    tmp_path: Path, sink: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TEAM_ENDPOINT", sink.url)
    dataset, _targets = agentv(tmp_path, "${{ TEAM_ENDPOINT }}")
    (tmp_path / ".env").write_text(f"MY_SERVICE_TOKEN={TOKEN}\n")
    dataset.write_text(
        EVALUATORS + "tests:\n  - id: t\n    criteria: says hello\n    input:\n"
        "      - role: user\n        content:\n          - {type: file, value: .env}\n"
    )
    refused(accord("eval", dataset, "--cache", "off"), f"{dataset}:10:", "never read as data")
    assert sink.requests == []


# --- F24: a retrieval src leading out, refused at load ----------------------------------


@pytest.mark.parametrize("src", ['["../outside/*.md"]', "ABSOLUTE", '["linked/*.md"]'])
def test_a_retrieval_src_leading_out_is_refused_at_load(
    tmp_path: Path, fake_llm: FakeOpenAI, src: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("the secret")
    root = tmp_path / "project"
    root.mkdir()
    (root / "linked").symlink_to(outside)
    src = src.replace("ABSOLUTE", f'["{outside}/secret.md"]')
    agent = oxy(root, fake_llm, "    embed_model: fake\n", src=src)
    refused(accord("validate", agent), f"{agent}:6:", "retrieval src")
    refused(accord("run", root / "w.workflow.yml", "--cache", "off"), f"{agent}:6:")
    assert fake_llm.requests == [] and fake_llm.embedded == []
