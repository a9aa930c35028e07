"""Scenario suites (seed 003): YAML scenarios with macros, model matrices and agent classes.

Which files are scenario files is told here, without importing the suite machinery: every
`accord eval` asks it of its files.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from accord.engine.yamlmarks import has_top_level_key

if TYPE_CHECKING:
    from accord.tasks.suites.core.cases import Suite


def is_scenario_file(path: Path) -> bool:
    """YAML with a top-level `scenarios:` key."""
    return has_top_level_key(path, "scenarios")


def scenario_files(folder: Path) -> list[Path]:
    """The scenario files of a folder (the seed's `scenarios_path` may be one)."""
    return sorted(p for p in folder.rglob("*.y*ml") if p.is_file() and is_scenario_file(p))


def is_scenario_suite(suite: Suite) -> bool:
    """A suite loaded from a scenario file (scored by the scenario judge)."""
    from accord.tasks.suites.scenarios.judge import ScenarioJudge

    return any(isinstance(e, ScenarioJudge) for e in suite.evaluators)
