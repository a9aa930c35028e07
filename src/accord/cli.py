"""The `accord` command: the engine's commands (run, validate, graph, schema, runs) and the
evaluation commands of `accord.tasks`, imported only when one of them runs."""

from __future__ import annotations

from typing import cast

from .engine.cli import LazyGroup, main
from .engine.cli.runs import runs

main.lazy["test"] = (
    "accord.tasks.suites.commands.test:test_command",
    "Run the tests of a workflow, an agent or a .test.yml file.",
)
main.lazy["eval"] = (
    "accord.tasks.suites.commands.eval:eval_command",
    "Run evaluation suites (.eval.yml, .test.yml) and report their cases.",
)
main.lazy["view"] = (
    "accord.tasks.suites.compare.command:view_command",
    "A local web page over the run store: runs, cases, comparisons.",
)
cast(LazyGroup, runs).lazy["compare"] = (
    "accord.tasks.suites.compare.command:compare_command",
    "Compare two runs (or results files) case by case, with paired tests.",
)
cast(LazyGroup, runs).lazy["baselines"] = (
    "accord.tasks.suites.compare.baselines:baselines_command",
    "Automatic battle baselines: list them, or --reset them.",
)

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    main()
