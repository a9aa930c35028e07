"""Pretty output with rich: a progress bar while the run goes (stderr), then each top-level
output (tables as terminal tables) and a summary on stdout."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO

from rich.console import Console

if TYPE_CHECKING:
    from rich.table import Table

from ..plan import Plan
from ..render import TableView, format_cell
from ..results import RunResult, Status, TaskResult
from ..scheduler import Node
from ..usage import Usage
from .terminal import printable
from .terminal import shown as escape

MAX_ROWS = 20
_MARK = {
    Status.SUCCEEDED: "[green]✓[/]",
    Status.FAILED: "[red]✗[/]",
    Status.SKIPPED: "[yellow]-[/]",
    Status.CANCELLED: "[yellow]○[/]",
}


class RunDisplay:
    """Scheduler observer that draws a progress bar on a terminal."""

    def __init__(self, *plans: Plan, quiet: bool = False, nodes: int = 0) -> None:
        # `nodes`: more nodes beyond the plans' (a suite's, counted without building its plan)
        self.total = sum(plan.count_nodes() for plan in plans) + nodes
        self.console = Console(stderr=True)
        self.enabled = self.console.is_terminal and not quiet
        self.progress: Any = None
        if self.enabled:
            # imported for a bar that is drawn only (a run's fixed cost, B16)
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[current]}"),
                console=self.console,
                transient=True,
            )
        self._task_id: Any = None
        self.finished = 0

    def __enter__(self) -> RunDisplay:
        if self.enabled:
            self.progress.start()
            self._task_id = self.progress.add_task("running", total=self.total, current="")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.enabled:
            self.progress.stop()

    def node_started(self, node: Node) -> None:
        if self.enabled:
            self.progress.update(self._task_id, current=node.key)

    def node_finished(self, node: Node, result: TaskResult) -> None:
        self.finished += 1
        if self.enabled:
            if self.finished > self.total:  # loops add nodes as they expand
                self.total = self.finished
                self.progress.update(self._task_id, total=self.total)
            self.progress.update(self._task_id, completed=self.finished)
            if result.status is Status.FAILED:
                self.progress.console.print(
                    f"[red]✗ {escape(result.key)}[/]: {escape(result.error or '')}"
                )


def table_widget(table: TableView, title: str) -> Table:
    from rich.table import Table

    # the title as the table's caption line above it would wrap to the table's width (a
    # one-column table of short values put 5 letters a line): it is printed on its own
    widget = Table(show_lines=False)
    for column in table.columns:
        widget.add_column(escape(column), overflow="fold")
    for row in table.rows[:MAX_ROWS]:
        widget.add_row(*(escape(format_cell(v)) for v in row))
    if len(table.rows) > MAX_ROWS:
        widget.caption = counted(len(table.rows) - MAX_ROWS, "more row")
    return widget


def counted(number: int, noun: str) -> str:
    """`1 row`, `2 rows`, `1 more row`."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


SHOWN_CHARACTERS = 20_000  # of one text output on a terminal


def _show_output(console: Console, name: str, output: Any) -> None:
    if isinstance(output, TableView):
        console.print(f"{escape(name)} ({counted(len(output), 'row')})", highlight=False)
        console.print(table_widget(output, name))
    elif isinstance(output, list):
        console.print(f"[bold]{escape(name)}[/] ({counted(len(output), 'iteration')})")
    elif isinstance(output, dict):
        keys = ", ".join(output) or "no tasks ran"
        console.print(f"[bold]{escape(name)}[/]: {escape(keys)}")
    else:
        title = f"[bold]{escape(name)}"
        score = getattr(output, "score", None)
        runs = getattr(output, "runs", None)
        if isinstance(score, float) and isinstance(runs, list):
            title += f" (consistency {score:.2f}: run {output.selected} selected of {len(runs)})"
        console.rule(title, align="left")
        text = str(output).strip()
        if console.is_terminal and len(text) > SHOWN_CHARACTERS:
            # rich lays out 10 MB of text for most of a minute; a terminal shows the start
            hidden = len(text) - SHOWN_CHARACTERS
            console.print(escape(text[:SHOWN_CHARACTERS]), highlight=False)
            console.print(
                f"[dim]… {hidden:,} more characters not shown: --format json, an export, or "
                "stdout to a file has all of it[/]"
            )
        elif not console.is_terminal:
            console.file.write(printable(text) + "\n")  # in full, without rich's slow layout
        else:
            console.print(escape(text), highlight=False)


def usage_line(usage: Usage) -> str:
    """`3 (1 cached), tokens 120 in / 40 out, $0.0012, 2 retries`."""
    cost = f"${usage.cost:.4f}" if usage.cost_known else "cost unknown"
    line = (
        f"{usage.calls} ({usage.cached} cached), tokens {usage.input_tokens} in / "
        f"{usage.output_tokens} out, {cost}"
    )
    if usage.retries:
        line += f", {usage.retries} retries"
    if usage.failures:
        line += f", {usage.failures} failed"
    return line


def usage_table(by_task: dict[str, Usage]) -> Table:
    """Model usage per task."""
    from rich.table import Column, Table

    table = Table(
        Column("task", overflow="fold", min_width=20),  # folded, never cut to `top_count…`
        "calls",
        "cached",
        "tokens in",
        "tokens out",
        "cost",
        "seconds",
        title="model usage",
        title_justify="left",
    )
    for key, usage in by_task.items():
        cost = f"${usage.cost:.4f}" if usage.cost_known else "?"
        table.add_row(
            escape(key),
            str(usage.calls),
            str(usage.cached),
            str(usage.input_tokens),
            str(usage.output_tokens),
            cost,
            f"{usage.latency:.2f}",
        )
    return table


def print_run(
    result: RunResult, plan: Plan, *, quiet: bool = False, stream: TextIO | None = None
) -> None:
    """Top-level outputs in task order, then the summary line (on `stream`, else stdout)."""
    from ..masking import masked

    # an answer may repeat a key it was given
    out = Console(file=masked(stream if stream is not None else sys.stdout))
    if not quiet:
        for task in plan.tasks:
            if task.name in result.outputs:
                _show_output(out, task.name, result.outputs[task.name])
    err = Console(file=masked(sys.stderr), soft_wrap=True)
    for item in result.results:
        if item.status is Status.FAILED:
            err.print(
                f"{_MARK[item.status]} [bold]{escape(item.key)}[/]: {escape(item.error or '')}"
            )
    counts = result.counts()
    parts = [f"{counts['succeeded']} succeeded"]
    for status in ("failed", "skipped", "cancelled"):
        if counts[status]:
            parts.append(f"{counts[status]} {status}")
    usage = result.usage
    if usage is not None and usage.total.calls + usage.total.failures:
        if not quiet and len(usage.by_task) > 1:
            out.print(usage_table(usage.by_task))
        out.print(f"model calls {usage_line(usage.total)}", highlight=False, soft_wrap=True)
    stats = result.stats
    if stats.get("judge_calls") or stats.get("judge_calls_saved"):
        out.print(
            f"judge calls {stats.get('judge_calls', 0)} "
            f"({stats.get('judge_calls_saved', 0)} saved by clustering and the pre-judge)",
            highlight=False,
        )
    if result.resumed_from:
        out.print(
            f"resumed from run {result.resumed_from}: {stats.get('reused', 0)} finished "
            "tasks reused",
            highlight=False,
        )
    if result.files:
        out.print("files written:", highlight=False)
        for path in result.files:
            out.print(f"  {escape(path)}", highlight=False, soft_wrap=True)
    mark = _MARK[result.status]
    # the file's tasks as `validate` counts them; nodes add each loop iteration's tasks
    tasks, nodes = plan.count_nodes(), len(result.results)
    count = counted(tasks, "task") + (f", {counted(nodes, 'node')}" if nodes != tasks else "")
    out.print(
        f"{mark} {escape(result.workflow)}: {count} "
        f"({', '.join(parts)}) in {result.duration:.2f} s  run {result.run_id}",
        highlight=False,
        soft_wrap=True,
    )
