"""Registries: one mechanism for every closed set (task types, evaluators, databases,
report and export formats)."""

from __future__ import annotations

from pathlib import Path

import pytest

from accord.engine.errors import ConfigError
from accord.engine.kinds import TASK_TYPES
from accord.engine.registry import Namespace, Registry, RegistryError


def test_a_duplicate_name_is_an_error() -> None:
    registry: Registry[int] = Registry("widget", plugins=False)
    registry.add("a", 1)
    with pytest.raises(RegistryError, match="widget 'a' is registered twice"):
        registry.add("a", 2)


def test_a_missing_name_lists_the_known_ones() -> None:
    registry: Registry[int] = Registry("widget", plugins=False)
    registry.add("beta", 1)
    registry.add("alpha", 2)
    with pytest.raises(ConfigError, match=r"unknown widget 'gamma' \(known: alpha, beta\)"):
        registry.get("gamma")


def test_families_share_one_registry_each_under_its_own_names() -> None:
    registry: Registry[int] = Registry("check", plugins=False)
    mine: Namespace[int] = Namespace(registry, "mine", "my check", plugins=False)
    theirs: Namespace[int] = Namespace(
        registry, "theirs", "their check", plugins=False, lazy={"late": "math:pi"}
    )
    mine.add("contains", 1)
    theirs.add("contains", 2)
    assert registry.names() == ["mine/contains", "theirs/contains"]
    assert (mine.get("contains"), theirs.get("contains")) == (1, 2)
    assert "late" not in mine and "late" in theirs  # a lazy member is imported when asked for
    assert registry.names()[-1] == "theirs/late"
    with pytest.raises(ConfigError, match=r"unknown my check 'contain'; did you mean 'contains'"):
        mine.get("contain")
    with pytest.raises(RegistryError, match="check 'mine/contains' is registered twice"):
        mine.add("contains", 3)


def test_a_lazy_member_is_loaded_again_after_a_test_s_block() -> None:
    registry: Registry[float] = Registry("check", plugins=False)
    family: Namespace[float] = Namespace(
        registry, "f", "check", plugins=False, lazy={"e": "math:e"}
    )
    with family.restored():
        assert family.get("e") > 2.7
    assert registry.names() == [] and family.names() == ["e"]


def test_a_test_s_members_are_forgotten_after_its_block() -> None:
    before = TASK_TYPES.names()
    formatter = TASK_TYPES.get("formatter")
    with TASK_TYPES.restored():
        TASK_TYPES.add("extra_for_test", formatter)
        assert "extra_for_test" in TASK_TYPES
    assert TASK_TYPES.names() == before


def test_the_builtin_members_are_registered() -> None:
    from accord.engine.databases import DATABASES
    from accord.engine.export import EXPORT_FORMATS
    from accord.tasks.evaluators import EVALUATORS
    from accord.tasks.suites.reports.formats import REPORT_FORMATS

    assert {"agent", "execute_sql", "formatter", "loop_sequential"} <= set(TASK_TYPES)
    assert {
        "equals", "is_json", "contains_all", "assertions", "contains", "contains_any",
        "not_contains", "regex", "json_schema", "numeric", "tool_calls", "llm_judge",
        "accuracy", "nsfw", "toxicity", "correctness", "relevance", "safety", "similarity",
        "battle", "context_precision", "context_recall", "context_entities_recall",
        "noise_sensitivity", "response_relevancy", "faithfulness", "factual_correctness",
        "semantic_similarity",
    } == set(EVALUATORS)  # fmt: skip
    assert {"duckdb", "sqlite", "postgres", "bigquery"} <= set(DATABASES)
    assert set(EXPORT_FORMATS) == {"csv", "json", "sql", "txt", "md", "docx"}
    assert set(REPORT_FORMATS) == {"pretty", "json", "junit", "html"}


def test_a_misspelt_name_in_a_file_names_the_closest_and_the_known_ones(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from accord.cli import main

    wf = tmp_path / "w.workflow.yml"
    wf.write_text(
        "tasks:\n  - name: a\n    type: formatter\n    template: hi\n"
        "    export: {path: out.csv, format: cvs}\n"
    )
    result = CliRunner().invoke(main, ["validate", str(wf)])
    assert result.exit_code == 2
    assert (
        f"{wf}:5:37 tasks[0].export.format: unknown export format 'cvs'; did you mean 'csv'? "
        "(known: csv, docx, json, md, sql, txt)" in result.stderr
    )


def test_accord_test_offers_every_registered_report_format() -> None:
    from click.testing import CliRunner

    from accord.cli import main

    result = CliRunner().invoke(main, ["test", "--help"])
    assert "[pretty|json|junit|html]" in result.output
