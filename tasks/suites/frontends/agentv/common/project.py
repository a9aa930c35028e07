"""An AgentV project: its root, and the nearest `.agentv/` above an eval file, where both
formats find their project files (the older format's `targets.yaml`, AgentV 4's
`providers.yaml`).

The root of an AgentV file (`project_root`), what every read of the file stays inside
(engine/paths.py `inside`) and where accord keeps its run store (`.accord/` under it):

- the folder holding `config.yml`, the nearest above the file (engine/project.py
  `find_root`): an accord project holding AgentV files keeps its root;
- else AgentV's own: the folder holding `.agentv/` (the outermost one inside the
  repository, when `.agentv` folders nest: AgentV reads the whole repository, its
  `repoRoot`), else the repository's top (the nearest folder holding `.git`, as AgentV's
  findRepoRoot finds it: apps/cli/src/commands/eval/shared.ts). The search never goes
  above the repository's top, and AgentV's home folder (`$AGENTV_HOME`, else
  `~/.agentv`: packages/core/src/paths.ts getAgentvConfigDir), which holds AgentV's own
  settings and no project, marks none. Outside any repository each `.agentv` is its own
  project: the nearest one is the root;
- else the file's own folder.

The root is never above the folder holding `config.yml`, `.agentv` or `.git`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ......engine.project import Project

FOLDER = ".agentv"
CATALOG = Path(FOLDER) / "providers.yaml"  # AgentV 4's provider catalog
REPOSITORY = ".git"  # a folder, or a file in a worktree or submodule: AgentV takes either


def agentv_home() -> Path:
    """AgentV's home folder (getAgentvConfigDir): its settings, never a project's."""
    home = os.environ.get("AGENTV_HOME")
    if not home or home == "undefined":  # readEnvPath
        return Path.home() / FOLDER
    return Path(home)


def _folder_of(start: Path) -> Path:
    folder = start.resolve()
    return folder if folder.is_dir() else folder.parent


def agentv_top(start: Path) -> Path:
    """AgentV's root for a file (or folder) `start`, config.yml aside: the folder holding
    `.agentv/` (the outermost inside the repository), else the repository's top (`.git`),
    else `start`'s folder."""
    folder = _folder_of(start)
    try:
        home = agentv_home().resolve()
    except (OSError, RuntimeError):
        home = None
    holders: list[Path] = []
    for candidate in (folder, *folder.parents):
        marker = candidate / FOLDER
        if marker.is_dir() and marker.resolve() != home:
            holders.append(candidate)
        if os.path.lexists(candidate / REPOSITORY):
            return holders[-1] if holders else candidate
    return holders[0] if holders else folder


def project_root(start: Path) -> tuple[Path, Path | None]:
    """The root of an AgentV file and its config.yml (None when there is none)."""
    from ......engine.project import find_root

    root, config = find_root(start)
    if config is not None:
        return root, config
    return agentv_top(start), None


def load_project(file: Path) -> Project:
    """The project of an AgentV file: config.yml's (validated) when there is one above it,
    else one with no config whose root is AgentV's (`agentv_top`)."""
    from ......engine.project import load_project as load_accord_project

    project = load_accord_project(file)
    if project.config_path is not None:
        return project
    return dataclasses.replace(project, root=agentv_top(file))


def nearest(
    start: Path, name: Path | str, *, top: Path | None = None,
    found: Callable[[Path], bool] = Path.is_dir,
) -> Path | None:  # fmt: skip
    """The nearest `FOLDER/name` that is `found` (a folder, by default), from the folder
    `start` upward to `top` (included), else to the file system's root."""
    folder = start.resolve()
    last = top.resolve() if top is not None else None
    for candidate in (folder, *folder.parents):
        if found(candidate / name):
            return candidate / name
        if candidate == last:
            return None
    return None


def find_agentv_folder(start: Path, root: Path | None = None) -> Path | None:
    """The nearest `.agentv` folder from `start`'s folder up to `root` (the file's project
    root when not given): never one above the root."""
    top = root if root is not None else project_root(start)[0]
    if not _folder_of(start).is_relative_to(top.resolve()):
        return None
    return nearest(_folder_of(start), FOLDER, top=top)


def nearest_catalog(base: Path, root: Path) -> Path | None:
    """The nearest `.agentv/providers.yaml` from the eval file's folder up to the root."""
    return nearest(base, CATALOG, top=root, found=Path.is_file)
