"""`accord runs baselines`: the automatic battle baselines of a project's run store."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ....engine.cli import handle_errors, store_options, store_path


@click.command("baselines")
@store_options
@click.option("--suite", default=None, help="Only this suite's baselines.")
@click.option("--case", "case_id", default=None, help="Only this case (with --reset).")
@click.option(
    "--reset", is_flag=True, help="Delete the baselines listed (the next run saves new ones)."
)
@handle_errors
def baselines_command(
    fmt: str, folder: Path, suite: str | None, case_id: str | None, reset: bool
) -> None:
    """Automatic battle baselines: list them, or --reset them."""
    from ....engine.report.terminal import printable
    from ...evaluators.baselines import list_baselines, reset_baselines

    path = store_path(folder)
    if reset:
        count = reset_baselines(path, suite, case_id)
        click.echo(
            json.dumps({"reset": count})
            if fmt == "json"
            else f"{count} baseline{'' if count == 1 else 's'} reset"
        )
        return
    rows = [r for r in list_baselines(path, suite) if case_id is None or r["case"] == case_id]
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    if not rows:
        click.echo("no baselines (an automatic battle saves one on its first run)")
    for row in rows:
        text = " ".join(str(row["output"]).split())
        shown = text if len(text) <= 70 else text[:69] + "…"
        click.echo(printable(f"{row['suite']}  {row['case']}  {row['evaluator']}  {shown}"))
