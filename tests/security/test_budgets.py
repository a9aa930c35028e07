"""Expansion budgets (engine/budget.py): a few lines that stand for far more than they hold
(promptfoo `$ref`s doubling 40 times, vars lists multiplying to 64 million tests, scenario
rows times tests, YAML aliases) are refused by `accord validate` at once: exit 2, the file,
the line and the size in the message, no traceback, before the memory grows."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.evals.conftest import Run, accord

QUICK = 3.0  # seconds; the refusal takes well under one


def _validate(root: Path, name: str, text: str) -> tuple[Run, float]:
    (root / "config.yml").write_text("defaults: {}\n")
    (root / name).write_text(text)
    started = time.monotonic()
    run = accord("validate", root / name)
    return run, time.monotonic() - started


def _refused(run: Run, took: float, name: str, *words: str) -> None:
    assert took < QUICK, took
    assert run.exit_code == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
    assert f"{name}:" in run.stderr, run.stderr
    for word in words:
        assert word in run.stderr, run.stderr


def test_ref_doubling_is_refused_at_once(tmp_path: Path) -> None:
    lines = ["prompts: ['hi']", "providers: [echo]", "defs:", "  l0: {type: contains, value: hi}"]
    lines += [f"  l{i}: [{{$ref: '#/defs/l{i - 1}'}}, {{$ref: '#/defs/l{i - 1}'}}]"
              for i in range(1, 40)]  # fmt: skip
    lines += ["tests:", "  - assert: {$ref: '#/defs/l39'}"]
    run, took = _validate(tmp_path, "promptfooconfig.yaml", "\n".join(lines) + "\n")
    _refused(run, took, "promptfooconfig.yaml", "$ref references expand to more than 100,000")


def test_refs_within_the_budget_still_expand(tmp_path: Path) -> None:
    lines = ["prompts: ['hi']", "providers: [echo]", "defs:", "  l0: {type: contains, value: hi}",
             "  m0: {a: 1}"]  # fmt: skip
    lines += [f"  m{i}: {{a: {{$ref: '#/defs/m{i - 1}'}}, b: {{$ref: '#/defs/m{i - 1}'}}}}"
              for i in range(1, 10)]  # fmt: skip
    lines += ["tests:", "  - assert: [{$ref: '#/defs/l0'}]", "    metadata: {$ref: '#/defs/m9'}"]
    run, _took = _validate(tmp_path, "promptfooconfig.yaml", "\n".join(lines) + "\n")
    assert run.exit_code == 0, run.stderr


def _vars_config(keys: int, values: int) -> str:
    lists = "\n".join(
        f"      v{k}: [{', '.join(f'x{k}_{i}' for i in range(values))}]" for k in range(keys)
    )
    return (
        "prompts: ['{{v0}}']\nproviders: [echo]\ntests:\n  - vars:\n"
        f"{lists}\n    assert: [{{type: contains, value: x}}]\n"
    )


def test_var_lists_multiplying_past_the_budget_are_refused(tmp_path: Path) -> None:
    run, took = _validate(tmp_path, "promptfooconfig.yaml", _vars_config(6, 20))
    _refused(run, took, "promptfooconfig.yaml:5", "64,000,000 tests", "20 values of 'v0'",
             "at most 1,000,000")  # fmt: skip


def test_var_lists_count_the_prompt_and_provider_pairs(tmp_path: Path) -> None:
    # 10^5 combinations are within the budget, but each runs on 4 x 3 prompt x provider pairs
    text = _vars_config(5, 10).replace("providers: [echo]", "providers: [echo, echo, echo]")
    prompts = ", ".join(f"'{i} {{{{v0}}}}'" for i in range(4))
    text = text.replace("prompts: ['{{v0}}']", f"prompts: [{prompts}]")
    run, took = _validate(tmp_path, "promptfooconfig.yaml", text)
    _refused(run, took, "promptfooconfig.yaml", "1,200,000 tests", "12 prompt x provider pairs")


def test_scenario_rows_times_tests_past_the_budget_are_refused(tmp_path: Path) -> None:
    rows = ", ".join(f"{{vars: {{a: r{i}}}}}" for i in range(1100))
    tests = ", ".join(f"{{vars: {{b: t{i}}}}}" for i in range(1000))
    text = (
        "prompts: ['{{a}} {{b}}']\nproviders: [echo]\n"
        f"scenarios:\n  - config: [{rows}]\n    tests: [{tests}]\n"
    )
    run, took = _validate(tmp_path, "promptfooconfig.yaml", text)
    _refused(run, took, "promptfooconfig.yaml:4", "1,100,000 tests", "1,100 config rows")


def test_yaml_aliases_are_refused_with_the_shared_budget(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1},"
              f" *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 9)]  # fmt: skip
    run, took = _validate(tmp_path, "bomb.eval.yml", "\n".join(lines) + "\n")
    _refused(run, took, "bomb.eval.yml", "aliases expand to more than 100,000 values")


def _eval(root: Path, name: str, text: str) -> tuple[Run, float]:
    (root / "config.yml").write_text("defaults: {}\n")
    (root / name).write_text(text)
    started = time.monotonic()
    run = accord("eval", root / name, "-q", "--cache", "off")
    return run, time.monotonic() - started


def test_repeats_count_against_the_budget_of_runs(tmp_path: Path) -> None:
    # 1,001 cases x repeat 1,000 (the most an .eval.yml allows) = 1,001,000 runs: refused
    # before the first case, as every expansion past 1,000,000 tests is
    cases = "\n".join(f"  - {{id: c{i}, input: hi, expected: hi}}" for i in range(1001))
    text = (
        f"name: r\ntarget: echo\nrepeat: 1000\nevaluators: [{{type: contains}}]\ncases:\n{cases}\n"
    )
    run, took = _eval(tmp_path, "r.eval.yml", text)
    assert took < 30, took
    assert run.exit_code == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
    assert "1,001,000 tests" in run.stderr and "r.eval.yml" in run.stderr, run.stderr
    assert "1,001 cases x 1,000 repeats" in run.stderr, run.stderr


def test_promptfoo_repeat_counts_against_the_budget_of_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # promptfoo takes evaluateOptions.repeat from the working folder's config
    (tmp_path / "config.yml").write_text("defaults: {}\n")
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: ['hi']\nproviders: [echo]\nevaluateOptions: {repeat: 600000}\n"
        "tests:\n  - assert: [{type: contains, value: hi}]\n"
        "  - assert: [{type: contains, value: hi}]\n"
    )
    monkeypatch.chdir(tmp_path)
    started = time.monotonic()
    run = accord("eval", "-c", "promptfooconfig.yaml", "-q", "--cache", "off")
    assert time.monotonic() - started < 30
    assert run.exit_code == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
    assert "1,200,000 tests" in run.stderr and "2 cases x 600,000 repeats" in run.stderr


def test_repeats_within_the_budget_run(tmp_path: Path) -> None:
    text = "name: r\ntarget: echo\nrepeat: 3\nevaluators: [{type: contains}]\n" + (
        "cases: [{id: a, input: hi, expected: hi}]\n"
    )
    run, _took = _eval(tmp_path, "r.eval.yml", text)
    assert run.exit_code == 0, run.stderr
