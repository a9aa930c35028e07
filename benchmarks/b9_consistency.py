"""B9: judge calls saved by clustering and the pre-judge, for consistency_run: 10.

Three fixtures of ten answers each run through a real workflow (`consistency_run: 10`, the
built-in prompt, the tolerant pre-judge) against the scripted fake model; the judge answers by
a fixed rule. The selected answer is compared with the all-pairs computation (45 judged
pairs, no clustering, no pre-judge). Targets: 0, <= 3 and <= 45 judge calls.

    .venv/bin/python benchmarks/b9_consistency.py
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from click.testing import CliRunner

from accord.cli import main
from tests.fakes import FakeOpenAI, Reply

FIXTURES: dict[str, tuple[list[str], int]] = {
    "all identical after normalisation": (
        ["Total revenue was $1,081,396."] * 4
        + ["total revenue was $1,081,396"] * 3
        + ["Total   revenue was $1,081,396. "] * 3,
        0,
    ),
    "three clusters": (
        ["Total revenue was $1,081,396.", "Total revenue was $1,081,395.67."] * 2
        + ["Total revenue was $950,000.", "Total revenue was $950,000.40."] * 2
        + ["Total revenue was $700,000.", "Total revenue was $700,000.00."],
        3,
    ),
    "ten distinct": (
        [
            "Revenue grew in the North, led by laptops.",
            "The North region grew fastest; laptops sold best.",
            "Laptops drove growth, mostly in the North.",
            "Growth came from the South and from monitors.",
            "Monitors in the South were the main driver.",
            "The West declined while the North grew.",
            "Sales were flat everywhere.",
            "Most growth: North region, laptop sales.",
            "The East grew thanks to headsets.",
            "North up, thanks to laptops; others flat.",
        ],
        45,
    ),
}


def judge_rule(first: str, second: str) -> bool:
    """The scripted judge: consistent when both name the same region and the same number
    (numbers rounded to the nearest 1,000)."""

    def facts(text: str) -> tuple[set[str], set[int]]:
        regions = set(re.findall(r"North|South|East|West|flat", text))
        numbers = {round(float(n.replace(",", "")) / 1000) for n in re.findall(r"[\d,.]+\d", text)}
        return regions, numbers

    return facts(first) == facts(second)


def all_pairs_selection(answers: list[str]) -> int:
    wins = [0] * len(answers)
    for i, j in itertools.combinations(range(len(answers)), 2):
        if judge_rule(answers[i], answers[j]):
            wins[i] += 1
            wins[j] += 1
    return max(range(len(answers)), key=lambda i: (wins[i], -i))


def run_fixture(answers: list[str]) -> dict[str, Any]:
    fake = FakeOpenAI()
    queue = list(answers)

    def respond(body: dict[str, Any]) -> Reply:
        text = body["messages"][-1]["content"]
        if "Answer 1:" in text:
            first = text.split("Answer 1:")[1].split("Answer 2:")[0].strip()
            second = text.split("Answer 2:")[1].split("Treat these")[0].strip()
            return Reply(text="Compared.\n" + ("A" if judge_rule(first, second) else "B"))
        return Reply(text=queue.pop(0))

    fake.responder = respond
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "config.yml").write_text(
            f"models:\n  - name: fake\n    model: openai/fake\n    api_base: {fake.url}\n"
            "    api_key: test\n"
        )
        (root / "b9.workflow.yml").write_text(
            "tasks:\n  - name: revenue\n    type: agent\n    model: fake\n"
            "    prompt: What was total revenue?\n    consistency_run: 10\n"
        )
        result = CliRunner().invoke(
            main,
            [
                "run",
                str(root / "b9.workflow.yml"),
                "--format",
                "json",
                "--cache",
                "off",
                "--max-concurrency",
                "1",
            ],
        )
    fake.close()
    if result.exit_code != 0:
        raise SystemExit(f"run failed: {result.output}")
    return json.loads(result.stdout)["outputs"]["revenue"]  # type: ignore[no-any-return]


def main_() -> None:
    print("B9 consistency_run: 10, judge calls against 45 for all pairs")
    ok = True
    for name, (answers, target) in FIXTURES.items():
        report = run_fixture(answers)
        same = report["selected"] == all_pairs_selection(answers)
        met = report["judge_calls"] <= target and same
        ok = ok and met
        print(
            f"  {name:36s} judge calls {report['judge_calls']:2d} (target <= {target}), "
            f"pre-judged pairs {report['pairs_prejudged']:2d}, same selection as all pairs: "
            f"{'yes' if same else 'NO'}  {'met' if met else 'MISSED'}"
        )
    print("all targets met" if ok else "a target was missed")


if __name__ == "__main__":
    main_()
