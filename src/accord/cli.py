"""The `accord` command: the engine's commands (run, validate, graph, schema, runs) and the
evaluation commands of `accord.tasks`, imported only when one of them runs."""

from __future__ import annotations

from accord.engine.cli import main

main.lazy["test"] = (
    "accord.tasks.suites.command:test_command",
    "Run the tests of a workflow, an agent or a .test.yml file.",
)
main.lazy["eval"] = (
    "accord.tasks.suites.eval_command:eval_command",
    "Run evaluation suites (.eval.yml, .test.yml) and report their cases.",
)

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    main()
