"""Run promptfoo assertions as a front-end does: each `assert:` entry through
`build_assertion`, on cases of a suite the evaluation core runs (a Python target giving the
output), judges and embeddings at the fake OpenAI server."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from accord.engine.project import load_project
from accord.engine.runner import RunOptions
from accord.tasks.evaluators.base import Finding
from accord.tasks.evaluators.cases import Output
from accord.tasks.suites.core.cases import CaseResult, Suite
from accord.tasks.suites.core.nodes import run_suite
from accord.tasks.suites.core.targets import PythonTarget
from accord.tasks.suites.frontends.agentv.v4.checks.build import (
    build_agentv_assertion,
    combine_agentv,
)
from accord.tasks.suites.frontends.promptfoo.asserts import (
    PromptfooCase,
    build_assertion,
    combine,
)
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI


@dataclass
class Scored:
    """One case's findings (one per assertion, in order), and promptfoo's test result."""

    case: CaseResult
    findings: list[Finding]
    test: Finding


def write_project(root: Path, fake: FakeOpenAI | None = None, embedding: bool = False) -> Path:
    config = ""
    if fake is not None:
        config = fake_model_config(fake) + "defaults:\n  judge_model: fake\n"
        if embedding:
            config += "  embedding_model: fake\n"
    (root / "config.yml").write_text(config)
    return root


def score(
    root: Path,
    asserts: list[Any],
    output: str | Output,
    *,
    vars: dict[str, Any] | None = None,
    threshold: float | None = None,
    prompt: str = "the prompt",
    options: dict[str, Any] | None = None,
    provider_config: dict[str, Any] | None = None,
    agentv: bool = False,
    base_dir: Path | None = None,
) -> Scored:
    """The assertions on one output of one test (`agentv`: as an AgentV 4 file's)."""
    if not (root / "config.yml").exists():
        write_project(root)
    specs = tuple(
        build_agentv_assertion(
            entry, base_dir=base_dir or root, where=f"suite.yaml:{n + 3}", name=f"a{n}", root=root
        )
        if agentv
        else build_assertion(
            entry, base_dir=base_dir or root, where=f"promptfooconfig.yaml:{n + 3}", name=f"a{n}"
        )
        for n, entry in enumerate(asserts)
    )
    produced = output if isinstance(output, Output) else Output(text=output)
    case = PromptfooCase(
        id="t1", input=prompt, vars=dict(vars or {}), options=dict(options or {}),
        prompt_text=prompt, evaluators=specs, provider_config=dict(provider_config or {}),
    )  # fmt: skip

    async def answer(_: Any) -> Output:
        return produced

    suite = Suite(
        id="pf",
        cases=[case],
        targets={"t": PythonTarget(function="x:y", callable=answer)},
        default_target="t",
        project=load_project(root / "config.yml"),
        judge_model="fake" if "fake" in (root / "config.yml").read_text() else None,
    )
    run = asyncio.run(run_suite(suite, RunOptions(store=False, cache_mode="off")))
    result = run.cases[0]
    findings = list(result.findings)
    combined = combine_agentv if agentv else combine
    return Scored(result, findings, combined(findings, specs, threshold=threshold))
