"""Workspace scripts around an AgentV suite and its cases.

Each case with a `workspace` gets a fresh folder (a copy of `template` when given). Its
`before_each` and `setup` scripts run before the target answers, `teardown` and
`after_each` after its evaluators; `before_all` and `after_all` once around the suite.
Every script gets JSON on stdin: `workspace_path`, `test_id` (and `eval_case_id`),
`eval_run_id`, `case_input`, `case_metadata`. A failing `before_all`, `before_each` or
`setup` errors the case with the script's stderr (the suite goes on); a failing script
after a case or the suite is a warning.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ......engine.paths import file_name_part
from .....evaluators.cases import Case
from ....core.cases import Lifecycle, Suite
from ....core.targets import TargetFailure, run_program
from ..v2.cases import AgentVCase
from ..v2.schema import ScriptSpec, WorkspaceSpec


class WorkspaceHooks(Lifecycle):
    def __init__(self, suite_level: WorkspaceSpec | None, folder: Path) -> None:
        self.suite_level = suite_level
        self.folder = folder
        self.failed_before_all: str | None = None
        self.run_id = ""

    @classmethod
    def for_cases(
        cls, cases: Sequence[AgentVCase], suite_level: WorkspaceSpec | None, folder: Path
    ) -> WorkspaceHooks | None:
        if suite_level is None and not any(c.workspace is not None for c in cases):
            return None
        return cls(suite_level, folder)

    async def _run(
        self, script: ScriptSpec, payload: dict[str, Any], default_timeout: float
    ) -> str | None:
        """None when the script succeeded, else what it said on stderr."""
        timeout = (script.timeout_ms or default_timeout * 1000) / 1000
        cwd = self.folder / (script.cwd or ".")
        try:
            _out, err, code = await run_program(
                list(script.script), json.dumps(payload, default=str).encode(), cwd, timeout
            )
        except TargetFailure as exc:
            return str(exc)
        if code != 0:
            text = err.decode(errors="replace").strip()[-1000:]
            return f"`{' '.join(script.script)}` exited with {code}: {text or '(no stderr)'}"
        return None

    def _payload(self, case: Case | None, workspace: str | None) -> dict[str, Any]:
        return {
            "workspace_path": workspace,
            "test_id": case.id if case else None,
            "eval_case_id": case.id if case else None,
            "eval_run_id": self.run_id,
            "case_input": getattr(case, "question", None) if case else None,
            "case_metadata": (case.metadata or None) if case else None,
        }

    async def before_all(self, suite: Suite) -> None:
        script = self.suite_level.before_all if self.suite_level else None
        if script is not None:
            problem = await self._run(script, self._payload(None, str(self.folder)), 60)
            if problem is not None:
                self.failed_before_all = f"before_all failed: {problem}"

    async def after_all(self, suite: Suite) -> list[str]:
        script = self.suite_level.after_all if self.suite_level else None
        if script is None:
            return []
        problem = await self._run(script, self._payload(None, str(self.folder)), 30)
        return [f"after_all failed: {problem}"] if problem else []

    async def before_case(self, case: Case, repeat: int, run_id: str) -> str | None:
        self.run_id = run_id
        if self.failed_before_all is not None:
            raise TargetFailure(self.failed_before_all)
        spec = getattr(case, "workspace", None)
        if not isinstance(spec, WorkspaceSpec):
            return None
        workspace = tempfile.mkdtemp(prefix=f"accord-{file_name_part(case.id)}-")
        if spec.template:
            template = (self.folder / spec.template).resolve()
            if not template.is_dir():
                raise TargetFailure(f"workspace template '{spec.template}' is not a folder")
            shutil.copytree(template, workspace, dirs_exist_ok=True)
        payload = self._payload(case, workspace)
        for name in ("before_each", "setup"):
            script = getattr(spec, name)
            if script is not None:
                problem = await self._run(script, payload, 60)
                if problem is not None:
                    shutil.rmtree(workspace, ignore_errors=True)
                    raise TargetFailure(f"workspace {name} failed: {problem}")
        return workspace

    async def after_case(
        self, case: Case, repeat: int, run_id: str, workspace: str | None
    ) -> list[str]:
        spec = getattr(case, "workspace", None)
        if not isinstance(spec, WorkspaceSpec):
            return []
        warnings = []
        payload = self._payload(case, workspace)
        for name in ("teardown", "after_each"):
            script = getattr(spec, name)
            if script is not None:
                problem = await self._run(script, payload, 30)
                if problem is not None:
                    warnings.append(f"workspace {name} of {case.id} failed: {problem}")
        if workspace:
            shutil.rmtree(workspace, ignore_errors=True)
        return warnings
