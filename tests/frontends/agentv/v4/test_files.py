"""AgentV 4 eval files through `accord eval`: suites written for these tests
(tests/data/agentv4) load under the `agentv4` front-end and score as AgentV scores them, given
the same answers: each assertion by AgentV's graders (packages/core/src/evaluation/graders), the
test by orchestrator.ts (the weighted mean of its assertions' scores, 0 when a required one
failed; a pass at 0.8). Their providers are labels of AgentV's provider catalog
(`.agentv/providers.yaml`), which the tests write with Python providers accord runs. The
text-checks and required-checks suites also run through AgentV itself in
test_differential.py, whose judge fails some rubrics this one passes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import fake_model_config
from tests.evals.conftest import Run, accord
from tests.fakes import FakeOpenAI, Reply

DATA = Path(__file__).parents[3] / "data" / "agentv4"


def _project(root: Path, fake: FakeOpenAI, example: str, catalog: str) -> Path:
    """The example as evals/suite.yaml of a project whose judge is the fake model; every
    rubric the judge reads passes with score 1."""
    (root / "config.yml").write_text(fake_model_config(fake) + "defaults:\n  judge_model: fake\n")
    (root / "evals").mkdir()
    shutil.copy(DATA / example, root / "evals" / "suite.yaml")
    (root / ".agentv").mkdir()
    (root / ".agentv" / "providers.yaml").write_text(catalog)
    for helper in ("mock_agent.py", "llm_answers.py"):
        shutil.copy(DATA / helper, root / helper)
    fake.responder = lambda body: Reply(text='{"pass": true, "score": 1, "reason": "ok"}')
    return root / "evals" / "suite.yaml"


def _cases(run: Run) -> dict[str, dict[str, Any]]:
    assert run.exit_code in (0, 1), run.stderr + run.stdout
    return {c["id"]: c for c in run.suite()["cases"]}


# agent-trajectories: mock_agent.py's tool calls under each test's assertions, by
# graders/trajectory.ts (evaluateToolUsed: calls of the name >= `min`; evaluateToolSequence:
# in_order finds the steps as a subsequence, exact the same list; evaluateToolArgsMatch with
# matchesExpectedArgsPartial: each given argument present and equal), 1 or 0 each; every
# rubric passes. (score, passed) per test
TRAJECTORY = {
    "repeated-lookups": (1.0, True),
    "triage-in-order": (1.0, True),
    "freeze-exactly": (1.0, True),
    "host-inspection": (1.0, True),
    "citation-never-exported": (0.75, False),  # exportCitation never called: 3 of 4
    "forecast-arguments": (1.0, True),
    "one-argument-checked": (1.0, True),
    "extra-calls-allowed": (1.0, True),
    "nothing-written": (1.0, True),  # no tool called at all
    "triage-with-gaps": (1.0, True),  # in_order skips the steps between
    "wrong-argument-name": (2 / 3, False),  # readInbox called with 'mailbox', not 'folder'
}


def test_a_trajectory_suite_runs_its_agent_and_scores_as_agentv(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    suite = _project(
        tmp_path, fake_llm, "agent-trajectories.suite.yaml",
        "- id: python:../mock_agent.py\n  label: mock_agent\n",
    )  # fmt: skip
    run = accord("eval", suite, "--format", "json", "--cache", "off")
    cases = _cases(run)
    assert set(cases) == set(TRAJECTORY)
    for test_id, (score, passed) in TRAJECTORY.items():
        case = cases[test_id]
        assert case["score"] == pytest.approx(score, abs=1e-4), (test_id, case)
        assert (case["status"] == "passed") is passed, (test_id, case["status"])
    assert run.exit_code == 1  # two tests fail, as under AgentV


# text-checks, with llm_answers.py's answers: graders/ for each assertion, orchestrator.ts for
# the test (a required is-json that fails makes the test 0)
TEXT_CHECKS = {
    "contains-word": (1.0, True),
    "regex-phone": (1.0, True),
    "equals-number": (0.5, False),  # "A hexagon has 6 sides" is not "6"; the rubric passes
    "anchored-regex": (1.0, True),
    "json-answer": (1.0, True),
    "json-required-with-key": (1.0, True),
    "json-required-fails": (0.0, False),  # not JSON: the required is-json fails, the test is 0
}


def test_a_suite_of_text_checks_scores_as_agentv(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    suite = _project(
        tmp_path, fake_llm, "text-checks.suite.yaml",
        "providers:\n  - id: python:../llm_answers.py\n    label: llm\n",
    )  # fmt: skip
    run = accord("eval", suite, "--format", "json", "--cache", "off")
    cases = _cases(run)
    assert set(cases) == set(TEXT_CHECKS), cases
    for test_id, (score, passed) in TEXT_CHECKS.items():
        case = cases[test_id]
        assert case["score"] == pytest.approx(score, abs=1e-4), (test_id, case)
        assert (case["status"] == "passed") is passed, (test_id, case["status"])


# required-checks, with llm_answers.py's answers
REQUIRED_CHECKS = {
    "word-and-pattern": (1.0, True),
    "json-fields": (1.0, True),
    "required-regex-fails": (0.0, False),  # no weekday: the required regex fails, the test is 0
    "equals-required": (1.0, True),
}


def test_a_suite_of_required_checks_scores_as_agentv(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    suite = _project(
        tmp_path, fake_llm, "required-checks.suite.yaml",
        "providers:\n  - id: python:../llm_answers.py\n    label: llm\n",
    )  # fmt: skip
    run = accord("eval", suite, "--format", "json", "--cache", "off")
    cases = _cases(run)
    assert set(cases) == set(REQUIRED_CHECKS)
    for test_id, (score, passed) in REQUIRED_CHECKS.items():
        case = cases[test_id]
        assert case["score"] == pytest.approx(score, abs=1e-4), (test_id, case)
        assert (case["status"] == "passed") is passed, (test_id, case["status"])
    regex = cases["required-regex-fails"]["evaluations"]
    assert [e["score"] for e in regex] == [0.0, 1.0], regex  # the rubric alone would pass


def _refused(run: Run, *parts: str) -> None:
    assert run.exit_code == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    for part in parts:
        assert part in run.stderr, run.stderr


def test_an_agent_rules_extension_is_refused_with_what_to_do(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    # skill-rubrics needs a coding agent: its extension installs skills for one
    (tmp_path / "workspace").mkdir()
    suite = _project(
        tmp_path, fake_llm, "skill-rubrics.suite.yaml",
        "- id: echo\n  label: default\n",
    )  # fmt: skip
    _refused(accord("eval", suite), "suite.yaml:4", "agentv:agent-rules", "coding agent")


def _write(root: Path, fake: FakeOpenAI, text: str) -> Path:
    (root / "config.yml").write_text(fake_model_config(fake) + "defaults:\n  judge_model: fake\n")
    path = root / "s.eval.yaml"
    path.write_text(text)
    return path


HEAD = "name: t\nproviders: [echo]\nprompts: ['{{ input }}']\n"


def test_environment_env_reaches_the_provider_process_as_data_and_workdir_runs_it(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "where.py").write_text(
        "import os\n\ndef call_api(prompt, options, context):\n"
        "    here = os.path.basename(os.getcwd())\n"
        "    return {'output': f\"{here} {prompt} {os.environ['GREETING']}\"}\n"
    )
    path = _write(tmp_path, fake_llm, (
        "name: t\nproviders: ['python:work/where.py']\nprompts: ['{{ input }}']\n"
        "environment:\n  type: host\n  workdir: work\n  env:\n    GREETING: $(rm -rf x) hi\n"
        "tests:\n  - id: one\n    conversation_id: c1\n    vars: {input: say}\n"
        "    assert:\n      - type: equals\n        value: work say $(rm -rf x) hi\n"
    ))  # fmt: skip
    run = accord("eval", path, "--format", "json", "--cache", "off")
    cases = _cases(run)
    assert cases["one"]["status"] == "passed", cases["one"]


@pytest.mark.parametrize(
    ("extra", "parts"),
    [
        (
            "environment:\n  type: docker\n  workdir: /w\n  image: x\n",
            ["s.eval.yaml:5", "docker", "type: host"],
        ),
        (
            "environment:\n  type: host\n  workdir: .\n  setup:\n    command: [make]\n",
            ["s.eval.yaml:7", "setup", "prepare the workdir"],
        ),
        (
            "extensions:\n  - file://hooks.ts:beforeAll\n",
            ["s.eval.yaml:5", "TypeScript lifecycle hook", "remove it"],
        ),
        # a label of no catalog, a provider that is no model: no judge to ask
        (
            "defaults: {grader: x}\n",
            ["s.eval.yaml:4", "defaults.grader", "no .agentv/providers.yaml defines it"],
        ),
        ("defaults: {grader: echo}\n", ["s.eval.yaml:4", "'echo' is not a model"]),
        ("colour: red\n", ["s.eval.yaml:4", "unknown key 'colour'"]),
    ],
)
def test_what_needs_a_coding_agent_or_is_unknown_is_refused_at_its_line(
    tmp_path: Path, fake_llm: FakeOpenAI, extra: str, parts: list[str]
) -> None:
    path = _write(tmp_path, fake_llm, HEAD + extra + "tests:\n  - id: a\n    vars: {input: x}\n")
    _refused(accord("eval", path), *parts)


def test_an_unknown_test_key_and_an_agentv_label_without_a_catalog_are_refused(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    path = _write(tmp_path, fake_llm, (
        "name: t\nproviders: [llm]\nprompts: ['{{ input }}']\n"
        "tests:\n  - id: a\n    vars: {input: x}\n    depends_on: [b]\n"
    ))  # fmt: skip
    _refused(accord("eval", path), "s.eval.yaml:2", "provider 'llm' is an AgentV provider label",
             "s.eval.yaml:7", "'depends_on'")  # fmt: skip


def test_a_catalog_provider_accord_does_not_run_is_named_with_its_line(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    path = _write(tmp_path, fake_llm, HEAD.replace("[echo]", "[agent]") +
                  "tests:\n  - id: a\n    vars: {input: x}\n")  # fmt: skip
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "providers.yaml").write_text(
        "- id: echo\n  label: other\n- id: claude-cli\n  label: agent\n"
    )
    _refused(accord("eval", path), "AgentV's 'claude-cli' provider", "providers.yaml:3")


def test_agentv4_files_are_told_from_seed_002_agentv_files_and_promptfoo_configs(
    tmp_path: Path,
) -> None:
    (tmp_path / "config.yml").write_text("")
    new = tmp_path / "new.yaml"
    # (a test with nothing to grade it by AgentV skips, and accord refuses: it has a rubric)
    new.write_text("name: x\nproviders: [echo]\nprompts: ['{{ q }}']\n"
                   "tests:\n  - id: a\n    vars: {q: hi}\n    assert: [Says hi]\n")  # fmt: skip
    plain = tmp_path / "plain.yaml"
    plain.write_text("providers: [echo]\nprompts: ['{{ q }}']\ntests:\n  - vars: {q: hi}\n")
    # the older AgentV format: `tests:` with `input` and `criteria`, no prompts or providers
    old = tmp_path / "old.yaml"
    old.write_text("name: x\ntests:\n  - id: a\n    input: hi\n    criteria: says hi\n")
    assert "(agentv4 suite, 1 case)" in accord("validate", new).stdout
    assert "(promptfoo suite, 1 case)" in accord("validate", plain).stdout
    run = accord("validate", old)
    assert run.exit_code == 2 and ".agentv/targets.yaml" in run.stderr, run.stderr


def test_env_expressions_are_rendered_from_the_environment_at_load(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # interpolation.ts: every `{{ env.… }}` of the file, with a default for an unset one;
    # `{{ input }}` is left to the test's vars
    monkeypatch.setenv("AV4_WORD", "hello")
    monkeypatch.delenv("AV4_UNSET", raising=False)
    path = _write(tmp_path, fake_llm, HEAD + (
        "tests:\n  - id: a\n    vars: {input: hello there}\n    assert:\n"
        "      - type: starts-with\n        value: '{{ env.AV4_WORD }}'\n"
        "      - type: contains\n        value: '{{ env.AV4_UNSET | default(\"there\") }}'\n"
        "      - type: equals\n        value: '{{ input }}'\n"
    ))  # fmt: skip
    run = accord("eval", path, "--format", "json", "--cache", "off")
    case = _cases(run)["a"]
    assert [e["score"] for e in case["evaluations"]] == [1.0, 1.0, 1.0], case
    monkeypatch.setenv("AV4_WORD", "bye")
    case = _cases(accord("eval", path, "--format", "json", "--cache", "off"))["a"]
    assert [e["score"] for e in case["evaluations"]] == [0.0, 1.0, 1.0], case


def test_a_key_overriding_a_yaml_merge_is_no_duplicate_and_a_real_duplicate_is_refused(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    # AgentV's red-team files (llm01-prompt-injection.eval.yaml) merge the suite's governance
    # anchor into a test's and override one key, which YAML's merge allows and AgentV's parser
    # reads as the override; two keys written in the same mapping stay an error
    path = _write(tmp_path, fake_llm, (
        HEAD + "governance: &g\n  owasp: [LLM01]\n  atlas: [T1]\n"
        "tests:\n  - id: one\n    metadata:\n      governance:\n        <<: *g\n"
        "        owasp: [LLM01, LLM06]\n    vars: {input: hi}\n"
        "    assert:\n      - type: equals\n        value: hi\n"
    ))  # fmt: skip
    run = accord("eval", path, "--format", "json", "--cache", "off")
    assert _cases(run)["one"]["status"] == "passed"
    twice = "        atlas: [T2]\n        atlas: [T3]\n"
    path.write_text(path.read_text().replace("        owasp: [LLM01, LLM06]\n", twice))
    _refused(accord("eval", path), "s.eval.yaml:13", "duplicate key 'atlas'")


def test_evaluate_options_repeat_runs_every_trial_and_scores_the_best_as_agentv(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    # trials.ts aggregatePassAny: the best trial's score, a pass when any trial passed, and
    # (no early exit) every trial run; the provider answers right on its second call only
    (tmp_path / "flaky.py").write_text(
        "from pathlib import Path\n\ndef call_api(prompt, options, context):\n"
        "    calls = Path(__file__).with_name('calls.txt')\n"
        "    n = len(calls.read_text()) if calls.exists() else 0\n"
        "    calls.write_text('x' * (n + 1))\n"
        "    return {'output': 'right' if n == 1 else 'wrong'}\n"
    )
    path = _write(tmp_path, fake_llm, (
        "name: t\nproviders: ['python:flaky.py']\nprompts: ['{{ input }}']\n"
        "evaluate_options:\n  repeat: 3\n  max_concurrency: 1\n"
        "tests:\n  - id: one\n    vars: {input: q}\n"
        "    assert:\n      - type: equals\n        value: right\n"
    ))  # fmt: skip
    run = accord("eval", path, "--format", "json", "--cache", "off")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert (tmp_path / "calls.txt").read_text() == "xxx"  # all three trials ran
    suite = run.suite()
    assert suite["counts"]["passed"] == 1 and suite["mean_score"]["value"] == 1.0


@pytest.mark.parametrize(
    ("options", "line", "message"),
    [
        ("  repeat:\n    count: 2\n", 5, "positive integer"),  # AgentV refuses it too
        ("  max_concurrency: 80\n", 5, "from 1 to 50"),
        ("  budget_usd: 0\n", 5, "budget_usd is a positive number"),
        ("  retries: 1\n", 5, "unknown key 'retries'"),
    ],
)
def test_evaluate_options_accord_cannot_honour_are_refused_at_their_line(
    tmp_path: Path, fake_llm: FakeOpenAI, options: str, line: int, message: str
) -> None:
    path = _write(tmp_path, fake_llm, (
        HEAD + "evaluate_options:\n" + options
        + "tests:\n  - id: one\n    vars: {input: q}\n"
    ))  # fmt: skip
    _refused(accord("eval", path), f"s.eval.yaml:{line}", message)


@pytest.mark.parametrize(
    ("value", "parts"),
    [
        ("../secret.md", ["s.eval.yaml:13", "outside the project root"]),
        ("/SECRET", ["s.eval.yaml:13", "outside the project root"]),
        ("link.md", ["s.eval.yaml:13", "outside the project root"]),
        # missing, and leaving the project from the eval file's folder: refused all the same
        ("../gone.md", ["s.eval.yaml:13", "outside the project root"]),
    ],
)
def test_a_file_content_part_outside_the_project_is_refused_at_its_line(
    tmp_path: Path, fake_llm: FakeOpenAI, value: str, parts: list[str]
) -> None:
    (tmp_path / "secret.md").write_text("the secret text\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()  # the project's root
    (project / "link.md").symlink_to(tmp_path / "secret.md")  # a link leading out
    value = value.replace("/SECRET", str(tmp_path / "secret.md"))
    path = _write(project, fake_llm, HEAD + (
        "tests:\n  - id: a\n    vars:\n      input:\n        - role: user\n"
        "          content:\n            - type: text\n              value: Read this\n"
        f"            - type: file\n              value: {value}\n"
    ))  # fmt: skip
    run = accord("eval", path)
    _refused(run, *parts)
    assert "the secret text" not in run.stdout + run.stderr


def test_a_missing_file_content_part_is_left_out_with_a_warning_and_the_run_goes_on(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    """message-processor.ts processMessages: a file part whose file is not found is logged
    ("File not found: PATH", with the paths tried) and `continue`d past, so the message
    keeps its other parts; the test runs."""
    (tmp_path / ".git").mkdir()
    path = _write(tmp_path, fake_llm, HEAD.replace("[echo]", "['python:show.py']") + (
        "tests:\n  - id: a\n    vars:\n      input:\n        - role: user\n"
        "          content:\n            - type: text\n              value: Read this\n"
        "            - type: file\n              value: notes/missing.md\n"
        "    assert:\n      - type: contains\n        value: Read this\n"
    ))  # fmt: skip
    # the provider answers with the messages it was sent
    (tmp_path / "show.py").write_text(
        "def call_api(prompt, options, context):\n    return {'output': prompt}\n"
    )
    run = accord("eval", path, "--format", "json", "--cache", "off")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    warning = next(line for line in run.stderr.splitlines() if "missing.md" in line)
    assert warning.startswith("warning: ") and "s.eval.yaml:13" in warning, warning
    assert "file content part not found: notes/missing.md" in warning
    assert str(tmp_path / "notes" / "missing.md") in warning  # a path it tried
    assert warning.count("missing.md") >= 2 and "left out" in warning
    (case,) = run.suite()["cases"]
    assert case["status"] == "passed"
    # the message kept its text part and lost the file part
    text_only = [{"role": "user", "content": [{"type": "text", "value": "Read this"}]}]
    assert json.loads(case["output"]) == text_only


def test_a_file_content_part_reaches_the_model_and_the_judge_as_its_tagged_text(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is found from the eval file's folder up to the project root; the model gets
    the message's segments joined by a line break, the judge's question quotes the same."""
    monkeypatch.setenv("FAKE_KEY", "test-key")
    (tmp_path / ".git").mkdir()
    (tmp_path / "guide.md").write_text("\n  Answer in French.\r\n\n")
    (tmp_path / "evals").mkdir()
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "providers.yaml").write_text(
        f"- id: openai\n  label: llm\n  base_url: {fake_llm.url}\n"
        "  api_key: '{{ env.FAKE_KEY }}'\n  model: fake-model\n"
    )
    path = _write(tmp_path, fake_llm, (
        "name: t\nproviders: [llm]\nprompts: ['{{ input }}']\n"
        "tests:\n  - id: a\n    assert: [Greets the user]\n    vars:\n      input:\n"
        "        - role: system\n          content: Be brief.\n        - role: user\n"
        "          content:\n            - type: text\n              value: Say hello\n"
        "            - type: file\n              value: /guide.md\n"
    ))  # fmt: skip
    path = path.rename(tmp_path / "evals" / "s.eval.yaml")
    # the catalog sends FAKE_KEY to the base_url it writes: a file the user trusts
    assert accord("trust", tmp_path / ".agentv" / "providers.yaml").exit_code == 0
    fake_llm.responder = lambda body: Reply(
        text='{"checks": [{"id": "rubric-1", "satisfied": true, "reasoning": "ok"}], '
        '"overall_reasoning": "ok"}'
    )
    run = accord("eval", path, "--cache", "off")
    assert run.exit_code == 0, run.stdout + run.stderr
    tagged = 'Say hello\n<file path="guide.md">\nAnswer in French.\n</file>'
    model = [r["messages"] for r in fake_llm.requests if r["messages"][0]["content"] == "Be brief."]
    assert model == [[{"role": "system", "content": "Be brief."},
                      {"role": "user", "content": tagged}]]  # fmt: skip
    judged = [r["messages"][1]["content"] for r in fake_llm.requests if r not in model]
    assert any(f"@[System]:\nBe brief.\n\n@[User]:\n{tagged}\n" in q for q in judged), judged
