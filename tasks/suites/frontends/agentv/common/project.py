"""An AgentV project's folder: the nearest `.agentv/` above an eval file, where both formats
find their project files (the older format's `targets.yaml`, AgentV 4's `providers.yaml`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

FOLDER = ".agentv"
CATALOG = Path(FOLDER) / "providers.yaml"  # AgentV 4's provider catalog


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


def find_agentv_folder(start: Path) -> Path | None:
    """The nearest `.agentv` folder from `start`'s folder upward."""
    return nearest(start.resolve().parent, FOLDER)


def nearest_catalog(base: Path, root: Path) -> Path | None:
    """The nearest `.agentv/providers.yaml` from the eval file's folder up to the root."""
    return nearest(base, CATALOG, top=root, found=Path.is_file)
