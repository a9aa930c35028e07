"""The helpers of the Oxy tests: the corpus (shared/oxy-corpus, or ACCORD_OXY_CORPUS), the
skip where it is missing, our config for its examples, a writable copy of it, `accord` in
this process; and the project of an agent with its Oxy `.test.yml` on the fake server."""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from accord.cli import main
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply

REPO = Path(__file__).resolve().parents[3]
CORPUS = Path(os.environ.get("ACCORD_OXY_CORPUS", REPO.parent / "shared" / "oxy-corpus"))

needs_corpus = pytest.mark.skipif(
    not (CORPUS / "demo_project").is_dir(),
    reason=f"Oxy corpus not found at {CORPUS} (set ACCORD_OXY_CORPUS)",
)

OUR_EXAMPLES_CONFIG = """\
# accord's config for Oxy's examples: the BigQuery `primary_database` and the `local`
# database both become DuckDB over the CSV files in .db/.
databases:
  - name: primary_database
    type: duckdb
    dataset: .db
  - name: local
    type: duckdb
    dataset: .db
defaults:
  database: local
"""


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def document(self) -> dict[str, Any]:
        return json.loads(self.stdout)  # type: ignore[no-any-return]


def accord(*args: str | Path) -> Run:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)


def copy_writable(source: Path, target: Path) -> Path:
    """Copy a corpus folder; the corpus is read-only, the copy must not be."""
    shutil.copytree(source, target)
    for folder, _dirs, files in os.walk(target):
        os.chmod(folder, os.stat(folder).st_mode | stat.S_IWUSR)
        for name in files:
            path = os.path.join(folder, name)
            os.chmod(path, os.stat(path).st_mode | stat.S_IWUSR)
    return target


SUITE = """\
cases:
  - prompt: What were US sales?
    expected: "50"
    tool: execute_sql
  - name: eu
    prompt: What were EU sales?
    expected: "10"
"""


def invoke(*args: str | Path) -> Result:
    """`accord ARGS` in this process, its click result."""
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def project(tmp_path: Path, fake_llm: FakeOpenAI) -> Iterator[Path]:
    files = {
        "config.yml": "databases:\n  - name: local\n    type: duckdb\n    dataset: .db\n"
        "defaults:\n  database: local\n" + fake_model_config(fake_llm),
        ".db/sales.csv": "region,amount\nEU,10\nUS,50\n",
        "agents/sales.agent.yml": "model: fake\nvariables:\n  unit: dollars\n"
        "system_instructions: 'Analyst in {{ unit }}.'\n"
        "tools:\n  - type: execute_sql\n    database: local\n",
        "agents/sales.agent.test.yml": SUITE,
        "data/rows.test.yml": "- query: q\n  response: r\n",  # a dataset, not a suite
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    fake_llm.responder = respond
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(cwd)


def respond(body: dict[str, Any]) -> Reply:
    """The agent queries for US (a tool call), answers EU from memory; the judge compares."""
    messages = body["messages"]
    text = str(messages[-1].get("content") or "")
    if "Expected answer:" in text:
        expected = text.split("Expected answer:\n", 1)[1].split("\n", 1)[0].strip()
        given = text.split("Answer given:\n", 1)[1]
        return Reply(text="PASS" if expected in given else "FAIL")
    if messages[-1]["role"] == "tool":
        return Reply(text="US sales were 50.")
    if "US" in text:
        return Reply.tool("execute_sql", {"sql": "SELECT amount FROM sales WHERE region='US'"})
    unit = str(messages[0].get("content"))
    return Reply(text=f"EU sales were 10 ({unit}).")
