"""promptfoo's own example configs (tests/data/promptfoo-examples, copied unchanged from its
repository) load in accord, and score in accord as in promptfoo 0.118: the same verdict,
score, named scores, reason and output in every (test, prompt) cell.

OpenAI providers and the grader are pointed at one fake OpenAI server on loopback
(`OPENAI_BASE_URL` for both tools; config.yml's judge and embedding model for accord, whose
grader is the project's). Without node and promptfoo the comparison is skipped (see
test_differential.py); the loading check runs everywhere.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply
from tests.promptfoo.test_differential import PROMPTFOO, run_promptfoo

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "promptfoo-examples"
NAMES = sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir())
needs_promptfoo = pytest.mark.skipif(
    shutil.which("node") is None or not PROMPTFOO.exists(),
    reason=f"needs node and promptfoo 0.118 installed at {PROMPTFOO}",
)


def answer(body: dict[str, Any]) -> Reply:
    """A grader's request gets a passing verdict; any other a pirate's echo of the prompt."""
    text = " ".join(str(m.get("content")) for m in body.get("messages") or [])
    if "rubric" in text.lower():
        return Reply(text='{"reason": "looks fine", "pass": true, "score": 1.0}')
    return Reply(text=f"Ahoy, arrr matey! bonjour {text[-40:]}")


def copy(name: str, tmp_path: Path, fake: FakeOpenAI) -> Path:
    folder = tmp_path / name
    shutil.copytree(EXAMPLES / name, folder)
    (folder / "config.yml").write_text(f"""models:
  - {{name: grader, model: openai/gpt-4.1-2025-04-14, api_base: '{fake.url}', api_key: k}}
  - {{name: embedder, model: openai/text-embedding-3-large, api_base: '{fake.url}', api_key: k}}
defaults: {{judge_model: grader, embedding_model: embedder}}
""")
    return folder


def cells(path: Path) -> dict[tuple[int, int], tuple[Any, ...]]:
    results = json.loads(path.read_text())["results"]["results"]
    return {
        (r["testIdx"], r["promptIdx"]): (
            r["success"], round(r["score"], 6),
            {k: round(v, 6) for k, v in r["namedScores"].items()},
            (r["gradingResult"] or {}).get("reason"), r["response"]["output"],
        )
        for r in results
    }  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_each_example_validates(
    name: str, tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = copy(name, tmp_path, fake_llm)
    monkeypatch.chdir(folder)
    run = accord("validate", "promptfooconfig.yaml")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert "promptfoo suite" in run.stdout


# the ones that show most: echo and assertions in both languages; a CSV of prompts; $ref,
# YAML 1.2 scalars and model-graded assertions on the fake server; CSV tests with
# `__expected` and `.length` in a template
@needs_promptfoo
@pytest.mark.parametrize("name", ["echo-simple", "csv-prompts", "simple-test", "simple-csv"])
def test_an_example_scores_as_promptfoo_scores_it(
    name: str, tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm.responder = answer
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    folder = copy(name, tmp_path, fake_llm)
    run_promptfoo(folder, "promptfoo.json")
    monkeypatch.chdir(folder)
    run = accord("eval", "-c", "promptfooconfig.yaml", "-o", "accord.json", "-q", "--cache", "off")
    assert run.exit_code in (0, 1), run.stderr
    theirs, mine = cells(folder / "promptfoo.json"), cells(folder / "accord.json")
    assert theirs, "promptfoo ran no test"
    assert mine == theirs
