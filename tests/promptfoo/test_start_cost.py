"""A promptfoo config pays at start only for the assertions it uses: the JSON-schema and
Levenshtein libraries load when an `is-json` schema or a `levenshtein` is evaluated (B13 runs
accord on promptfoo's config against a 1.0 s target)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.evals.conftest import accord

# the whole `accord eval` in one fresh interpreter, then which libraries it loaded
PROGRAM = """
import sys
from accord.cli import main
try:
    main(["eval", "-c", "promptfooconfig.yaml", "-q", "--cache", "off"])
except SystemExit as exc:
    print("exit", exc.code)
print("loaded", sorted(m for m in ("jsonschema", "rapidfuzz") if m in sys.modules))
"""


def run_fresh(folder: Path) -> str:
    done = subprocess.run([sys.executable, "-c", PROGRAM], cwd=folder, capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip
    return done.stdout


def test_a_config_without_schemas_or_distances_does_not_load_their_libraries(
    tmp_path: Path,
) -> None:
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: ['{{x}}']\nproviders: [echo]\n"
        "tests:\n  - vars: {x: hello}\n    assert: [{type: contains, value: hell}]\n"
    )
    out = run_fresh(tmp_path)
    assert "exit 0" in out and "loaded []" in out, out


def test_schemas_and_distances_still_judge_when_used(tmp_path: Path) -> None:
    (tmp_path / "promptfooconfig.yaml").write_text("""
prompts: ['{{x}}']
providers: [echo]
tests:
  - vars: {x: '{"a": 1}'}
    assert:
      - {type: is-json, value: {type: object, required: [a]}}
      - {type: levenshtein, value: '{"a": 2}', threshold: 1}
  - vars: {x: '{"b": 1}'}
    assert:
      - {type: is-json, value: {type: object, required: [a]}}
  - vars: {x: 'abcdef'}
    assert:
      - {type: levenshtein, value: 'uvwxyz', threshold: 2}
""")
    out = run_fresh(tmp_path)
    assert "exit 1" in out and "loaded ['jsonschema', 'rapidfuzz']" in out, out
    run = accord("eval", tmp_path / "promptfooconfig.yaml", "-o", tmp_path / "out.json")
    assert run.exit_code == 1
    found = json.loads((tmp_path / "out.json").read_text())["results"]["results"]
    verdicts = {r["testIdx"]: r["success"] for r in found}
    assert verdicts == {0: True, 1: False, 2: False}
