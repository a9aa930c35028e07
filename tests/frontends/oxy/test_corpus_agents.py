"""Oxy's example procedures that use agents (shared/oxy-corpus/examples), run unchanged.

The corpus README: "Those with agents must validate, and must run against a scripted model."
examples/ is copied to `tmp_path` with a config.yml of ours: `primary_database` and `local`
become DuckDB over `.db/`, `domo` stays a domo database, and every model name the corpus
agents use points at the scripted OpenAI-compatible server (tests/fakes.py). Each procedure
then runs as it is with `accord run <file> --format json`.

The scripted analyst answers from what it is sent (the sales table in the prompt, a tool's
result), so the assertions check that the rendered prompts, system instructions and tool
results reached the model, and that its answers came back into the outputs, the formatters
and the exports. Procedures that cannot run on DuckDB are asserted to fail with their exact
message.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docx
import duckdb
import pytest
import yaml
from click.testing import CliRunner

from accord.cli import main
from tests.fakes import FakeOpenAI, Reply
from tests.frontends.oxy.harness import copy_writable

REPO = Path(__file__).resolve().parents[3]
CORPUS = Path(os.environ.get("ACCORD_OXY_CORPUS", REPO.parent / "shared" / "oxy-corpus"))
EXAMPLES = CORPUS / "examples"

pytestmark = pytest.mark.skipif(
    not (EXAMPLES / "procedures").is_dir(),
    reason=f"Oxy corpus not found at {CORPUS} (set ACCORD_OXY_CORPUS)",
)


def agent_models() -> list[str]:
    """Every model name an agent of the corpus uses."""
    names: set[str] = set()
    for path in sorted((EXAMPLES / "agents").glob("*.agent.yml")):
        model = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("model")
        if model:
            names.add(str(model))
    return sorted(names)


def our_config(fake: FakeOpenAI) -> str:
    """config.yml: DuckDB for the SQL, the fake server for every model the agents name."""
    lines = [
        "# accord's config for Oxy's examples, with a scripted model behind every name.",
        "databases:",
        "  - name: primary_database",
        "    type: duckdb",
        "    dataset: .db",
        "  - name: local",
        "    type: duckdb",
        "    dataset: .db",
        "  - name: domo",
        "    type: domo",
        "    dataset_id: 6ecc3faa-9368-4711-a1ad-b14dca55db53",
        "    developer_token_var: DOMO_DEVELOPER_TOKEN",
        "    instance: hyperquery-ai",
        "models:",
    ]
    for name in agent_models():
        lines += [
            f"  - name: {name}",
            f"    model: openai/fake-{name}",
            f"    api_base: {fake.url}",
            "    api_key: test",
            "    max_retries: 0",
        ]
    lines += ["defaults:", "  database: local", "  agent: agents/default.agent.yml"]
    return "\n".join(lines) + "\n"


# --- running accord -------------------------------------------------------------------------


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def document(self) -> dict[str, Any]:
        return json.loads(self.stdout)  # type: ignore[no-any-return]

    @property
    def error_line(self) -> str:
        """The last `error:` line on stderr (the one a user reads)."""
        return [line for line in self.stderr.splitlines() if line.startswith("error: ")][-1]

    def task(self, key: str) -> dict[str, Any]:
        return next(t for t in self.document["tasks"] if t["task"] == key)


def accord(*args: str | Path) -> Run:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)


def run_procedure(project: Path, name: str, *extra: str) -> Run:
    return accord("run", project / "procedures" / name, "--format", "json", *extra)


def duckdb_rows(project: Path, sql: str) -> list[dict[str, Any]]:
    """`sql` run by DuckDB itself over the project's .db/ folder, as JSON outputs show it."""
    conn = duckdb.connect()
    try:
        conn.execute(f"SET file_search_path = '{project / '.db'}'")
        cursor = conn.execute(sql)
        columns = [d[0] for d in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    finally:
        conn.close()


def sql_file_rows(project: Path, relative: str) -> list[dict[str, Any]]:
    return duckdb_rows(project, (project / relative).read_text(encoding="utf-8"))


def docx_paragraphs(path: Path) -> list[tuple[str, str]]:
    """(style, text) of each paragraph of a Word document."""
    paragraphs = docx.Document(str(path)).paragraphs
    return [(p.style.name if p.style is not None else "", p.text) for p in paragraphs]


# --- the scripted analyst -------------------------------------------------------------------

GROUPING_SQL = (
    "SELECT content_type, COUNT(*) AS contents\n"
    "FROM content_level_monthly_stats_fruits_veggies.csv\n"
    "WHERE property_grouping = '{{grouping_value}}'\n"
    "GROUP BY content_type\n"
    "ORDER BY content_type"
)
USERS_SQL = "SELECT COUNT(*) AS users FROM users.csv"
ANALYST_NOTE = "I am a personal assistant: ask me about the figures you have."


def markdown_rows(text: str) -> list[dict[str, str]]:
    """The first Markdown table in `text`, as rows of strings."""
    lines = [line.strip() for line in text.splitlines()]
    for index, line in enumerate(lines):
        if line.startswith("|") and index + 1 < len(lines) and lines[index + 1].startswith("|--"):
            header = [c.strip() for c in line.strip("|").split("|")]
            rows = []
            for body in lines[index + 2 :]:
                if not body.startswith("|"):
                    break
                cells = [c.strip() for c in body.strip("|").split("|")]
                rows.append(dict(zip(header, cells, strict=True)))
            return rows
    return []


def fruit_summary(fruit: str, sales: list[dict[str, str]]) -> str:
    ranked = sorted(sales, key=lambda r: -int(r["sales"]))
    rank = [r["name"] for r in ranked].index(fruit) + 1
    units = next(r["sales"] for r in sales if r["name"] == fruit)
    return f"{fruit.capitalize()} sold {units} units, rank {rank} of {len(sales)}."


def judge_reply(prompt: str) -> str:
    """Reasoning, then the verdict alone on the last line: A when the counts agree."""
    first = prompt.split("Answer 1:", 1)[1].split("Answer 2:", 1)[0]
    second = prompt.split("Answer 2:", 1)[1]
    second = second.split("Treat these as CONSISTENT", 1)[0]
    numbers = (re.findall(r"\d+", first), re.findall(r"\d+", second))
    if numbers[0] == numbers[1]:
        return f"Both answers give the same count ({', '.join(numbers[0])}).\nA"
    return f"The counts differ ({numbers[0]} against {numbers[1]}).\nB"


@dataclass
class Analyst:
    """Answers each request from its content; every request kind it knows is scripted here."""

    barrier: int = 0  # hold fruit-summary calls until this many have started
    hold: float = 0.3  # seconds each held call stays in flight after the barrier opens
    lock: threading.Condition = field(default_factory=threading.Condition)
    started: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    user_answers: int = 0
    unscripted: list[str] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        tool_results = [m["content"] for m in messages if m["role"] == "tool"]
        if "Answer 1:" in prompt and "Answer 2:" in prompt:
            return Reply(text=judge_reply(prompt))
        if prompt.startswith("Generate a SQL to support property grouping"):
            if not tool_results:
                return Reply.tool("validate_sql", {"sql": GROUPING_SQL})
            return Reply(text=GROUPING_SQL if tool_results[-1] == "valid" else "no valid SQL")
        if prompt.startswith("Generate a report for "):
            grouping = prompt.removeprefix("Generate a report for ").split(".", 1)[0]
            counts = {r["content_type"]: r["contents"] for r in markdown_rows(prompt)}
            parts = ", ".join(f"{k} {v}" for k, v in counts.items())
            return Reply(text=f"{grouping} report: {parts}.")
        if prompt.startswith("Using the sales data below"):
            fruit = re.search(r"for (\w+) only", prompt)
            assert fruit is not None
            self._hold()
            return Reply(text=fruit_summary(fruit.group(1), markdown_rows(prompt)))
        if prompt.startswith("Tell me the different between "):
            fruit = prompt.removeprefix("Tell me the different between ").split(" ", 1)[0]
            calories = re.search(r"Given the calories: (\[.*\])", prompt)
            assert calories is not None
            return Reply(
                text=fruit_summary(fruit, markdown_rows(prompt)) + f" Calories: {calories[1]}."
            )
        if prompt.startswith("Generate a report on active users"):
            rows = markdown_rows(prompt)
            total = sum(int(r["users"]) for r in rows)
            platforms = ", ".join(f"{r['platform']} {r['users']}" for r in rows)
            return Reply(
                text=f"Total active users: {total}\nActive users by organization: {platforms}\n"
                "Analysis: activity levels as given."
            )
        if prompt.startswith('Generate "Responses to the survey by Company"'):
            # anon.agent.yml maps organization -> company and total_response -> feedback: the
            # model sees only those, and answers in them
            [row] = markdown_rows(prompt)
            return Reply(
                text=f"Total responses: {row['feedback']}\n"
                f"Company: {row['companies']}\n"
                f"Analysis: {row['total_positive']} positive, {row['total_negative']} negative."
            )
        if prompt.startswith("Generate a detail "):  # survey_responses, per schedule and metric
            return Reply(text=f"Detail report over {len(markdown_rows(prompt))} rows.")
        if prompt == "What is the sales data for each fruit?":
            return Reply(text=ANALYST_NOTE)
        if prompt.strip() == "how many users?":
            if not tool_results:
                return Reply.tool("execute_sql", {"sql": USERS_SQL})
            [row] = markdown_rows(tool_results[-1])
            with self.lock:
                self.user_answers += 1
                odd_one = self.user_answers == 5
            count = int(row["users"]) + (1 if odd_one else 0)
            return Reply(text=f"There are {count} users.")
        self.unscripted.append(prompt)
        return Reply.error(400, f"unscripted prompt: {prompt[:80]!r}")

    def _hold(self) -> None:
        if not self.barrier:
            return
        with self.lock:
            self.started += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.lock.notify_all()
            self.lock.wait_for(lambda: self.started >= self.barrier, timeout=20)
        threading.Event().wait(self.hold)
        with self.lock:
            self.in_flight -= 1


@dataclass
class Request:
    model: str
    system: str | None
    prompt: str
    tools: list[str]
    tool_results: list[str]


def requests(fake: FakeOpenAI) -> list[Request]:
    out = []
    for body in list(fake.requests):
        messages = body["messages"]
        system = next((m["content"] for m in messages if m["role"] == "system"), None)
        out.append(
            Request(
                model=body["model"],
                system=system,
                prompt=next(m["content"] for m in messages if m["role"] == "user"),
                tools=[t["function"]["name"] for t in body.get("tools") or []],
                tool_results=[m["content"] for m in messages if m["role"] == "tool"],
            )
        )
    return out


@pytest.fixture
def analyst(fake_llm: FakeOpenAI) -> Iterator[Analyst]:
    scripted = Analyst()
    fake_llm.responder = scripted
    yield scripted
    assert scripted.unscripted == [], "the model was sent prompts nobody scripted"


@pytest.fixture
def project(tmp_path: Path, fake_llm: FakeOpenAI) -> Path:
    """A copy of examples/ whose config.yml is ours."""
    root = copy_writable(EXAMPLES, tmp_path / "examples")
    (root / "config.yml").write_text(our_config(fake_llm), encoding="utf-8")
    return root


LOCAL_INSTRUCTIONS = (
    "You are an Data Analyst expert.\n"
    "Your task is to help the user generate report given the input.\n"
    "ONLY use the provided data from user's input.\n"
    "Follow best practices to generate the report.\n"
)
SALES_SQL = "data_fruit/example_sales.sql"


def sales_table(project: Path) -> str:
    """The fruit sales as a prompt shows them."""
    rows = sql_file_rows(project, SALES_SQL)
    return "| name | sales |\n|---|---|\n" + "".join(
        f"| {r['name']} | {r['sales']} |\n" for r in rows
    )


# --- the config -----------------------------------------------------------------------------


def test_config_names_every_model_the_agents_use(fake_llm: FakeOpenAI) -> None:
    names = agent_models()
    assert {
        "openai-4o-mini",
        "gpt-5-mini-2025-08-07",
        "openai-4.1",
        "openai-5.2",
        "claude-sonnet-4-6",
        "claude-3-7-sonnet",
        "gemini1.5pro",
    } <= set(names)
    config = yaml.safe_load(our_config(fake_llm))
    assert [m["name"] for m in config["models"]] == names
    assert {m["model"] for m in config["models"]} == {f"openai/fake-{n}" for n in names}


AGENT_PROCEDURES = {
    "active_users.procedure.yml",
    "anonymize.procedure.yml",
    "cache.procedure.yml",
    "consistency.procedure.yml",
    "domo.workflow.yml",
    "export.procedure.yml",
    "fruit_loop_report.procedure.yml",
    "fruit_sales_analyst.procedure.yml",
    "fruit_sales_report.procedure.yml",
    "fruit_summary.procedure.yml",
    "subworkflow_example.procedure.yml",
    "survey_responses.procedure.yml",
}
REJECTED_AT_VALIDATION = {"export.procedure.yml"}


def _uses_agent(spec: dict[str, Any]) -> bool:
    text = json.dumps(spec)
    return '"type": "agent"' in text or '"type": "workflow"' in text


def test_every_agent_procedure_is_covered() -> None:
    found = {
        p.name
        for p in (EXAMPLES / "procedures").glob("*.yml")
        if _uses_agent(yaml.safe_load(p.read_text(encoding="utf-8")))
    }
    assert found == AGENT_PROCEDURES


@pytest.mark.parametrize("name", sorted(AGENT_PROCEDURES - REJECTED_AT_VALIDATION))
def test_agent_procedure_validates_with_our_config(project: Path, name: str) -> None:
    run = accord("validate", project / "procedures" / name)
    assert run.exit_code == 0, run.stderr
    assert run.stdout.startswith("ok: ")


# --- procedures that run --------------------------------------------------------------------


def test_fruit_sales_report(project: Path, analyst: Analyst, fake_llm: FakeOpenAI) -> None:
    run = run_procedure(project, "fruit_sales_report.procedure.yml")
    assert run.exit_code == 0, run.stderr
    outputs = run.document["outputs"]
    assert outputs["query_data"] == sql_file_rows(project, SALES_SQL)
    sales = markdown_rows(sales_table(project))
    assert outputs["report"] == (
        fruit_summary("apple", sales) + " Calories: [80, 105, 50, 42, 62, 102]."
    )
    [request] = requests(fake_llm)
    assert request.model == "fake-claude-sonnet-4-6"  # agents/local.agent.yml
    assert request.system == LOCAL_INSTRUCTIONS
    assert request.prompt == (
        "Tell me the different between apple and the other fruits.\n"
        "Given the calories: [80, 105, 50, 42, 62, 102]\n"
        "Given the sales data:\n" + sales_table(project)
    )
    assert request.tools == []
    assert run.task("report")["usage"]["calls"] == 1

    # The typed variables take values from the command line.
    fake_llm.requests.clear()
    again = run_procedure(project, "fruit_sales_report.procedure.yml", "-v", "fruit=kiwi")
    assert again.exit_code == 0, again.stderr
    assert again.document["outputs"]["report"].startswith(fruit_summary("kiwi", sales))
    wrong = run_procedure(project, "fruit_sales_report.procedure.yml", "-v", "fruit=mango")
    assert wrong.exit_code == 2
    assert "variable 'fruit': 'mango' is not one of" in wrong.stderr


def test_fruit_summary(project: Path, analyst: Analyst, fake_llm: FakeOpenAI) -> None:
    run = run_procedure(project, "fruit_summary.procedure.yml", "-v", "fruit=cherry")
    assert run.exit_code == 0, run.stderr
    outputs = run.document["outputs"]
    assert outputs["query_all_sales"] == sql_file_rows(project, SALES_SQL)
    assert outputs["summary"] == "Cherry sold 18 units, rank 5 of 5."
    [request] = requests(fake_llm)
    assert request.prompt == (
        "Using the sales data below, write a short 2–3 sentence summary\n"
        "for cherry only. Include total sales and rank\n"
        "compared to the other fruits.\n\n"
        "Sales data:\n" + sales_table(project)
    )


FRUITS = ["apple", "banana", "cherry", "orange", "kiwi"]


def test_fruit_loop_report(project: Path, analyst: Analyst, fake_llm: FakeOpenAI) -> None:
    """Five sub-workflows, four at a time, then a Word report of their summaries."""
    analyst.barrier = 4
    run = run_procedure(project, "fruit_loop_report.procedure.yml")
    assert run.exit_code == 0, run.stderr
    document = run.document
    iterations = document["outputs"]["per_fruit"]
    assert [item["value"] for item in iterations] == FRUITS
    expected_sales = sql_file_rows(project, SALES_SQL)
    sales = markdown_rows(sales_table(project))
    summaries = [fruit_summary(fruit, sales) for fruit in FRUITS]
    for item, summary in zip(iterations, summaries, strict=True):
        assert item["summary"]["query_all_sales"] == expected_sales
        assert item["summary"]["summary"] == summary
    # concurrency: 4 -- four summaries were in flight together, never five
    assert analyst.max_in_flight == 4
    prompts = sorted(r.prompt for r in requests(fake_llm))
    assert prompts == sorted(
        "Using the sales data below, write a short 2–3 sentence summary\n"
        f"for {fruit} only. Include total sales and rank\n"
        "compared to the other fruits.\n\nSales data:\n" + sales_table(project)
        for fruit in FRUITS
    )
    assert {r.model for r in requests(fake_llm)} == {"fake-claude-sonnet-4-6"}

    report = document["outputs"]["final_report"]
    assert report.startswith("# Fruit Sales Report\n")
    assert [line for line in report.splitlines() if line.startswith("## ")] == [
        f"## {s}" for s in summaries
    ]
    paragraphs = docx_paragraphs(project / "output/fruit_loop_report.docx")
    assert paragraphs[0] == ("Heading 1", "Fruit Sales Report")
    assert [text for style, text in paragraphs if style == "Heading 2"] == summaries


def test_subworkflow_example(project: Path, analyst: Analyst, fake_llm: FakeOpenAI) -> None:
    """A child workflow called with an enum string and an array of numbers."""
    run = run_procedure(project, "subworkflow_example.procedure.yml")
    assert run.exit_code == 0, run.stderr
    outputs = run.document["outputs"]
    [picked] = outputs["random_fruit"]
    fruit = picked["fruit"]
    assert fruit in {"apple", "orange", "banana", "kiwi"}
    calories = sql_file_rows(project, "data_fruit/example_food_calories.sql")
    assert outputs["calories"] == calories
    numbers = [row["calories"] for row in calories]
    assert numbers == [80, 106, 50, 42, 62, 102]
    child = outputs["subworkflow"]
    assert set(child) == {"query_data", "report"}
    assert child["query_data"] == sql_file_rows(project, SALES_SQL)
    sales = markdown_rows(sales_table(project))
    assert child["report"] == fruit_summary(fruit, sales) + f" Calories: {numbers}."
    [request] = requests(fake_llm)
    # the child's `calories: {type: array, items: {type: number}}` got numbers, not text
    assert request.prompt == (
        f"Tell me the different between {fruit} and the other fruits.\n"
        f"Given the calories: {numbers}\n"
        "Given the sales data:\n" + sales_table(project)
    )
    assert outputs["report"] == f"Sales report for {[fruit]}:\n{child['report']}\n"


def test_active_users(project: Path, analyst: Analyst, fake_llm: FakeOpenAI) -> None:
    run = run_procedure(
        project, "active_users.procedure.yml", "-v", "month=Jan", "-v", "platform=iOS"
    )
    assert run.exit_code == 0, run.stderr
    outputs = run.document["outputs"]
    expected = duckdb_rows(
        project,
        "SELECT * FROM monthly_active_user_by_platform.csv "
        "WHERE month = 'Jan' AND platform = 'iOS'",
    )
    assert (
        outputs["query_data"] == expected == [{"month": "Jan", "platform": "iOS", "users": 220000}]
    )
    assert outputs["report"] == (
        "Total active users: 220000\nActive users by organization: iOS 220000\n"
        "Analysis: activity levels as given."
    )
    [request] = requests(fake_llm)
    assert (
        "[BEGIN DATA]\n| month | platform | users |\n|---|---|---|\n| Jan | iOS | 220000 |\n"
        "[END DATA]"
    ) in request.prompt
    assert request.system == LOCAL_INSTRUCTIONS


def test_anonymize(project: Path, analyst: Analyst, fake_llm: FakeOpenAI) -> None:
    run = run_procedure(project, "anonymize.procedure.yml")
    assert run.exit_code == 0, run.stderr
    outputs = run.document["outputs"]
    assert outputs["execute"] == sql_file_rows(project, "data/example_anonymize.sql")
    assert outputs["report"] == (
        "Total responses: 10\nOrganization: oxy\nAnalysis: 5 positive, 5 negative."
    )
    [request] = requests(fake_llm)
    assert request.model == "fake-openai-4o-mini"  # agents/anon.agent.yml
    assert request.system == LOCAL_INSTRUCTIONS  # anon.agent.yml has the same text
    assert (
        "[BEGIN DATA]\n"
        "| companies | feedback | total_positive | total_negative | total_neutral |\n"
        "|---|---|---|---|---|\n"
        "| oxy | 10 | 5 | 5 | 0 |\n"
        "[END DATA]"
    ) in request.prompt
    sent = json.dumps(fake_llm.requests).lower()
    assert "organization" not in sent and "total_response" not in sent


def test_fruit_sales_analyst(project: Path, analyst: Analyst, fake_llm: FakeOpenAI) -> None:
    run = run_procedure(project, "fruit_sales_analyst.procedure.yml")
    assert run.exit_code == 0, run.stderr
    outputs = run.document["outputs"]
    assert outputs["query_data"] == sql_file_rows(project, SALES_SQL)
    assert outputs["answer_question"] == ANALYST_NOTE
    [request] = requests(fake_llm)
    assert request.model == "fake-openai-4o-mini"  # agents/default_gpt.agent.yml
    assert request.system == "You are a personal assistant.\n"
    assert request.prompt == "What is the sales data for each fruit?"


# --- consistency and the pinned cache -------------------------------------------------------


def test_consistency(project: Path, analyst: Analyst, fake_llm: FakeOpenAI) -> None:
    """Five runs of agents/default.agent.yml, each querying DuckDB through its tool; the
    fifth answer disagrees, one judge call settles it."""
    run = run_procedure(project, "consistency.procedure.yml")
    assert run.exit_code == 0, run.stderr
    outputs = run.document["outputs"]
    assert outputs["execute"] == sql_file_rows(project, "data/example_anonymize.sql")
    [users] = duckdb_rows(project, USERS_SQL)
    majority = f"There are {users['users']} users."
    report = outputs["report"]
    assert report["value"] == majority
    assert report["score"] == 0.75
    assert report["judge_calls"] == 1
    assert sorted(r["output"] for r in report["runs"]) == sorted(
        [majority] * 4 + [f"There are {users['users'] + 1} users."]
    )
    assert outputs["formatter"] == (
        f"# Debugging\nRow-based report:\n{majority}\n\nConsistency score:\n0.75\n"
    )

    sent = requests(fake_llm)
    asks = [r for r in sent if r.prompt == "how many users?\n"]
    judges = [r for r in sent if "Answer 1:" in r.prompt]
    assert len(asks) == 10 and len(judges) == 1  # a tool call and an answer per run
    for ask in asks:
        assert ask.model == "fake-gpt-5-mini-2025-08-07"
        assert ask.system is not None
        assert "**Dialect: duckdb**" in ask.system  # databases.primary_database.dialect
        assert "user_name" in ask.system  # the DDL of primary_database
        assert {"execute_sql", "fruit_sales_report"} <= set(ask.tools)
    answered = [a for a in asks if a.tool_results]
    assert len(answered) == 5
    for ask in answered:
        assert ask.tool_results == [f"| users |\n|---|\n| {users['users']} |"]
    [judge] = judges
    assert judge.model == "fake-gpt-5-mini-2025-08-07"
    assert "how many users?" in judge.prompt
    assert majority in judge.prompt


@pytest.mark.slow
def test_cache_pins_the_generated_sql(
    project: Path, analyst: Analyst, fake_llm: FakeOpenAI
) -> None:
    """The SQL agent writes a query with a `{{grouping_value}}` placeholder; it is pinned in
    output/cache/ and reused; each grouping's report is pinned too."""
    run = run_procedure(project, "cache.procedure.yml", "--cache", "off")
    assert run.exit_code == 0, run.stderr
    outputs = run.document["outputs"]
    assert outputs["sql"] == GROUPING_SQL
    groupings = ["Fruit", "Vegetable"]
    assert outputs["property_grouping"] == sql_file_rows(
        project, "data_fruit/example_property_grouping.sql"
    )
    assert [item["value"] for item in outputs["groupings"]] == groupings
    reports = []
    for item in outputs["groupings"]:
        # execute_sql's second render pass filled the placeholder the agent wrote
        expected = duckdb_rows(project, GROUPING_SQL.replace("{{grouping_value}}", item["value"]))
        assert expected and item["execute_sql"] == expected
        parts = ", ".join(f"{r['content_type']} {r['contents']}" for r in expected)
        reports.append(f"{item['value']} report: {parts}.")
        assert item["report"] == reports[-1]
    for grouping, report in zip(groupings, reports, strict=True):
        assert (
            f"-- Property Grouping: {grouping} --\n{report}\n"
            f"-- End of Property Grouping: {grouping} --"
        ) in outputs["grouping_reports"]

    sent = requests(fake_llm)
    sql_requests = [r for r in sent if r.prompt.startswith("Generate a SQL")]
    assert [r.tool_results for r in sql_requests] == [[], ["valid"]]
    for request in sql_requests:
        assert request.model == "fake-openai-4o-mini"  # agents/sql.agent.yml
        assert request.prompt == (
            "Generate a SQL to support property grouping report generation.\n"
            "Use the {{grouping_value}} as a parameter.\n"
        )
        assert request.tools == ["validate_sql"]
        assert request.system is not None
        # the semantic_model context: data/anon_youtube.schema.yml on the `local` database
        assert "**Tables:** content_level_monthly_stats_fruits_veggies.csv" in request.system
        assert "**Dialect:** duckdb" in request.system
        assert "property_grouping" in request.system
    assert len(sent) == 4  # two for the SQL, one report per grouping

    cache = project / "output/cache"
    assert (cache / "groupings_query.sql").read_text(encoding="utf-8") == GROUPING_SQL
    for grouping, report in zip(groupings, reports, strict=True):
        path = cache / f"groupings_{grouping}_report.json"
        assert path.read_text(encoding="utf-8") == report

    # Second run, the call cache off: every agent answer comes from output/cache/.
    fake_llm.requests.clear()
    second = run_procedure(project, "cache.procedure.yml", "--cache", "off")
    assert second.exit_code == 0, second.stderr
    assert fake_llm.requests == []
    assert second.document["outputs"] == outputs

    # A hand edit of the pinned SQL is kept; the reports over the new data run again.
    edited = GROUPING_SQL.replace("COUNT(*)", "COUNT(DISTINCT content_id)")
    (cache / "groupings_query.sql").write_text(edited, encoding="utf-8")
    third = run_procedure(project, "cache.procedure.yml", "--cache", "off")
    assert third.exit_code == 0, third.stderr
    assert third.document["outputs"]["sql"] == edited
    sent = requests(fake_llm)
    assert not [r for r in sent if r.prompt.startswith("Generate a SQL")]
    assert len([r for r in sent if r.prompt.startswith("Generate a report for ")]) == 2
    for item in third.document["outputs"]["groupings"]:
        expected = duckdb_rows(project, edited.replace("{{grouping_value}}", item["value"]))
        assert item["execute_sql"] == expected


# --- procedures that cannot run on DuckDB ----------------------------------------------------


def test_survey_responses_fails_on_bigquery_sql(
    project: Path, analyst: Analyst, fake_llm: FakeOpenAI
) -> None:
    """data/example_weekly_responses.sql is BigQuery SQL over a BigQuery table."""
    run = run_procedure(project, "survey_responses.procedure.yml")
    assert run.exit_code == 1
    task = "schedules[1].metrics[0].table"
    message = (
        "database 'primary_database': Catalog Error: Table with name "
        "df-warehouse-prod.dbt_prod_core.fct_typeform_responses does not exist!"
    )
    error = run.document["error"]
    assert error["task"] == task
    assert error["message"].startswith(message + "\n")
    # DuckDB's own pointer into the file: the table is on line 6 (DuckDB 1.x counted it as 5)
    line = 5 if duckdb.__version__.startswith("1.") else 6
    assert (
        f"LINE {line}:   `df-warehouse-prod.dbt_prod_core.fct_typeform_responses`"
        in error["message"]
    )
    assert run.error_line == f"error: task '{task}': {message}"
    assert run.task(task)["status"] == "failed"
    assert run.document["outputs"]["intervals"] == sql_file_rows(
        project, "data/example_intervals.sql"
    )
    # the weekly responses report never reached the model
    assert not [r for r in requests(fake_llm) if "weekly report using responses" in r.prompt]


def test_domo_workflow_fails_on_the_domo_database(
    project: Path, analyst: Analyst, fake_llm: FakeOpenAI
) -> None:
    run = accord("run", project / "procedures/domo.workflow.yml", "--format", "json")
    assert run.exit_code == 1
    message = (
        "database 'domo' is of type domo, which accord cannot connect to: map it to a duckdb, "
        "sqlite or postgres database in config.yml"
    )
    assert run.document["error"] == {"task": "marketing_data", "message": message}
    assert run.error_line == f"error: task 'marketing_data': {message}"
    assert fake_llm.requests == []


def test_export_validates_naming_the_unknown_name_and_stops_where_it_renders(
    project: Path, fake_llm: FakeOpenAI
) -> None:
    """Oxy renders the prompt's unknown `{{table}}` as empty and its validate passes: accord's
    validate passes too and names it at its line; the run stops at the task rendering it."""
    path = project / "procedures/export.procedure.yml"
    run = accord("validate", path)
    assert run.exit_code == 0, run.stderr
    assert run.stderr.splitlines() == [
        f"unsupported: {path}:45:21 tasks[3].tasks[0].tasks[0].prompt: unknown name 'table': "
        "Oxy renders it as empty; accord stops this task when it renders it; did you mean "
        "'value'?"
    ]
    assert run.stdout.startswith(f"ok: {path} (")
    run = run_procedure(project, "export.procedure.yml")
    assert run.exit_code == 1
    task = "schedules[0].metrics[0].report"
    message = "undefined name: 'table' is undefined"
    assert run.document["error"] == {"task": task, "message": message}
    assert run.error_line == f"error: task '{task}': {message}"
