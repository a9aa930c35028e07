"""The same assertions through promptfoo 0.118 itself (its echo provider answers each test
with its `text` var) and through accord: every assertion's pass and score, each test's score,
pass and named scores must be equal. Runs where promptfoo's npm install is present (the one
benchmarks/_model_eval.py makes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from accord.tasks.evaluators.base import Finding
from tests.frontends.promptfoo.asserts.harness import score

PROMPTFOO = (
    Path.home() / ".cache" / "accord-bench" / "promptfoo" / "node_modules" / ".bin" / "promptfoo"
)

pytestmark = [
    pytest.mark.reference,
    pytest.mark.skipif(
        not PROMPTFOO.exists() or shutil.which("node") is None,
        reason="promptfoo's npm install (benchmarks/_model_eval.py) is not present",
    ),
]

TESTS: list[dict[str, Any]] = [
    {
        "vars": {"text": "Hello Paris, France", "city": "Paris"},
        "threshold": 0.5,
        "assert": [
            {"type": "contains", "value": "{{city}}", "weight": 2, "metric": "m"},
            {"type": "not-icontains", "value": "paris"},
            {"type": "levenshtein", "value": "Hello Paris", "threshold": 3},
            {"type": "python", "value": "len(output) / 100"},
            {
                "type": "assert-set",
                "threshold": 0.5,
                "metric": "s",
                "assert": [
                    {"type": "regex", "value": "^Hello"},
                    {"type": "rouge-n", "value": "Hello Paris"},
                ],
            },
        ],
    },
    {
        "vars": {"text": '{"name": "Ada", "langs": ["en", "fr"]} trailing words'},
        "assert": [
            {"type": "is-json"},
            {"type": "not-is-json"},
            {"type": "contains-json", "value": {"type": "object", "required": ["name"]}},
            {"type": "contains-any", "value": 'x, "Ada"'},
            {"type": "icontains-all", "value": ["ADA", "LANGS"]},
            {"type": "not-starts-with", "value": "{"},
            {"type": "bleu", "value": '{"name": "Ada"} trailing', "metric": "m"},
            {"type": "javascript", "value": "output.length > 10"},
            {"type": "javascript", "value": "output.split(' ').length / 10", "threshold": 0.5},
            {"type": "python", "value": "{'pass': True, 'score': 0.3, 'reason': 'x'}",
             "threshold": 0.5, "weight": 0},
        ],
    },
    {
        "vars": {"text": "The quick brown fox jumps over the lazy dog."},
        "assert": [
            {"type": "equals", "value": "The quick brown fox jumps over the lazy dog."},
            {"type": "not-equals", "value": "The quick brown fox"},
            {"type": "rouge-n", "value": "The quick brown fox jumped over the lazy dog.",
             "threshold": 0.9},
            {"type": "not-rouge-n", "value": "A slow red cat."},
            {"type": "not-bleu", "value": "The quick brown fox jumps over the lazy dog."},
            {"type": "contains-all", "value": "quick, lazy"},
            {"type": "not-contains-any", "value": ["cat", "mouse"]},
            {"type": "regex", "value": "(?<animal>fox|dog)"},
            {"type": "not-levenshtein", "value": "abc"},
        ],
    },
]  # fmt: skip


def promptfoo_results(folder: Path, tests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    config = {
        "description": "accord differential",
        "prompts": ["{{text}}"],
        "providers": [{"id": "echo"}],
        "tests": tests,
    }
    folder.mkdir()
    (folder / "promptfooconfig.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    env = {
        **os.environ,
        "PROMPTFOO_CONFIG_DIR": str(folder / ".promptfoo"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
    }
    done = subprocess.run(
        [str(PROMPTFOO), "eval", "-c", "promptfooconfig.yaml", "--no-cache",
         "--no-progress-bar", "--no-table", "-o", "pf.json", "-j", "1"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 100), done.stderr[-2000:]
    results = json.loads((folder / "pf.json").read_text())["results"]["results"]
    by_text = {r["vars"]["text"]: r["gradingResult"] for r in results}
    return [by_text[t["vars"]["text"]] for t in tests]


def flattened(findings: list[Finding]) -> list[tuple[bool | None, float | None]]:
    """Findings as promptfoo lists component results: a set, then its members."""
    out = []
    for found in findings:
        out.append((found.passed, found.score))
        out.extend((child.passed, child.score) for child in found.children)
    return out


def test_accord_scores_as_promptfoo_does(tmp_path: Path) -> None:
    theirs = promptfoo_results(tmp_path / "pf", TESTS)
    for test, grading in zip(TESTS, theirs, strict=True):
        ours = score(tmp_path, test["assert"], test["vars"]["text"], vars=test["vars"],
                     threshold=test.get("threshold"))  # fmt: skip
        expected = [(c["pass"], pytest.approx(c["score"])) for c in grading["componentResults"]]
        assert flattened(ours.findings) == expected, test["vars"]["text"]
        assert ours.test.passed == grading["pass"]
        assert ours.test.score == pytest.approx(grading["score"])
        named = {k: pytest.approx(v) for k, v in grading["namedScores"].items()}
        assert ours.test.metadata["namedScores"] == named


GRADED: list[dict[str, Any]] = [
    {
        "vars": {"text": "Paris is the capital of France, in Spain.",
                 "query": "What is the capital of France?",
                 "context": "Paris is the capital of France.\nIt has 2 million people.\nIt rains."},
        "assert": [
            {"type": "llm-rubric", "value": "RUBRIC-ONE mentions Paris"},
            {"type": "llm-rubric", "value": "RUBRIC-TWO is short", "threshold": 0.5},
            {"type": "factuality", "value": "IDEAL-ONE Paris"},
            {"type": "model-graded-closedqa", "value": "CRITERION-ONE names a city"},
            {"type": "context-recall", "value": "TRUTH-ONE Paris is the capital."},
            {"type": "context-relevance", "threshold": 0.5},
            {"type": "context-faithfulness", "threshold": 0.4},
            {"type": "similar", "value": "Paris is the capital of France", "threshold": 0.9},
            {"type": "not-similar", "value": "zzz qqq"},
            {"type": "answer-relevance", "threshold": 0.5},
        ],
    },
]  # fmt: skip


def judge(body: dict[str, Any]) -> Any:
    """The fake judge's reply, chosen by what both tools' prompts quote from the file."""
    from tests.fakes import Reply

    asked = json.dumps(body["messages"])
    replies = [
        ("RUBRIC-ONE", '{"reason": "names it", "pass": true, "score": 0.9}'),
        ("RUBRIC-TWO", '{"reason": "too long", "pass": true, "score": 0.3}'),
        ("IDEAL-ONE", '{"category": "D", "reason": "disagrees"}'),
        ("CRITERION-ONE", "It names Paris.\nY\nY"),
        ("TRUTH-ONE", "1. Paris is the capital. [Attributed]\n2. Other. [Not Attributed]"),
        ("Insufficient Information", "Paris is the capital of France."),
        ("Final verdict", "1. Verdict: Yes.\nFinal verdict for each statement in order: Yes. No."),
        ("statements", "Paris is the capital of France.\nParis is in Spain."),
    ]
    for key, text in replies:
        if key in asked:
            return Reply(text=text)
    return Reply(text="What is the capital city of France?")  # answer-relevance's question


def test_model_graded_assertions_score_as_promptfoo_does(tmp_path: Path, fake_llm: Any) -> None:
    from tests.frontends.promptfoo.asserts.harness import write_project

    fake_llm.responder = judge
    folder = tmp_path / "pf"
    grader = {
        "id": "openai:chat:fake-model",
        "config": {"apiBaseUrl": fake_llm.url, "apiKey": "test-key"},
    }
    embedder = {
        "id": "openai:embedding:fake-model",
        "config": {"apiBaseUrl": fake_llm.url, "apiKey": "test-key"},
    }
    options = {"provider": {"text": grader, "embedding": embedder}}
    theirs = promptfoo_results(folder, [{**t, "options": options} for t in GRADED])
    root = write_project(tmp_path, fake_llm, embedding=True)
    for test, grading in zip(GRADED, theirs, strict=True):
        ours = score(root, test["assert"], test["vars"]["text"], vars=test["vars"])
        got = [(f.passed, f.score, f.error) for f in ours.findings]
        expected = [
            (c["pass"], pytest.approx(c["score"]), None) for c in grading["componentResults"]
        ]
        assert got == expected
        assert ours.test.passed == grading["pass"]
        assert ours.test.score == pytest.approx(grading["score"])
