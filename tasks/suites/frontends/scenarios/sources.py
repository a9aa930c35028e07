"""Which files are scenario files (YAML with a top-level `scenarios:` key), told without
importing the suite machinery: every `accord eval` asks it of its files."""

from __future__ import annotations

from pathlib import Path

from ...core.frontend import Source


def is_scenario_source(source: Source) -> bool:
    """YAML with a top-level `scenarios:` key."""
    return source.has_top_level_key("scenarios")


def is_scenario_file(path: Path) -> bool:
    return is_scenario_source(Source(path))


def scenario_sources(folder: Path) -> list[Source]:
    """The scenario files of a folder (the seed's `scenarios_path` may be one), each read
    once: the text that told it is a scenario file is the text its loader parses."""
    found = (Source(p, named=False) for p in sorted(folder.rglob("*.y*ml")) if p.is_file())
    return [source for source in found if is_scenario_source(source)]


def scenario_files(folder: Path) -> list[Path]:
    """The scenario files of a folder."""
    return [source.path for source in scenario_sources(folder)]
