"""AgentV `cli` targets as AgentV 4a86b769 runs them (providers/cli.ts, targets.ts):
`{FILES}` with the guideline files, `files_format`, `workspace_template`, cwd from the eval
file's folder, healthchecks; a key accord does not implement is an error at its line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI
from tests.frontends.agentv.v2.conftest import run, write

# prints its arguments after --prompt, and its working folder's files, as the answer
AGENT = """
import json, os, sys
args = sys.argv[1:]
out = args[args.index("--output") + 1]
answer = {"args": [os.path.basename(a) if os.path.isabs(a) else a for a in args[:-2]],
          "files": sorted(f for f in os.listdir(".") if not f.startswith("."))}
open(out, "w").write(json.dumps({"text": json.dumps(answer)}))
"""


def cli_targets(folder: Path, extra: str) -> None:
    (folder / "agent.py").write_text(AGENT)
    (folder / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: cli\n"
        f"    command_template: {sys.executable} {folder / 'agent.py'} {{FILES}}"
        " --output {OUTPUT_FILE}\n" + extra
    )


FILES_TEST = """tests:
  - id: t
    criteria: Reads both files
    input:
      - role: user
        content:
          - {type: file, value: style.instructions.md}
          - {type: file, value: invoice.txt}
          - {type: text, value: Summarise}
    execution:
      evaluators:
        - {name: args, type: equals, value: 'ARGS'}
"""


def test_files_holds_input_and_guideline_files_by_files_format(
    folder: Path, fake_llm: FakeOpenAI
) -> None:
    cli_targets(folder, "    files_format: --file {path}\n")
    (folder / "evals").mkdir()
    (folder / "evals" / "style.instructions.md").write_text("Be brief.")
    (folder / "evals" / "invoice.txt").write_text("Total: 5")
    expected = {"args": ["--file", "style.instructions.md", "--file", "invoice.txt"],
                "files": ["dataset.yaml", "invoice.txt", "style.instructions.md"]}  # fmt: skip
    file = write(folder, FILES_TEST.replace("ARGS", json.dumps(expected)))
    _code, found, stderr = run(folder, file)
    # cli.ts buildTemplateValues: FILES = formatFileList(evalCase.file_paths, files_format),
    # the guideline file included; the program runs in the eval file's folder (targets.ts:
    # no cwd -> dirname(evalFilePath))
    assert found["t"]["score"] == 1.0, (found["t"], stderr)


def test_workspace_template_on_the_target(folder: Path, fake_llm: FakeOpenAI) -> None:
    cli_targets(folder, "    workspace_template: ../template\n")
    (folder / "template").mkdir()
    (folder / "template" / "main.ts").write_text("export {}")
    expected = {"args": [], "files": ["main.ts"]}
    file = write(
        folder,
        "tests:\n  - id: t\n    criteria: x\n    input: go\n    execution:\n      evaluators:\n"
        f"        - {{name: args, type: equals, value: '{json.dumps(expected)}'}}\n",
    )
    _code, found, stderr = run(folder, file)
    # orchestrator.ts: workspace = evalCase.workspace?.template ?? the target's
    # workspace_template (from the eval file's folder); the cli runs there
    assert found["t"]["score"] == 1.0, (found["t"], stderr)


def test_failing_healthcheck_errors_the_tests(folder: Path, fake_llm: FakeOpenAI) -> None:
    cli_targets(folder, "    healthcheck:\n      type: command\n      command_template: exit 3\n")
    file = write(folder, "tests:\n  - {id: t, criteria: x, input: go}\n")
    code, found, _stderr = run(folder, file)
    assert found["t"]["verdict"] == "error" and "healthcheck failed" in found["t"]["error"]
    assert code == 3


def test_unknown_target_key_is_an_error_at_its_line(folder: Path) -> None:
    cli_targets(folder, "    log_format: json\n")
    file = write(folder, "tests:\n  - {id: t, criteria: x, input: go}\n")
    result = accord("eval", file)
    assert result.exit_code == 2
    assert "targets.yaml:5:" in result.stderr
    assert "cli target key 'log_format' is not supported by accord" in result.stderr


def test_every_invalid_file_reported_and_valid_ones_named(folder: Path) -> None:
    bad_a = write(folder, "tests:\n  - {id: a, input: y}\n", "evals/a.yaml")
    good = write(folder, "tests:\n  - {id: b, criteria: x, input: y}\n", "evals/b.yaml")
    bad_c = write(
        folder, "tests:\n  - {id: c, criteria: x, input: y, rubric: [z]}\n", "evals/c.yaml"
    )
    broken = write(folder, "tests: [\n", "evals/d.yaml")
    result = accord("eval", bad_a, good, bad_c, broken)
    assert result.exit_code == 2
    assert "a.yaml:2:" in result.stderr and "test needs 'criteria'" in result.stderr
    assert "c.yaml:2:" in result.stderr and "unknown key 'rubric'" in result.stderr
    assert "d.yaml" in result.stderr
    assert f"not run: {good} (valid" in result.stderr
    assert "Traceback" not in result.stderr
