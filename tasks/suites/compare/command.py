"""`accord runs compare A B` and `accord view`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ....engine.cli import FiniteFloatRange, OutputFile, handle_errors
from .render import COMPARE_FORMATS

_PROJECT = click.option(
    "--project", "folder", type=click.Path(path_type=Path), default=Path("."),
    show_default=True, help="A file or folder of the project (its run store).",
)  # fmt: skip


@click.command("compare")
@click.argument("baseline", metavar="A")
@click.argument("current", metavar="B")
@click.option("--format", "fmt", type=click.Choice(COMPARE_FORMATS.choices()),
              default="pretty", show_default=True)  # fmt: skip
@click.option("--output", type=OutputFile("comparison.txt"), help="Write the comparison here.")
@click.option(
    "--alpha", type=FiniteFloatRange(0.0, 1.0, min_open=True, max_open=True), default=0.05,
    show_default=True, help="Significance level of the paired tests.",
)  # fmt: skip
@click.option(
    "--fail-on-regression", type=click.Choice(["significant", "any"]), default=None,
    help="Exit 1 on a significant drop, or with 'any' also when a case flipped to failing.",
)  # fmt: skip
@_PROJECT
@handle_errors
def compare_command(
    baseline: str, current: str, fmt: str, output: Path | None, alpha: float,
    fail_on_regression: str | None, folder: Path,
) -> None:  # fmt: skip
    """Compare run B with run A, case by case, with paired tests. A and B are run ids (or
    unique prefixes), 'last', 'last~1', ... or results files written by `accord eval
    --format json` (or `accord test --output-json`)."""
    from ....engine.errors import AccordError
    from .comparison import compare_runs
    from .loading import is_file_ref, load_ref, project_store
    from .render import render

    files = is_file_ref(baseline) and is_file_ref(current)
    store = folder if files else project_store(folder)  # two files need no project
    if output is not None:
        check_output(output, fmt, (baseline, current), folder)
    comparison = compare_runs(load_ref(baseline, store), load_ref(current, store))
    text = render(comparison, fmt, alpha)
    if output is not None:
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise AccordError(f"{output}: cannot write: {exc.strerror}") from None
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    failing = comparison.regressions(alpha)
    if fail_on_regression == "any":
        failing += [c.id for _s, c in comparison.to_failing()]
    if fail_on_regression is not None and failing:
        sys.exit(1)


def check_output(output: Path, fmt: str, refs: tuple[str, str], folder: Path) -> None:
    """Refuse, before anything is read, an --output that would replace what a project keeps
    (its files, a results file being compared, anything under `.accord/`, the run store
    among them) or could not be written (engine/paths.check_outputs, as for every command)."""
    from ....engine.paths import Output, check_outputs
    from ....engine.project import find_root
    from .loading import is_file_ref

    compared = [Path(ref) for ref in refs if is_file_ref(ref)]
    roots = {find_root(path)[0] for path in [folder, *compared] if path.exists()}
    check_outputs(
        [Output("--output", output, example=COMPARE_FORMATS.get(fmt).file)],
        inputs={path: "a results file being compared" for path in compared},
        roots=sorted(roots),
        nothing_ran="nothing was compared",
    )


@click.command("view")
@_PROJECT
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="The port on 127.0.0.1 (0: a free one).")  # fmt: skip
@click.option(
    "--alpha", type=FiniteFloatRange(0.0, 1.0, min_open=True, max_open=True), default=0.05,
    show_default=True, help="Significance level of the comparisons.",
)  # fmt: skip
@handle_errors
def view_command(folder: Path, port: int, alpha: float) -> None:
    """A local web page over the run store (127.0.0.1 only, read-only): runs, cases,
    comparisons and pass rates over time. Ctrl-C ends it."""
    from .loading import project_store
    from .view import serve

    serve(project_store(folder), port, alpha)
