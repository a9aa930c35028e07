"""`accord runs compare` and the `--baseline` gate on runs that `accord eval` stored."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from tests.compare.harness import HOSTILE, suite, write
from tests.evals.conftest import accord


def test_compare_two_stored_runs_in_every_format(project: Callable[..., Path]) -> None:
    root = project({})
    file = write(root, suite(set(), first=HOSTILE))
    assert accord("eval", file, "-q").exit_code == 0
    write(root, suite({1, 2, 3, 4, 5, 6, 7}, first=HOSTILE))
    assert accord("eval", file, "-q").exit_code == 1
    where = ("--project", root)

    doc = accord("runs", "compare", "last~1", "last", "--format", "json", *where).doc()
    data = doc["suites"][0]
    rate = data["pass_rate"]
    # 7 of 8 cases went passed -> failed, none back: exact McNemar p = 2 / 2^7
    figures = (rate["before"], rate["after"], rate["regressed"], rate["improved"])
    assert figures == (1.0, 0.125, 7, 0)
    assert rate["p_value"] == 0.015625 and rate["significant"] is True
    # 7 score differences of -1 (ties, rank 4 each): W+ = 0, exact p = 2 / 2^7
    assert data["mean_score"]["p_value"] == 0.015625 and data["mean_score"]["test"] == (
        "wilcoxon-signed-rank"
    )
    flips = {f["case"]: f for f in data["flips"]}
    assert sorted(flips) == sorted([HOSTILE, *(f"c{i}" for i in range(2, 8))])
    assert flips[HOSTILE]["before"] == "passed" and flips[HOSTILE]["after"] == "failed"
    assert flips["c2"]["reasons"] == ["contains: 'ok' not found"]
    assert data["evaluators"][0]["name"] == "contains"
    assert doc["verdict"]["significant_regression"] is True

    pretty = accord("runs", "compare", "last~1", "last", *where)
    assert pretty.exit_code == 0  # a comparison alone is no verdict
    assert "pass rate 100.00% -> 12.50% (-87.50 pts; exact McNemar p=0.01562" in pretty.stdout
    assert "significant regression (alpha 0.05)" in pretty.stdout
    gated = accord("runs", "compare", "last~1", "last", "--fail-on-regression", "significant",
                   *where)  # fmt: skip
    assert gated.exit_code == 1
    lax = accord("runs", "compare", "last~1", "last", "--alpha", "0.01", "--fail-on-regression",
                 "significant", *where)  # fmt: skip
    assert lax.exit_code == 0  # p = 0.0156 is not below 0.01

    junit = ET.fromstring(
        accord("runs", "compare", "last~1", "last", "--format", "junit", *where).stdout
    )
    element = junit.find("testsuite")
    assert element is not None and element.get("tests") == "9" and element.get("failures") == "9"

    page = accord("runs", "compare", "last~1", "last", "--format", "html", *where).stdout
    assert "<img" not in page and "<script" not in page and "http" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "&quot;&gt;" in page


def test_a_results_file_is_a_baseline_and_a_side_of_compare(
    project: Callable[..., Path], tmp_path: Path
) -> None:
    root = project({})
    file = write(root, suite(set()))
    baseline = tmp_path / "main-results.json"
    accord("eval", file, "--format", "json", "--output", baseline)
    write(root, suite({8}, cases=9))
    accord("eval", file, "-q")
    doc = accord("runs", "compare", baseline, "last", "--format", "json", "--project", root).doc()
    assert doc["baseline"] == str(baseline)
    assert [f["case"] for f in doc["suites"][0]["flips"]] == ["c8"]
    assert doc["suites"][0]["added"] == ["c9"] and doc["suites"][0]["paired_cases"] == 8
    back = accord("runs", "compare", "last", baseline, "--project", root).stdout
    assert "removed: c9" in back and "c8: failed -> passed" in back
    assert doc["suites"][0]["pass_rate"]["p_value"] == 1.0  # 1 of 1 discordant: 2 * 1/2
    # a stored run and its own results file compare as equal (4 decimals both ways)
    same = accord("runs", "compare", baseline, baseline, "--format", "json").doc()
    assert same["suites"][0]["flips"] == [] and same["suites"][0]["score_changes"] == []


def test_the_gate_fails_on_a_significant_drop_and_says_which_cases(
    project: Callable[..., Path],
) -> None:
    root = project({})
    file = write(root, suite(set()))
    assert accord("eval", file, "-q", "--min-pass-rate", "0").exit_code == 0
    write(root, suite({8}))
    one = ("--min-pass-rate", "0", "-q", "--baseline", "last")
    # one flip: p = 1, not significant, but `any` fails on it
    assert accord("eval", file, *one, "--fail-on-regression", "significant").exit_code == 0
    # against the first run again (`last` is now the run just made, where c8 failed too)
    anyflip = accord("eval", file, *one[:-1], "last~1", "--fail-on-regression", "any")
    assert anyflip.exit_code == 1
    assert "c8: passed -> failed, score 1.0000 -> 0.0000 (contains: 'ok' not found)" in (
        anyflip.stderr
    )
    write(root, suite({2, 3, 4, 5, 6, 7, 8}))
    drop = accord("eval", file, "-q", "--min-pass-rate", "0", "--baseline", "last~2",
                  "--fail-on-regression", "significant")  # fmt: skip
    assert drop.exit_code == 1
    assert "regression against the baseline" in drop.stderr
    assert "suite stable: pass rate 100.00% -> 12.50%" in drop.stderr
    assert "c2: passed -> failed" in drop.stderr


def test_repeated_cases_pair_by_case_mean_and_say_so(project: Callable[..., Path]) -> None:
    root = project({})
    file = write(root, suite(set(), cases=4))
    accord("eval", file, "-q")
    accord("eval", file, "-q", "--repeat", "3")
    data = accord("runs", "compare", "last~1", "last", "--format", "json", "--project", root)
    compared = data.doc()["suites"][0]
    assert compared["repeats"] == {"baseline": 1, "current": 3}
    assert compared["paired_cases"] == 4  # cases, not 12 samples
    assert compared["pass_rate"]["test"] == "wilcoxon-signed-rank"
    assert "each case is compared by its mean over its samples" in compared["notes"][0]


def test_another_suite_or_no_common_case_is_refused(
    project: Callable[..., Path], tmp_path: Path
) -> None:
    root = project({})
    file = write(root, suite(set()))
    stable = tmp_path / "stable.json"
    accord("eval", file, "-q", "--format", "json", "--output", stable)
    other = root / "o.eval.yml"
    other.write_text(suite(set(), name="other"))
    refused = accord("eval", other, "-q", "--baseline", stable)
    assert refused.exit_code == 2
    assert "is not a run of the same suite: it holds suite(s) stable" in refused.stderr
    assert "this run holds other" in refused.stderr and "Traceback" not in refused.stderr
    # `last~N` counts only earlier runs of the suite being run: one of `other` so far
    first = accord("eval", other, "-q", "--baseline", "last~1")
    assert first.exit_code == 2 and "only 1 earlier run(s) of suite other" in first.stderr
    renamed = write(root, suite(set(), first="d1").replace('"c', '"d'))
    disjoint = accord("eval", renamed, "-q", "--baseline", "last")
    assert disjoint.exit_code == 2
    assert "no case in common" in disjoint.stderr and "baseline cases: c1, c2" in disjoint.stderr
    missing = accord("runs", "compare", tmp_path / "nope.json", "last", "--project", root)
    assert missing.exit_code == 2 and "no such results file" in missing.stderr
    (tmp_path / "bad.json").write_text("{")
    bad = accord("eval", file, "--baseline", tmp_path / "bad.json")
    assert bad.exit_code == 2 and "not JSON" in bad.stderr
    unknown = accord("runs", "compare", "zzz", "last", "--project", root)
    assert unknown.exit_code == 2 and "'zzz' is not a recorded run" in unknown.stderr


def test_a_case_whose_target_crashed_is_an_error_flip(project: Callable[..., Path]) -> None:
    agent = (
        "import json, sys\n"
        "case = json.load(sys.stdin)\n"
        "if 'crash' in case['input']:\n"
        "    sys.exit('exploded')\n"
        "print(json.dumps({'output': case['input']}))\n"
    )
    text = (
        f"name: crashy\ntarget: {{type: command, command: [{sys.executable!r}, agent.py]}}\n"
        "evaluators:\n  - {type: contains, value: ok}\ncases:\n"
        "  - {id: a, input: ok a}\n  - {id: b, input: INPUT}\n"
    )
    root = project({"agent.py": agent})
    file = root / "c.eval.yml"
    file.write_text(text.replace("INPUT", "ok b"))
    accord("eval", file, "-q")
    file.write_text(text.replace("INPUT", "ok crash"))
    gated = accord("eval", file, "-q", "--baseline", "last", "--fail-on-regression", "any")
    assert gated.exit_code == 1
    assert "b: passed -> error" in gated.stderr and "exploded" in gated.stderr
    doc = accord("runs", "compare", "last~1", "last", "--format", "json", "--project", root).doc()
    flips = doc["suites"][0]["flips"]
    assert [(f["case"], f["before"], f["after"]) for f in flips] == [("b", "passed", "error")]
    assert "exploded" in flips[0]["reasons"][0]
    # an error counts as not passed: one regression of one discordant pair
    assert doc["suites"][0]["pass_rate"]["regressed"] == 1


def test_last_as_a_baseline_of_several_suites_is_each_suites_last_run(
    project: Callable[..., Path],
) -> None:
    root = project({})
    first = write(root, suite(set(), cases=2))
    second = root / "t.eval.yml"
    second.write_text(suite(set(), cases=2, name="second"))
    accord("eval", first, second, "-q")
    second.write_text(suite({2}, cases=2, name="second"))
    run = accord("eval", first, second, "-q", "--min-pass-rate", "0", "--baseline", "last",
                 "--fail-on-regression", "any")  # fmt: skip
    assert run.exit_code == 1
    assert "suite stable: 2 paired case(s)" in run.stderr
    assert "suite second: 2 paired case(s)" in run.stderr
    assert "suite second: c2: passed -> failed" in run.stderr
