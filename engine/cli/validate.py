"""`accord validate`, `accord graph` and `accord schema`: a file checked, drawn, described;
nothing runs."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .app import EXIT_INVALID, handle_errors, main
from .options import file_argument


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@handle_errors
def validate(files: tuple[Path, ...]) -> None:
    """Check workflow, agent, test, evaluation and config.yml files (a folder: every one in
    it); no model or database is called. Every invalid file's problems are shown."""
    from ..errors import AccordError, UnsupportedFeature

    failures = 0
    for path in files:
        checked = 0
        for file in _files_of(path):
            try:
                summary = _validate_one(file, in_folder=file != path)
            except UnsupportedFeature as exc:  # said, and not a failure: the rest still runs
                click.echo(f"unsupported: {exc.text}", err=True)
                checked += 1
                continue
            except AccordError as exc:
                failures += 1
                checked += 1
                click.echo(f"error: {exc.text}", err=True)
                continue
            if summary is None:  # a folder's file no check knows (data, notes): not checked
                continue
            checked += 1
            click.echo(f"ok: {file} ({summary})")
        if path.is_dir() and not checked:
            failures += 1
            click.echo(f"error: {path}: no file accord checks in this folder", err=True)
    if failures:
        sys.exit(EXIT_INVALID)


def _files_of(path: Path) -> list[Path]:
    """A file, or the files of a folder (hidden folders such as `.accord/` left out)."""
    if not path.is_dir():
        return [path]
    return sorted(
        p for p in path.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
    )  # fmt: skip


def _validate_one(file: Path, *, in_folder: bool = False) -> str | None:
    """A workflow is compiled; then every registered check sees the file (agent, test and
    evaluation files, a workflow's `tests:`); config.yml is loaded and checked as a project's.
    None: a file of a folder that no check knows."""
    from ..compile import compile_workflow
    from ..errors import LoadError
    from ..kinds import file_checks
    from ..loader import is_workflow_file

    if not file.exists():
        raise LoadError(f"{file}: file not found")
    if file.name == "config.yml":
        from ..project import database_notes, load_project

        project = load_project(file)
        for note in database_notes(project):
            click.echo(f"note: {note.render()}", err=True)
        config = project.config
        return f"{len(config.databases)} databases, {len(config.models)} models"
    found: list[str] = []
    if is_workflow_file(file):
        _project, plan = compile_workflow(file, keep_templates=False)
        for note in plan.notes:
            click.echo(f"unsupported: {note.render()}", err=True)
        count = plan.count_nodes()
        found.append(f"{count} task{'' if count == 1 else 's'}")
    for check in file_checks():
        summary = check(file)
        if summary:
            found.append(summary)
    if not found and in_folder:
        return None
    if not found:
        raise LoadError(
            f"{file}: not a file accord checks: give a .workflow.yml (or Oxy's .procedure.yml "
            "/ .automation.yml), an .agent.yml, a .test.yml, an .eval.yml, an AgentV eval file "
            "(tests:), a scenario file (scenarios:), a .view.yml, a .topic.yml, a config.yml "
            "or a folder of them"
        )
    return ", ".join(found)


@main.command()
@file_argument()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "dot", "mermaid"]),
    default="text",
    show_default=True,
)
@handle_errors
def graph(file: Path, fmt: str) -> None:
    """Print the compiled DAG."""
    from ..compile import compile_workflow
    from ..report import graph as graph_report

    _project, plan = compile_workflow(file, keep_templates=False)
    click.echo(graph_report.render(plan, fmt))


@main.command()
@click.argument("kind", required=False, type=click.Choice(["workflow", "config", "agent", "test"]))
@handle_errors
def schema(kind: str | None) -> None:
    """Print the JSON Schema of a file kind (all kinds without an argument)."""
    import json

    from ..report.schema import schemas

    documents = schemas()
    click.echo(json.dumps(documents[kind] if kind else documents, indent=2))
