"""The same promptfoo config through promptfoo itself and through accord: equal verdicts,
scores and named scores.

promptfoo (node's `promptfoo@0.118.0`) is a test-only install, like the benchmark's
(benchmarks/_model_eval.py puts it in ~/.cache/accord-bench/promptfoo); where node or that
install is missing these tests are skipped with the reason. Model providers talk to one
fake OpenAI server on loopback (tests/fakes.py). The machine is small: two configs, each
run once by each tool.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply
from tests.frontends.promptfoo.harness import by_cell, needs_promptfoo, run_promptfoo, verdicts

EXAMPLE = Path(__file__).resolve().parents[3] / "workflows" / "promptfoo"

pytestmark = [pytest.mark.reference, needs_promptfoo]


def column_metrics(path: Path) -> list[dict[str, Any]]:
    prompts = json.loads(path.read_text())["results"]["prompts"]
    keep = ("score", "testPassCount", "testFailCount", "testErrorCount", "assertPassCount",
            "assertFailCount", "namedScores")  # fmt: skip
    return [{k: p["metrics"][k] for k in keep} | {"label": p["label"]} for p in prompts]


ANSWERS = {
    "France": "Paris",
    "Spain": "The capital of Spain is Madrid.",
    "Italy": "rome",
}


def capital(body: dict[str, Any]) -> Reply:
    asked = str(body["messages"][-1].get("content") or "")
    return Reply(text=next((a for c, a in ANSWERS.items() if c in asked), "I do not know"))


def test_a_model_config_scores_as_promptfoo_scores_it(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm.responder = capital
    (tmp_path / "config.yml").write_text("")
    (tmp_path / "chat.json").write_text(
        '[{"role": "system", "content": "One word."},'
        ' {"role": "user", "content": "What is the capital of {{country}}?"}]'
    )
    (tmp_path / "promptfooconfig.yaml").write_text(f"""
description: capitals
prompts:
  - 'Capital of {{{{country}}}}?'
  - file://chat.json
providers:
  - id: openai:chat:fake-model
    config: {{apiBaseUrl: '{fake_llm.url}', apiKey: test-key}}
defaultTest:
  threshold: 0.4
  assert:
    - type: not-contains
      value: know
      metric: confident
tests:
  - vars: {{country: France}}
    assert:
      - {{type: equals, value: Paris, weight: 2, metric: exact}}
  - vars: {{country: Spain}}
    assert:
      - {{type: contains, value: Madrid, metric: exact}}
      - {{type: starts-with, value: Madrid, weight: 3}}
  - vars: {{country: [Italy, Peru]}}
    assert:
      - {{type: icontains, value: '{{{{ "ROME" }}}}', metric: exact}}
      - {{type: contains-any, value: [Lima, rome], weight: 0}}
derivedMetrics:
  - name: exact_share
    value: exact / (exact + confident)
""")
    run_promptfoo(tmp_path, "promptfoo.json")
    monkeypatch.chdir(tmp_path)  # as promptfoo ran: prompt file labels show the folder named
    run = accord("eval", "-c", "promptfooconfig.yaml", "-o", "accord.json", "--cache", "off", "-q")
    # Peru fails in both; Spain's starts-with fails but its score 0.4 reaches the threshold
    assert run.exit_code == 1, run.stderr
    theirs, mine = verdicts(tmp_path / "promptfoo.json"), verdicts(tmp_path / "accord.json")
    assert len(theirs) == 8  # 4 var combinations x 2 prompts
    assert mine == theirs
    # promptfoo's AssertionsResult: with a threshold the score decides, not the failed assertion
    assert theirs[(1, 0)][:2] == (True, 0.4)
    assert column_metrics(tmp_path / "accord.json") == column_metrics(tmp_path / "promptfoo.json")


def test_the_offline_example_writes_the_table_promptfoo_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "promptfoo"
    shutil.copytree(EXAMPLE, folder)
    run_promptfoo(folder, "promptfoo.csv", "promptfoo.json")
    # the same command line: prompt file labels show the config's folder as it was named
    monkeypatch.chdir(folder)
    run = accord("eval", "-c", "promptfooconfig.yaml", "-o", "accord.csv", "-q")
    assert run.exit_code == 1, run.stderr
    assert (folder / "accord.csv").read_text() == (folder / "promptfoo.csv").read_text()
    run = accord("eval", "-c", "promptfooconfig.yaml", "-o", "accord.json", "-q")
    assert verdicts(folder / "accord.json") == verdicts(folder / "promptfoo.json")
    assert column_metrics(folder / "accord.json") == column_metrics(folder / "promptfoo.json")


def test_each_tests_own_threshold_decides_its_pass_as_in_promptfoo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # promptfoo's AssertionsResult: a test with a threshold passes on its weighted score
    # reaching it, one without (or with 0) on every assertion passing
    (tmp_path / "config.yml").write_text("")
    half = "[{type: contains, value: apple}, {type: contains, value: pear}]"
    (tmp_path / "promptfooconfig.yaml").write_text(f"""
description: bars
prompts: ['Say {{{{w}}}}', 'Do not say {{{{w}}}}']
providers: [echo]
tests:
  - {{description: low, threshold: 0.3, vars: {{w: apple}}, assert: {half}}}
  - {{description: high, threshold: 0.7, vars: {{w: apple}}, assert: {half}}}
  - {{description: none, vars: {{w: apple}}, assert: {half}}}
  - {{description: none passing, vars: {{w: apple pear}}, assert: {half}}}
  - {{description: zero, threshold: 0, vars: {{w: apple}}, assert: {half}}}
  - description: weighted
    threshold: 0.7
    vars: {{w: apple}}
    assert:
      - {{type: contains, value: apple, weight: 3}}
      - {{type: contains, value: pear}}
  - {{description: high without assertions, threshold: 0.9, vars: {{w: x}}}}
""")
    run_promptfoo(tmp_path, "promptfoo.json", "promptfoo.csv")
    monkeypatch.chdir(tmp_path)
    run = accord("eval", "-c", "promptfooconfig.yaml", "-o", "accord.json", "--format", "json")
    assert run.exit_code == 1, run.stderr  # accord's gate: a test failed
    theirs, mine = verdicts(tmp_path / "promptfoo.json"), verdicts(tmp_path / "accord.json")
    assert len(theirs) == 14  # 7 tests x 2 prompts
    assert mine == theirs
    passes = [theirs[(t, 0)][:2] for t in range(7)]
    assert passes == [(True, 0.5), (False, 0.5), (False, 0.5), (True, 1.0), (False, 0.5),
                      (True, 0.75), (True, 1.0)]  # fmt: skip
    assert column_metrics(tmp_path / "accord.json") == column_metrics(tmp_path / "promptfoo.json")
    # accord's own report counts as promptfoo's columns do (a test without assertions passes)
    (counts,) = [s["counts"] for s in json.loads(run.stdout)["suites"]]
    metrics = column_metrics(tmp_path / "promptfoo.json")
    failed = sum(p["testFailCount"] for p in metrics)
    passed = sum(p["testPassCount"] for p in metrics)
    assert counts == {"passed": passed, "failed": failed, "error": 0, "recorded": 0}
    run = accord("eval", "-c", "promptfooconfig.yaml", "-o", "accord.csv", "-q")
    assert run.exit_code == 1, run.stderr
    assert (tmp_path / "accord.csv").read_text() == (tmp_path / "promptfoo.csv").read_text()


@pytest.mark.parametrize(
    ("providers", "columns"),
    [
        # promptfoo keys a provider's prompts by its id as well as its label: the plain
        # `echo` (looked up by its id) runs picky's prompts alone
        ("[echo, {id: echo, label: picky, prompts: [second]}]",
         [("echo", "second"), ("picky", "second")]),
        # a later entry with the id and no prompts keys the id to every prompt again; the
        # `{ID: options}` form keys its id alone, so its labelled provider runs them all
        ("[echo, {id: echo, label: picky, prompts: [second]}, {id: echo, label: all}]",
         [("echo", "first"), ("echo", "second"), ("picky", "second"), ("all", "first"),
          ("all", "second")]),
        ("[echo, {echo: {label: mapped, prompts: [first]}}]",
         [("echo", "first"), ("mapped", "first"), ("mapped", "second")]),
    ],
)  # fmt: skip
def test_a_providers_prompts_are_keyed_by_its_id_and_label_as_in_promptfoo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, providers: str, columns: list[Any]
) -> None:
    (tmp_path / "config.yml").write_text("")
    (tmp_path / "promptfooconfig.yaml").write_text(f"""
prompts:
  - {{id: 'first {{{{t}}}}', label: first}}
  - {{id: 'second {{{{t}}}}', label: second}}
providers: {providers}
tests: [{{vars: {{t: x}}, assert: [{{type: contains, value: first}}]}}]
""")
    run_promptfoo(tmp_path, "promptfoo.json")
    monkeypatch.chdir(tmp_path)
    run = accord("eval", "-c", "promptfooconfig.yaml", "-o", "accord.json", "-q")
    assert run.exit_code == 1, run.stderr
    theirs = json.loads((tmp_path / "promptfoo.json").read_text())["results"]["prompts"]
    mine = json.loads((tmp_path / "accord.json").read_text())["results"]["prompts"]
    assert [(p["provider"], p["label"]) for p in theirs] == columns
    assert [(p["provider"], p["label"]) for p in mine] == columns
    assert verdicts(tmp_path / "accord.json") == verdicts(tmp_path / "promptfoo.json")


def _numbers(value: Any) -> Any:
    """JSON as compared: 1 and 1.0 are one number (node writes whole floats as ints)."""
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def test_an_assert_sets_results_are_written_as_promptfoo_writes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # promptfoo 0.118 assertionsResult.ts testResult: a set's result holds its members'
    # results (componentResults, its members' namedScores, `assertion: null`), and the
    # test's componentResults list the set, then each member, in the set's place
    (tmp_path / "config.yml").write_text("")
    (tmp_path / "promptfooconfig.yaml").write_text("""
prompts: ['Say {{word}}']
providers: [echo]
tests:
  - vars: {word: hello}
    assert:
      - {type: contains, value: hello}
      - type: assert-set
        threshold: 0.5
        metric: both
        assert:
          - {type: contains, value: Say, metric: said}
          - {type: icontains, value: nope}
      - {type: equals, value: x}
  - vars: {word: nope}
    assert:
      - type: assert-set
        weight: 2
        assert:
          - {type: contains, value: Say}
          - {type: contains, value: absent}
      - {type: contains, value: nope}
""")
    run_promptfoo(tmp_path, "promptfoo.json")
    monkeypatch.chdir(tmp_path)
    run = accord("eval", "-c", "promptfooconfig.yaml", "-o", "accord.json", "-q")
    assert run.exit_code == 1, run.stderr
    theirs = by_cell(tmp_path / "promptfoo.json")
    mine = by_cell(tmp_path / "accord.json")
    assert len(theirs) == 2
    for cell, result in theirs.items():
        assert _numbers(mine[cell]["gradingResult"]) == _numbers(result["gradingResult"])
    # the members count in the column's assertion counts, as in promptfoo's evaluator.ts
    assert column_metrics(tmp_path / "accord.json") == column_metrics(tmp_path / "promptfoo.json")


def test_an_ollama_chat_grader_is_asked_through_api_chat_as_in_promptfoo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_llm: Any
) -> None:
    # promptfoo 0.118 registry.ts: `ollama:chat:MODEL` is OllamaChatProvider, which posts
    # to OLLAMA_BASE_URL + /api/chat (providers/ollama.ts); both tools read that variable
    def rubric(body: dict[str, Any]) -> Reply:
        passed = "Rome" not in json.dumps(body["messages"])
        verdict = {"reason": "checked", "pass": passed, "score": 1 if passed else 0}
        return Reply(text=json.dumps(verdict))

    fake_llm.responder = rubric
    monkeypatch.setenv("OLLAMA_BASE_URL", fake_llm.url.removesuffix("/v1"))
    (tmp_path / "config.yml").write_text("")
    (tmp_path / "promptfooconfig.yaml").write_text("""
prompts: ['{{city}}']
providers: [echo]
defaultTest:
  options: {provider: 'ollama:chat:grader'}
tests:
  - vars: {city: Paris}
    assert: [{type: llm-rubric, value: names Paris}]
  - vars: {city: Rome}
    assert: [{type: llm-rubric, value: names Paris}]
""")
    run_promptfoo(tmp_path, "promptfoo.json")
    theirs = list(fake_llm.paths)
    fake_llm.paths.clear()
    monkeypatch.chdir(tmp_path)
    run = accord("eval", "-c", "promptfooconfig.yaml", "-o", "accord.json", "-q")
    assert run.exit_code == 1, run.stderr
    assert theirs == ["/api/chat", "/api/chat"]
    # litellm also asks /api/show for the model's details (its Ollama client's own lookup)
    assert [p for p in fake_llm.paths if p != "/api/show"] == theirs
    assert verdicts(tmp_path / "accord.json") == verdicts(tmp_path / "promptfoo.json")
    assert [v[0] for v in verdicts(tmp_path / "accord.json").values()] == [True, False]
