"""Judged evaluators against the fake server: forced tool calls, parsed replies, retries,
short_circuit, per-evaluator limits, the call cache, and automatic battle baselines."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply

JUDGE = """\
target: echo
short_circuit: {short}
evaluators:
  - {{type: contains, value: good}}
  - type: llm_judge
    name: polite
    prompt: "Is this polite? {{{{ output }}}}"
    score_choices: [{{name: "Yes", value: 1}}, {{name: "Somewhat", value: 0.5}}, {{name: "No", value: 0}}]
    threshold: {{gte: 0.5}}
cases:
  - {{id: a, input: good morning}}
  - {{id: b, input: good grief}}
  - {{id: c, input: go away}}
"""


def select(answer: str, reason: str = "because") -> Reply:
    return Reply.tool("select_answer", {"reason": reason, "answer": answer})


def test_llm_judge_answers_by_forced_tool_call(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    answers = {"good morning": "Yes", "good grief": "Somewhat", "go away": "No"}
    fake_llm.responder = lambda body: select(
        next(v for k, v in answers.items() if k in body["messages"][-1]["content"])
    )
    root = project({"j.eval.yml": JUDGE.format(short="false")})
    run = accord("eval", root / "j.eval.yml", "--format", "json")
    cases = {c["id"]: c for c in run.suite()["cases"]}
    polite = {
        k: next(e for e in c["evaluations"] if e["name"] == "polite") for k, c in cases.items()
    }
    assert [polite[k]["score"] for k in "abc"] == [1.0, 0.5, 0.0]
    assert [polite[k]["passed"] for k in "abc"] == [True, True, False]
    request = fake_llm.requests[0]
    assert request["tool_choice"] == {"type": "function", "function": {"name": "select_answer"}}
    enum = request["tools"][0]["function"]["parameters"]["properties"]["answer"]["enum"]
    assert enum == ["Yes", "Somewhat", "No"] and request["temperature"] == 0
    assert run.suite()["judge_calls"] == 3


def test_short_circuit_saves_judge_calls(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    fake_llm.responder = lambda body: select("Yes")
    root = project({"j.eval.yml": JUDGE.format(short="true")})
    run = accord("eval", root / "j.eval.yml", "--format", "json")
    suite = run.suite()
    assert suite["judge_calls"] == 2 and suite["judge_calls_saved"] == 1
    c = next(c for c in suite["cases"] if c["id"] == "c")
    skipped = next(e for e in c["evaluations"] if e["name"] == "polite")
    assert skipped["score"] is None and "short_circuit" in skipped["skipped"]
    assert len(fake_llm.requests) == 2


def test_unparseable_reply_is_retried_once_then_an_error(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    fake_llm.responder = lambda body: select("Maybe")
    root = project(
        {
            "j.eval.yml": JUDGE.format(short="false").replace(
                "  - {id: b, input: good grief}\n  - {id: c, input: go away}\n", ""
            )
        }
    )
    run = accord("eval", root / "j.eval.yml", "--format", "json")
    (case,) = run.suite()["cases"]
    polite = next(e for e in case["evaluations"] if e["name"] == "polite")
    assert polite["score"] is None and polite["passed"] is None
    assert "'Maybe' that is none of ['Yes', 'Somewhat', 'No']" in polite["error"]
    assert case["status"] == "error" and len(fake_llm.requests) == 2
    assert run.exit_code == 3


ONE_CASE = JUDGE.format(short="false").replace(
    "  - {id: b, input: good grief}\n  - {id: c, input: go away}\n", ""
)


def _polite_error(fake_llm: FakeOpenAI, root: Path) -> str:
    run = accord("eval", root / "j.eval.yml", "--format", "json")
    (case,) = run.suite()["cases"]
    polite = next(e for e in case["evaluations"] if e["name"] == "polite")
    assert polite["score"] is None and case["status"] == "error" and run.exit_code == 3
    assert len(fake_llm.requests) == 2  # asked twice, then an error, never a score
    return str(polite["error"])


def test_tool_call_without_json_arguments_is_retried_once_then_an_error(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    fake_llm.responder = lambda body: Reply.tool("select_answer", "Yes, because")
    error = _polite_error(fake_llm, project({"j.eval.yml": ONE_CASE}))
    assert error == "the judge's select_answer call had arguments that are not JSON: 'Yes, because'"


def test_reply_without_the_call_or_a_choice_is_retried_once_then_an_error(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    fake_llm.responder = lambda body: Reply(text="It is hard to say.")
    error = _polite_error(fake_llm, project({"j.eval.yml": ONE_CASE}))
    assert error == "the judge's select_answer call had no call (reply: 'It is hard to say.')"


def test_last_line_without_a_choice_is_retried_once_then_an_error(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    fake_llm.script("I think it is fine.\nAnswer: Perhaps", "Still unsure.")
    error = _polite_error(fake_llm, project({"j.eval.yml": ONE_CASE}, tools="false"))
    assert error == (
        "no answer among ['Yes', 'Somewhat', 'No'] in the judge's reply: 'Still unsure.'"
    )


def test_models_without_tools_answer_on_a_last_line(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    fake_llm.script("I think it is fine.\nAnswer: Somewhat")
    suite = (
        JUDGE.format(short="false").split("cases:")[0] + "cases:\n  - {id: a, input: good day}\n"
    )
    root = project({"j.eval.yml": suite}, tools="false")
    case = accord("eval", root / "j.eval.yml", "--format", "json").suite()["cases"][0]
    polite = next(e for e in case["evaluations"] if e["name"] == "polite")
    assert polite["score"] == 0.5
    assert "tools" not in fake_llm.requests[0]


def test_second_run_makes_no_judge_call(project: Callable[..., Path], fake_llm: FakeOpenAI) -> None:
    fake_llm.responder = lambda body: select("Yes")
    root = project({"j.eval.yml": JUDGE.format(short="false")})
    accord("eval", root / "j.eval.yml", "-q")
    before = len(fake_llm.requests)
    again = accord("eval", root / "j.eval.yml", "--format", "json")
    assert len(fake_llm.requests) == before == 3
    assert again.suite()["counts"]["passed"] == 2


def test_max_concurrency_is_a_limit_per_evaluator(
    project: Callable[..., Path], fake_llm: FakeOpenAI
) -> None:
    lock, live, peak = threading.Lock(), [0], [0]

    def slow(body: dict[str, Any]) -> Reply:
        with lock:
            live[0] += 1
            peak[0] = max(peak[0], live[0])
        time.sleep(0.05)
        with lock:
            live[0] -= 1
        return select("Yes")

    fake_llm.responder = slow
    cases = "".join(f"  - {{id: c{i}, input: good {i}}}\n" for i in range(12))
    suite = (
        JUDGE.format(short="false")
        .split("cases:")[0]
        .replace("threshold: {gte: 0.5}", "threshold: {gte: 0.5}\n    max_concurrency: 2")
        + "cases:\n"
        + cases
    )
    root = project({"j.eval.yml": suite})
    run = accord("eval", root / "j.eval.yml", "--format", "json", "--max-concurrency", "12")
    assert run.suite()["counts"]["passed"] == 12
    assert peak[0] == 2


BATTLE = """\
name: greet
target: {type: python, function: "gen:answer"}
evaluators:
  - {type: battle, criteria: the friendlier greeting}
cases:
  - {id: hello, input: hi}
"""


GEN = "import pathlib\n\ndef answer(x):\n    return (pathlib.Path(__file__).parent / 'out.txt').read_text()\n"


def test_automatic_battle_baselines(project: Callable[..., Path], fake_llm: FakeOpenAI) -> None:
    root = project({"b.eval.yml": BATTLE, "gen.py": GEN})

    def run_with(output: str, verdict: str | None) -> dict[str, Any]:
        (root / "out.txt").write_text(output)
        if verdict:
            fake_llm.script(select(verdict))
        doc = accord("eval", root / "b.eval.yml", "--format", "json", "--cache", "off").suite()
        return next(e for e in doc["cases"][0]["evaluations"] if e["name"] == "battle")

    first = run_with("hello.", None)
    assert first["score"] is None and "saved" in first["skipped"] and not fake_llm.requests
    assert run_with("Hello there, friend!", "Challenger is better")["score"] == 1.0
    listing = accord("runs", "baselines", "--project", root, "--format", "json")
    assert [r["output"] for r in json.loads(listing.stdout)] == ["Hello there, friend!"]
    tie = run_with("Hi!", "Tie")
    assert tie["score"] == 0.5 and tie["passed"] is True
    assert "Hello there, friend!" in accord("runs", "baselines", "--project", root).stdout
    lost = run_with("go away", "Baseline is better")
    assert lost["score"] == 0.0 and lost["passed"] is False
    prompt = fake_llm.requests[-1]["messages"][-1]["content"]
    assert "[Baseline]\nHello there, friend!" in prompt and "[Challenger]\ngo away" in prompt
    reset = accord("runs", "baselines", "--project", root, "--reset")
    assert reset.stdout.strip() == "1 baseline reset"
    assert run_with("anything", None)["skipped"]
