"""The project: its root folder, its config, and the embedded defaults when it has none."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .catalog import ModelCatalog
from .databases.base import DATABASES
from .databases.duckdb import DuckDBDatabase
from .errors import Issue, ValidationError
from .loader import Loaded, load_config
from .spec import ConfigSpec

if TYPE_CHECKING:
    from .databases import Databases

LOCAL_MODEL = "local"


@dataclass(frozen=True)
class Project:
    """Where a file lives and what its project configures."""

    root: Path
    config: ConfigSpec
    config_path: Path | None
    # Problems of config.yml that do not stop a run; logged when a run opens its databases.
    warnings: tuple[Issue, ...] = ()

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

    @property
    def default_judge(self) -> str:
        """The judge of suites that name none: `defaults.judge_model`, else the model."""
        return self.config.defaults.judge_model or self.default_model

    def open_databases(self, filters: dict[str, Any] | None = None) -> Databases:
        from .databases import Databases

        if self.warnings:
            from . import log

            logger = log.get()
            for warning in self.warnings:
                logger.warning("config_warning", problem=warning.render())
        return Databases(self.root, self.databases, self.default_database, filters)


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
    """The project that `file` belongs to, its config validated.

    Names are checked first (duplicate databases and models, defaults naming nothing); once
    they are consistent, the files the databases read: a missing DuckDB `dataset:` folder or
    SQLite file is an error. A missing DuckDB `path:` file is only a warning, logged when a
    run starts: Oxy's own configs name persistent DuckDB files that do not exist yet.
    """
    root, config_path = find_root(file)
    if config_path is None:
        return Project(root, ConfigSpec(), None)
    loaded = load_config(config_path)
    config: ConfigSpec = loaded.spec
    issues = _name_issues(loaded)
    if issues:
        raise ValidationError(issues)
    issues, warnings = _file_issues(loaded, root)
    if issues:
        raise ValidationError(issues)
    return Project(root, config, config_path, tuple(warnings))


def database_notes(project: Project) -> list[Issue]:
    """The databases of config.yml accord cannot connect to (a type it cannot reach, or one
    whose client library is not installed), each at its line: they load so an Oxy project
    validates, and only a task that uses one is refused."""
    from .databases import missing_library, unreachable

    if project.config_path is None:
        return []
    loaded = load_config(project.config_path)
    notes = []
    for index, spec in enumerate(project.config.databases):
        problem = unreachable(spec)
        missing = missing_library(spec) if problem is None else None
        if missing is not None:
            notes.append(
                loaded.issue(
                    ("databases", index, "type"),
                    f"{missing}; a task that uses it is refused until then",
                )
            )
        if problem is not None:
            notes.append(
                loaded.issue(
                    ("databases", index, "type"),
                    f"{problem}; a task that uses it fails when it runs (validate names each "
                    "one, at its line)",
                )
            )
    return notes


def database_issue(project: Project, name: str, message: str) -> Issue:
    """`message` about database `name`, at its entry's `type` line of config.yml."""
    index = next(i for i, db in enumerate(project.config.databases) if db.name == name)
    if project.config_path is None:
        return Issue(project.root / "config.yml", None, None, "", message)
    return load_config(project.config_path).issue(("databases", index, "type"), message)


def _name_issues(loaded: Loaded) -> list[Issue]:
    config: ConfigSpec = loaded.spec
    issues: list[Issue] = []
    named: list[tuple[str, list[str], str]] = [
        ("databases", [db.name for db in config.databases], "database"),
        ("models", [model.name for model in config.models], "model"),
    ]
    for section, names, kind in named:
        first: dict[str, int] = {}
        for index, name in enumerate(names):
            if name in first:
                issues.append(
                    loaded.issue(
                        (section, index, "name"),
                        f"duplicate {kind} name '{name}' (first used by "
                        f"{section}[{first[name]}]): rename or remove one of them",
                    )
                )
            first.setdefault(name, index)
    databases = {db.name for db in config.databases}
    default = config.defaults.database
    if default is not None and default not in databases:
        issues.append(
            loaded.issue(
                ("defaults", "database"),
                f"names unknown database '{default}' (databases: "
                f"{', '.join(sorted(databases)) or 'none'})",
            )
        )
    catalog = ModelCatalog(config)
    for field in ("model", "judge_model"):
        name = getattr(config.defaults, field)
        if name is not None and (problem := catalog.problem(name)) is not None:
            issues.append(loaded.issue(("defaults", field), problem))
    issues.sort(key=lambda i: (i.line or 0, i.column or 0))
    return issues


def _file_issues(loaded: Loaded, root: Path) -> tuple[list[Issue], list[Issue]]:
    """(errors, warnings) about the files and folders the databases read."""
    config: ConfigSpec = loaded.spec
    errors: list[Issue] = []
    warnings: list[Issue] = []
    for index, db in enumerate(config.databases):
        for need in DATABASES.get(db.type).needs(db):
            kind = _kind(root / need.given)
            if kind == need.want:
                continue
            if kind == "missing":
                what = "not found under the project root (the folder holding config.yml)"
            else:
                what = f"is a {kind}, not a {need.want}"
            message = f"database '{db.name}': {need.label} '{need.given}' {what}: {need.advice}"
            issue = loaded.issue(("databases", index, need.field), message)
            (errors if need.error else warnings).append(issue)
    return errors, warnings


def _kind(path: Path) -> str:
    """'folder', 'file' (anything that is not a folder), or 'missing'."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # missing, a bad name (NUL, too long), no permission
        return "missing"
    return "folder" if stat.S_ISDIR(mode) else "file"
