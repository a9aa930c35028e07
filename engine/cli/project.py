"""`accord init` and `accord trust`: a project created, and the files it trusts."""

from __future__ import annotations

from pathlib import Path

import click

from .app import handle_errors, main


@main.command()
@click.argument("folder", required=False, default=".", type=click.Path(path_type=Path))
@handle_errors
def init(folder: Path) -> None:
    """Create a small working project in FOLDER (default: here): a database over a CSV, the
    local model, a workflow with a test, and an evaluation suite."""
    from ..paths import shown_path
    from ..scaffold import scaffold

    for path in scaffold(folder):
        click.echo(f"created {shown_path(path)}")
    where = "" if folder == Path(".") else f"cd {shown_path(folder)}, then "
    click.echo(
        f"next: {where}accord run revenue.workflow.yml; accord test revenue.workflow.yml; "
        "accord eval checks.eval.yml"
    )


@main.command()
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--revoke", is_flag=True, help="Stop trusting the files.")
@click.option(
    "--list",
    "listing",
    is_flag=True,
    help="List the files trusted, and whether each is unchanged since.",
)
@handle_errors
def trust(files: tuple[Path, ...], revoke: bool, listing: bool) -> None:
    """Let FILES send keys to the URLs they name and run programs that are not the project's
    own (docs/security.md), as they are now: an edited file must be trusted again."""
    from .. import trust as trusting
    from ..errors import AccordError

    if listing:
        if files or revoke:
            raise AccordError("accord trust --list takes no files and no --revoke")
        for name, recorded in trusting.granted().items():
            try:
                state = "unchanged" if trusting.digest(Path(name)) == recorded else "changed"
            except OSError:
                state = "missing"
            click.echo(f"{name}  {state}")
        return
    if not files:
        raise AccordError("accord trust: give the files to trust (or --list, --revoke FILE)")
    if revoke:
        gone = set(trusting.revoke(list(files)))
        for file in files:
            click.echo(f"{'no longer trusted' if file in gone else 'was not trusted'}: {file}")
        return
    for file in files:
        if not file.is_file():
            raise AccordError(f"{file}: no such file; give the file to trust")
    for file, digest in trusting.grant(list(files)).items():
        click.echo(f"trusted: {file} (sha256 {digest[:12]}; edit it and it must be trusted again)")
