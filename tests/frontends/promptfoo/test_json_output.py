"""promptfoo's -o JSON file as promptfoo writes it (JSON.stringify(x, null, 2)): two-space
indentation, text outside ASCII kept as it is, whichever encoder wrote it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.evals.conftest import accord


def written(tmp_path: Path, tests: str, exit_code: int = 0) -> str:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "prompts: ['{{ text }} {{ n }}']\nproviders: [echo]\n"
        "defaultTest:\n  assert: [{type: icontains, value: 'ÉTÉ'}]\ntests:\n" + tests
    )
    run = accord("eval", config, "-o", tmp_path / "out.json", "--cache", "off")
    assert run.exit_code == exit_code, run.stderr
    return (tmp_path / "out.json").read_text(encoding="utf-8")


def test_the_json_file_is_laid_out_as_promptfoo_writes_it(tmp_path: Path) -> None:
    two = "  - vars: {text: été à Zürich, n: 1.5}\n  - vars: {text: x, n: []}\n"
    text = written(tmp_path, two, exit_code=1)  # the second case fails
    doc = json.loads(text)
    assert text == json.dumps(doc, indent=2, ensure_ascii=False)
    assert '\n  "results": {\n' in text and "été à Zürich 1.5" in text
    verdicts = [r["success"] for r in doc["results"]["results"]]
    assert sorted(verdicts) == [False, True] and doc["results"]["stats"]["successes"] == 1


def test_an_integer_beyond_64_bits_is_written_whole(tmp_path: Path) -> None:
    big = 2**70
    text = written(tmp_path, f"  - vars: {{text: été, n: {big}}}\n")
    doc = json.loads(text)
    assert text == json.dumps(doc, indent=2, ensure_ascii=False)
    (result,) = doc["results"]["results"]
    assert result["vars"]["n"] == big and result["response"]["output"] == f"été {big}"
