"""`accord test` on Oxy's own files (shared/oxy-corpus), unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.commands.conftest import accord_test
from tests.frontends.oxy.harness import CORPUS, OUR_EXAMPLES_CONFIG, copy_writable

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no Oxy corpus at {CORPUS}")


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    project = copy_writable(CORPUS / "examples", tmp_path / "examples")
    (project / "config.yml").write_text(OUR_EXAMPLES_CONFIG, encoding="utf-8")
    return project


def test_oxy_procedure_test_runs_without_a_model(examples: Path) -> None:
    # table_values.automation.yml: `tests: [{name: consistency, type: consistency, ...}]`,
    # no task_ref (the last task, a formatter over SQL), n defaults to 10
    workflow = examples / "procedures" / "table_values.automation.yml"
    run = accord_test(workflow, "--format", "json", "--min-accuracy", "1.0")
    assert run.exit_code == 0, run.stderr
    assert run.doc["accuracy"] == 1.0 and run.doc["accuracy_n"] == 45
    assert run.doc["summary"]["model_calls"] == 0 and run.doc["summary"]["judge_calls"] == 0
    assert not (examples / "output" / "formatter.docx").exists()  # tests write no exports


def test_oxys_custom_dataset_is_recognised(examples: Path) -> None:
    run = accord_test(examples / "data" / "custom_test.test.yml")
    assert run.exit_code == 2
    assert "a dataset for a custom test" in run.stderr
