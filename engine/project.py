"""The project: its root folder, its config, and the embedded defaults when it has none."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import Issue, ValidationError
from engine.loader import load_config
from engine.spec import ConfigSpec, DuckDBDatabase
from engine.yamlmarks import format_path

if TYPE_CHECKING:
    from engine.databases import Databases

LOCAL_MODEL = "local"


@dataclass(frozen=True)
class Project:
    """Where a file lives and what its project configures."""

    root: Path
    config: ConfigSpec
    config_path: Path | None

    @property
    def databases(self) -> dict[str, Any]:
        dbs: dict[str, Any] = {db.name: db for db in self.config.databases}
        if not self.config.databases and (self.root / ".db").is_dir():
            dbs["local"] = DuckDBDatabase(name="local", type="duckdb", dataset=".db")
        return dbs

    @property
    def default_database(self) -> str | None:
        if self.config.defaults.database:
            return self.config.defaults.database
        dbs = self.databases
        return next(iter(dbs)) if len(dbs) == 1 else None

    @property
    def default_model(self) -> str:
        if self.config.defaults.model:
            return self.config.defaults.model
        return LOCAL_MODEL

    def open_databases(self) -> Databases:
        from engine.databases import Databases

        return Databases(self.root, self.databases, self.default_database)


def find_root(start: Path) -> tuple[Path, Path | None]:
    """The nearest folder from `start` upward holding `config.yml`, else `start`'s folder."""
    folder = start.resolve()
    if folder.is_file() or not folder.exists():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        config = candidate / "config.yml"
        if config.is_file():
            return candidate, config
    return folder, None


def load_project(file: Path) -> Project:
    """The project that `file` belongs to, its config validated."""
    root, config_path = find_root(file)
    if config_path is None:
        return Project(root, ConfigSpec(), None)
    loaded = load_config(config_path)
    config: ConfigSpec = loaded.spec
    issues: list[Issue] = []
    seen: set[str] = set()
    for index, db in enumerate(config.databases):
        if db.name in seen:
            line, col = loaded.marks.find(("databases", index, "name"))
            issues.append(
                Issue(
                    config_path,
                    line,
                    col,
                    format_path(("databases", index, "name")),
                    f"duplicate database name '{db.name}'",
                )
            )
        seen.add(db.name)
    default = config.defaults.database
    if default is not None and default not in seen:
        line, col = loaded.marks.find(("defaults", "database"))
        issues.append(
            Issue(
                config_path,
                line,
                col,
                "defaults.database",
                f"names unknown database '{default}' (databases: "
                f"{', '.join(sorted(seen)) or 'none'})",
            )
        )
    if issues:
        raise ValidationError(issues)
    return Project(root, config, config_path)
