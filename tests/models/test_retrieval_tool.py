"""Oxy's `retrieval` agent tool through the real tool-calling and embedding paths: the fake
server embeds words (texts sharing words are near), the index is a DuckDB file under
.accord/retrieval/ built on first use and again when a document changes, and a replayed run
asks no server anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from accord.cli import main
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply, hashed_words

AGENT = """
model: fake
system_instructions: You answer from the project's documents.
tools:
  - name: docs
    type: retrieval
    src: [queries/*.sql, "notes/**/*.md", "notes/*.yml"]
    embed_model: text-embedding-3-small
    api_url: {url}
    key_var: EMBED_KEY
    top_k: 2
"""
FRUIT = """/*
oxy:
  embed: monthly fruit sales by region
  database: local
*/
select 'apple' as name, 325 as sales
"""
REFUNDS = "Refund policy for damaged bikes: refunded within 30 days.\n"
SHIPPING = "description: shipping times for orders abroad\n"
# Oxy's exclude: a text this near shrinks the match radius from 0.2 to 90% of its distance
EXCLUDE = "retrieval:\n  exclude: [shipping times for orders abroad today]\n"
TASK = "tasks:\n  - name: ask\n    type: agent\n    agent_ref: main.agent.yml\n    prompt: go\n"
QUESTIONS = [
    "fruit sales by region",
    "refund policy for damaged bikes within 30 days",
    "what is the weather tomorrow",
    "shipping times for orders abroad",
    "shipping times for orders abroad by sea",  # distance 0.155: within 0.2, not 0.078
]


def project(tmp_path: Path, fake: FakeOpenAI, src: str | None = None) -> Path:
    (tmp_path / "queries").mkdir()
    (tmp_path / "queries" / "fruit.sql").write_text(FRUIT)
    (tmp_path / "notes" / "policies").mkdir(parents=True)
    (tmp_path / "notes" / "policies" / "refunds.md").write_text(REFUNDS)
    (tmp_path / "notes" / "shipping.yml").write_text(SHIPPING + EXCLUDE)
    # the agent sends EMBED_KEY to the api_url it writes: a power of a file the user trusts
    (tmp_path / "config.yml").write_text(fake_model_config(fake) + "trusted: [main.agent.yml]\n")
    agent = AGENT.format(url=fake.url)
    if src is not None:
        agent = agent.replace('[queries/*.sql, "notes/**/*.md", "notes/*.yml"]', src)
    (tmp_path / "main.agent.yml").write_text(agent)
    path = tmp_path / "w.workflow.yml"
    path.write_text(TASK)
    return path


def ask(fake: FakeOpenAI, questions: list[str]) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        if done < len(questions):
            return Reply.tool("docs", {"query": questions[done]})
        return Reply(text="answered")

    fake.responder = respond


def tool_results(fake: FakeOpenAI) -> list[str]:
    """Every tool result of the conversation, as the model's last request carries them."""
    return [m["content"] for m in fake.requests[-1]["messages"] if m["role"] == "tool"]


def test_retrieval_answers_from_the_nearest_documents(
    tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMBED_KEY", "embed-secret")
    fake_llm.embed = hashed_words
    path = project(tmp_path, fake_llm)
    validated = CliRunner().invoke(main, ["validate", str(tmp_path / "main.agent.yml")])
    assert validated.exit_code == 0 and "not supported" not in validated.output
    ask(fake_llm, QUESTIONS)
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 0, result.output
    fruit, refunds, weather, shipping, by_sea = tool_results(fake_llm)
    assert fruit == f"--- queries/fruit.sql (sql::local)\n{FRUIT}"
    assert refunds == f"--- notes/policies/refunds.md (file)\n{REFUNDS}"
    assert weather == "no document matched the query"
    assert shipping == f"--- notes/shipping.yml (yaml)\n{SHIPPING}{EXCLUDE}"
    assert by_sea == "no document matched the query"  # kept out by the exclude text
    # Oxy's keys: the endpoint, the model, the key from key_var
    first = fake_llm.embedded[0]
    assert first["model"] == "text-embedding-3-small"
    assert sorted(first["input"]) == sorted(
        [
            "monthly fruit sales by region",
            REFUNDS,
            "shipping times for orders abroad",
            "shipping times for orders abroad today",
        ]
    )
    assert "Bearer embed-secret" in fake_llm.authorizations
    indexes = list((tmp_path / ".accord" / "retrieval").glob("docs-*.duckdb"))
    assert len(indexes) == 1
    built = len(fake_llm.embedded)
    assert built == 1 + len(QUESTIONS)  # the documents once, then each question

    # documents change: the index is built again, with the new text and without the exclude
    (tmp_path / "notes" / "policies" / "refunds.md").write_text("Bikes are never refunded.\n")
    (tmp_path / "notes" / "shipping.yml").write_text(SHIPPING)
    fake_llm.requests.clear()
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 0, result.output
    rebuilt = fake_llm.embedded[built:]
    assert [b["input"] for b in rebuilt if "Bikes are never refunded.\n" in b["input"]]
    second = tool_results(fake_llm)
    assert second[1] == "no document matched the query"
    assert second[4] == f"--- notes/shipping.yml (yaml)\n{SHIPPING}"

    # replayed: documents unchanged, every embedding and answer from the cache
    requests, embedded = len(fake_llm.requests), len(fake_llm.embedded)
    replay = CliRunner().invoke(main, ["run", str(path), "--cache", "replay"])
    assert replay.exit_code == 0, replay.output
    assert (len(fake_llm.requests), len(fake_llm.embedded)) == (requests, embedded)


def test_retrieval_sources_stay_inside_the_project(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    """A `src` leading out (`..`, or a match that is a link leading out) is refused when the
    agent file is loaded (F24): exit 2 at the line, no model asked, nothing embedded."""
    fake_llm.embed = hashed_words
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.md").write_text("the secret")
    root = tmp_path / "project"
    root.mkdir()
    path = project(root, fake_llm, src="[../outside/*.md]")
    (root / "queries" / "leak.sql").symlink_to(tmp_path / "outside" / "secret.md")
    ask(fake_llm, ["the secret"])
    result = CliRunner().invoke(main, ["run", str(path), "--cache", "off"], env={"EMBED_KEY": "k"})
    assert result.exit_code == 2, result.output
    assert (
        f"main.agent.yml:7:10 tools[0].src: retrieval src '../outside/*.md' leads outside the "
        f"project root {root} (with '..')"
    ) in result.stderr
    (root / "main.agent.yml").write_text(AGENT.format(url=fake_llm.url))
    result = CliRunner().invoke(main, ["run", str(path), "--cache", "off"], env={"EMBED_KEY": "k"})
    assert result.exit_code == 2, result.output
    assert (
        "main.agent.yml:7:10 tools[0].src: retrieval document 'queries/leak.sql' leads outside "
        "the project root"
    ) in result.stderr
    assert "the secret" not in result.output
    assert fake_llm.requests == [] and fake_llm.embedded == []


def test_validate_names_bad_retrieval_settings_at_their_lines(tmp_path: Path) -> None:
    (tmp_path / "config.yml").write_text("databases: []\n")
    agent = tmp_path / "docs.agent.yml"
    agent.write_text(
        "model: openai/gpt-4o-mini\ntools:\n  - name: docs\n    type: retrieval\n"
        "    src: 3\n    top_k: 0\n"
    )
    result = CliRunner().invoke(main, ["validate", str(agent)])
    assert result.exit_code == 2
    assert f"{agent}:5:10 tools[0].src: src must list file globs, e.g. [docs/*.md]" in (
        result.stderr
    )
    assert f"{agent}:6:12 tools[0].top_k: top_k must be a whole number of 1 or more" in (
        result.stderr
    )
