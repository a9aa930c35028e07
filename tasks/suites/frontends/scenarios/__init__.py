"""Scenario suites (seed 003): YAML scenarios with macros, model matrices and agent classes.

`sources` tells which files are scenario files, without importing the suite machinery (every
`accord eval` asks it of its files); `frontend` declares the front-end.
"""

from .sources import is_scenario_file, is_scenario_source, scenario_files, scenario_sources

__all__ = ["is_scenario_file", "is_scenario_source", "scenario_files", "scenario_sources"]
