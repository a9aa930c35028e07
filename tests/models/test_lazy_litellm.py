"""litellm (2-5 s, ~165 MB) is imported only when a model call is about to run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.bounds import PROCESS_SECONDS

PROBE = """
import sys
from accord.cli import main
try:
    main({args!r})
except SystemExit as exc:
    code = exc.code
print("EXIT", code)
print("LITELLM", "litellm" in sys.modules)
"""


def probe(args: list[str], cwd: Path) -> tuple[int, bool]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=PROCESS_SECONDS,
        check=False,
    ).stdout
    lines = dict(line.split(" ", 1) for line in out.strip().splitlines()[-2:])
    return int(lines["EXIT"]), lines["LITELLM"] == "True"


def test_help_validate_and_sql_runs_never_import_litellm(tmp_path: Path) -> None:
    (tmp_path / ".db").mkdir()
    (tmp_path / ".db" / "t.csv").write_text("a\n1\n2\n")
    wf = tmp_path / "w.workflow.yml"
    wf.write_text(
        "tasks:\n  - name: q\n    type: execute_sql\n    sql_query: SELECT SUM(a) AS s FROM t\n"
        "  - name: ask\n    type: formatter\n    template: '{{ q.s[0] }}'\n"
    )
    agent_wf = tmp_path / "a.workflow.yml"
    agent_wf.write_text("tasks:\n  - name: x\n    type: agent\n    model: local\n    prompt: hi\n")
    assert probe(["--help"], tmp_path) == (0, False)
    assert probe(["validate", str(wf), str(agent_wf)], tmp_path) == (0, False)
    assert probe(["run", str(wf), "--quiet"], tmp_path) == (0, False)
