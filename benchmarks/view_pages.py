"""`accord view`'s pages as PNG screenshots, from a demo project it builds and runs.

The demo: an evaluation suite of 12 cases with a deterministic evaluator and an LLM judge
(the scripted fake model server of tests/fakes.py), run twice (the second run answers 4
cases worse); and a workflow with three SQL queries that run at once over a CSV, a
consistency run of five answers and a formatter. `accord view` is started on it and each page
is opened in headless Chromium (`--screenshot`); the PNGs go to docs/images/view/ (or the
folder given). docs/regressions.md shows them; tests/compare/test_view_pages.py runs the
same code into its tmp folder.

    .venv/bin/python benchmarks/view_pages.py [FOLDER]
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.bounds import PROCESS_SECONDS
from tests.compare.harness import start, stop
from tests.fakes import FakeOpenAI, Reply

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "images" / "view"
WORSE = {4, 8, 9, 11}  # cases the second run answers wrongly
CAPITALS = [
    ("France", "Paris"), ("Japan", "Tokyo"), ("Italy", "Rome"), ("Spain", "Madrid"),
    ("Kenya", "Nairobi"), ("Peru", "Lima"), ("Egypt", "Cairo"), ("Chile", "Santiago"),
    ("Norway", "Oslo"), ("Canada", "Ottawa"), ("Australia", "Canberra"), ("Ghana", "Accra"),
]  # fmt: skip
WRONG = {"Madrid": "Barcelona", "Santiago": "Valparaiso", "Oslo": "Bergen",
         "Canberra": "Sydney"}  # fmt: skip

SUITE = """name: capitals
target: fake
evaluators:
  - type: contains
    case_sensitive: false
  - type: llm_judge
    name: same_city
    prompt: |
      The expected answer is "{{ expected }}".
      The given answer is "{{ output }}".
      Is the given answer the same city as the expected answer?
    score_choices:
      - {name: "Yes", value: 1}
      - {name: "No", value: 0}
    threshold: {gte: 1}
cases:
"""

WORKFLOW = """name: users_report
tasks:
  - name: by_region
    type: execute_sql
    database: shop
    sql_query: >-
      SELECT region, count(*) AS users, sum(spend) AS spend
      FROM users GROUP BY 1 ORDER BY 1
  - name: top_spenders
    type: execute_sql
    database: shop
    sql_query: SELECT name, spend FROM users ORDER BY spend DESC LIMIT 3
  - name: totals
    type: execute_sql
    database: shop
    sql_query: SELECT count(*) AS users, sum(spend) AS spend FROM users
  - name: headline
    type: agent
    model: fake
    prompt: "How many users do we have? {{ totals }}"
    consistency_run: 5
  - name: report
    type: formatter
    template: >-
      {{ headline.value }} Regions: {{ by_region | length }};
      top: {{ top_spenders[0].name }}
"""


def _responder(wrong: set[str]) -> Any:
    answers = iter(["We have 12 users.", "There are 12 users.", "We have 10 users.",
                    "12 users in total.", "We have 12 users."])  # fmt: skip

    def respond(body: dict[str, Any]) -> Reply:
        text = str(body["messages"][-1]["content"])
        if "The expected answer is" in text:
            expected = re.search(r'expected answer is "([^"]*)"', text)
            given = re.search(r'given answer is "([^"]*)"', text)
            same = bool(expected and given and expected.group(1).lower() in given.group(1).lower())
            verdict = "Yes" if same else "No"
            reason = "Both name the same city." if same else "These are different cities."
            if body.get("tools"):
                return Reply.tool("select_answer", {"reason": reason, "answer": verdict})
            return Reply(text=f"{reason}\nAnswer: {verdict}")
        if "Answer 1:" in text:
            one = re.search(r"Answer 1:\n(.*)", text)
            two = re.search(r"Answer 2:\n(.*)", text)
            agree = bool(one and two) and re.findall(r"\d+", one.group(1)) == re.findall(
                r"\d+", two.group(1)
            )
            said = "Both give the same count." if agree else "The counts differ."
            return Reply(text=f"{said}\n{'A' if agree else 'B'}")
        if text.startswith("How many users"):
            return Reply(text=next(answers, "We have 12 users."))
        country = re.search(r"capital of (\w+)", text)
        city = dict(CAPITALS).get(country.group(1) if country else "", "unknown")
        return Reply(text=WRONG.get(city, city) if city in wrong else city)

    return respond


def build(root: Path, fake: FakeOpenAI) -> None:
    """The demo project in `root`, its suite run twice and its workflow once."""
    from click.testing import CliRunner

    from accord.cli import main

    root.mkdir(parents=True, exist_ok=True)
    (root / "data").mkdir(exist_ok=True)
    rows = ["name,region,spend"] + [
        f"user{i},{['North', 'South', 'East', 'West'][i % 4]},{10 * i + 5}" for i in range(12)
    ]
    (root / "data" / "users.csv").write_text("\n".join(rows) + "\n")
    (root / "config.yml").write_text(
        "models:\n  - name: fake\n    model: openai/fake-model\n"
        f"    api_base: {fake.url}\n    api_key: test-key\n"
        "databases:\n  - name: shop\n    type: duckdb\n    dataset: data\n"
        "defaults:\n  judge_model: fake\n"
    )
    europe = ("Paris", "Rome", "Madrid", "Oslo")
    cases = "".join(
        f"  - {{id: {country.lower()}, input: {json.dumps(f'What is the capital of {country}?')},"
        f" expected: {city}, tags: [{'europe' if city in europe else 'world'}]}}\n"
        for country, city in CAPITALS
    )
    suite = root / "capitals.eval.yml"
    suite.write_text(SUITE + cases)
    worse = {CAPITALS[i - 1][1] for i in WORSE}
    for wrong in (set(), worse):
        fake.responder = _responder(wrong)
        args = ["eval", str(suite), "-q", "--min-pass-rate", "0", "--cache", "off"]
        done = CliRunner().invoke(main, args)
        assert done.exit_code == 0, done.output
    (root / "users_report.workflow.yml").write_text(WORKFLOW)
    fake.responder = _responder(set())
    done = CliRunner().invoke(main, ["run", str(root / "users_report.workflow.yml"), "-q"])
    assert done.exit_code == 0, done.output


@contextmanager
def served(root: Path) -> Iterator[str]:
    proc, url = start(root)
    try:
        yield url
    finally:
        stop(proc)


def chromium(url: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", f"--user-data-dir={profile}", *args, url,
    ]  # fmt: skip
    return subprocess.run(
        command, capture_output=True, text=True, timeout=PROCESS_SECONDS, check=False
    )


def pages(url: str) -> dict[str, str]:
    """Each page's name and URL in the demo: the runs, a suite run, a case, a comparison,
    the workflow run."""
    with urllib.request.urlopen(url, timeout=30) as response:
        index = response.read().decode()
    runs = re.findall(r'href="/run\?id=([^"]+)"', index)
    workflow, newest, oldest = runs[0], runs[1], runs[2]
    return {
        "runs": url,
        "suite-run": f"{url}run?id={newest}",
        "suite-run-failed": f"{url}run?id={newest}&status=failed",
        "case": f"{url}case?run={newest}&case=spain",
        "compare": f"{url}compare?a={oldest}&b={newest}",
        "workflow-run": f"{url}run?id={workflow}",
    }


def screenshots(url: str, folder: Path, profile: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name, page in pages(url).items():
        target = folder / f"{name}.png"
        done = chromium(page, profile, f"--screenshot={target}", "--window-size=1200,1000")
        if done.returncode != 0 or not target.is_file():
            raise RuntimeError(f"no screenshot of {page}: {done.stderr[-1000:]}")
        out.append(target)
    return out


def main(folder: Path) -> None:
    import tempfile

    if not Path(CHROMIUM).is_file():
        sys.exit("chromium is missing (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        fake = FakeOpenAI()
        try:
            build(Path(tmp) / "demo", fake)
        finally:
            fake.close()
        with served(Path(tmp) / "demo") as url:
            for path in screenshots(url, folder, Path(tmp) / "profile"):
                print(f"{path} ({path.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DOCS)
