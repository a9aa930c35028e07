"""An AgentV `cli` target whose placeholder sits inside the user's own quotes: the test data
(from the YAML, a JSONL line, an inlined file block) reaches the program as its exact text and
never runs as shell code; a placeholder inside single quotes is refused at load."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import trusted
from tests.evals.conftest import accord

ATTACK = "a'$(touch pwned)'\"$(touch pwned2)\"`touch pwned3`"
QUESTION = "What's the capital of France?"

# the agent records the argument it was given and answers with it
AGENT = """
import json, sys
with open("seen.jsonl", "a") as log:
    log.write(json.dumps(sys.argv[1]) + "\\n")
with open(sys.argv[2], "w") as out:
    json.dump({"text": sys.argv[1]}, out)
"""


def project(tmp_path: Path, template: str) -> Path:
    (tmp_path / "config.yml").write_text("models: []\n")
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n"
        "  - name: default\n"
        "    provider: cli\n"
        f"    command_template: {json.dumps(template)}\n"
    )
    return tmp_path


def seen(root: Path) -> list[str]:
    return [json.loads(line) for line in (root / "seen.jsonl").read_text().splitlines()]


def no_file_created(root: Path) -> None:
    for name in ("pwned", "pwned2", "pwned3"):
        assert not (root / name).exists()


EVAL = """
execution:
  evaluators:
    - {name: said, type: contains, value: "capital"}
tests:
  - id: yaml-input
    criteria: answers
    input: %s
  - id: question
    criteria: answers
    input: %s
  - id: file-block
    criteria: answers
    input:
      - role: user
        content:
          - {type: file, value: attack.txt}
"""


@pytest.mark.parametrize(
    "template", [f'{sys.executable} agent.py "{{PROMPT}}" {{OUTPUT_FILE}}',
                 f"{sys.executable} agent.py {{PROMPT}} '{{OUTPUT_FILE}}'"],
)  # fmt: skip
def test_values_reach_the_program_as_text(tmp_path: Path, template: str) -> None:
    root = project(tmp_path, template)
    (root / "attack.txt").write_text(ATTACK + "\n")
    (root / "suite.yaml").write_text(EVAL % (json.dumps(ATTACK), json.dumps(QUESTION)))
    result = accord("eval", root / "suite.yaml", "--output", root / "out.jsonl")
    assert result.exit_code == 1, result.stderr  # the attack's answer lacks "capital"
    no_file_created(root)
    given = seen(root)
    assert ATTACK in given and QUESTION in given
    assert f'<file path="attack.txt">\n{ATTACK}\n</file>' in given
    records = {
        r["test_id"]: r for r in map(json.loads, (root / "out.jsonl").read_text().split("\n")[:-1])
    }
    assert records["question"]["score"] == 1.0


def test_jsonl_line(tmp_path: Path) -> None:
    root = project(tmp_path, f'{sys.executable} agent.py "--prompt={{PROMPT}}" {{OUTPUT_FILE}}')
    (root / "data.jsonl").write_text(
        json.dumps({"id": "one", "criteria": "x", "input": ATTACK}) + "\n"
    )
    (root / "data.yaml").write_text(
        "execution:\n  evaluators:\n    - {name: said, type: contains, value: touch}\n"
    )
    result = accord("eval", root / "data.jsonl")
    assert result.exit_code == 0, result.stderr
    no_file_created(root)
    assert seen(root) == [f"--prompt={ATTACK}"]


@pytest.mark.parametrize("placeholder", ["{PROMPT}", "{FILES}", "{EVAL_ID}", "{GUIDELINES}"])
def test_data_inside_single_quotes_is_refused_at_load(tmp_path: Path, placeholder: str) -> None:
    root = project(tmp_path, f"sh -c 'echo {placeholder} > {{OUTPUT_FILE}}'")
    (root / "suite.yaml").write_text(EVAL % (json.dumps(ATTACK), json.dumps(QUESTION)))
    (root / "attack.txt").write_text(ATTACK)
    result = accord("eval", root / "suite.yaml")
    assert result.exit_code == 2
    assert "targets.yaml:4:" in result.stderr  # the command_template line
    assert f"{placeholder} sits inside single quotes" in result.stderr
    # the fix named is a script file reading the variable, never double quotes (which
    # splice the value into the script of `sh -c "..."`: F18)
    assert "double quotes" not in result.stderr
    assert f'reads "$AGENTV_{placeholder[1:-1]}" from its environment' in result.stderr
    assert "Traceback" not in result.stderr
    assert not (root / "seen.jsonl").exists()
    no_file_created(root)


def test_a_nested_script_reads_the_variable(tmp_path: Path) -> None:
    """A script for another shell reads "$AGENTV_PROMPT" (`sh -c` with code written in the
    file: the user trusts targets.yaml)."""
    root = project(tmp_path, "sh -c 'printf %s \"$AGENTV_PROMPT\" > {OUTPUT_FILE}'")
    trusted(root / ".agentv" / "targets.yaml")
    (root / "suite.yaml").write_text(EVAL % (json.dumps(ATTACK), json.dumps(QUESTION)))
    (root / "attack.txt").write_text(ATTACK)
    result = accord("eval", root / "suite.yaml", "--output", root / "out.jsonl")
    assert result.exit_code == 1, result.stderr
    no_file_created(root)
    records = {
        r["test_id"]: r for r in map(json.loads, (root / "out.jsonl").read_text().split("\n")[:-1])
    }
    assert records["question"]["score"] == 1.0 and records["yaml-input"]["score"] == 0.0


def test_files_are_one_argument_each(tmp_path: Path) -> None:
    """{FILES} unquoted: each input file one argument, whatever its name holds."""
    recorder = (
        "import json, sys\njson.dump({'text': json.dumps(sys.argv[2:])}, open(sys.argv[1], 'w'))\n"
    )
    root = project(tmp_path, f"{sys.executable} record.py {{OUTPUT_FILE}} {{FILES}}")
    (root / "record.py").write_text(recorder)
    odd = "it's $(touch pwned) a b.md"
    (root / odd).write_text("one")
    (root / "plain.md").write_text("two")
    (root / "suite.yaml").write_text(
        "execution:\n  evaluators:\n    - {name: said, type: contains, value: plain}\n"
        "tests:\n  - id: files\n    criteria: c\n    input:\n      - role: user\n        content:\n"
        f"          - {{type: file, value: {json.dumps(odd)}}}\n"
        "          - {type: file, value: plain.md}\n"
    )
    result = accord("eval", root / "suite.yaml", "--format", "json")
    assert result.exit_code == 0, result.stderr
    (case,) = result.suite()["cases"]
    assert json.loads(case["output"]) == [str(root / odd), str(root / "plain.md")]
    no_file_created(root)
