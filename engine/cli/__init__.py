"""The `accord` command line: parse, call the engine, render. Nothing else lives here.

- `app`: the group (`main`), its lazy command map (`LazyGroup`), the error handling every
  command is wrapped in (`handle_errors`) and the exit codes;
- `options`: each command's options declared once (its dataclass's fields, the shared ones
  from one table), and the parameter types;
- `signals`: Ctrl-C and SIGTERM during a run (`interruptible`);
- the commands: `run`, `validate` (with `graph` and `schema`), `runs` (the run store),
  `project` (`init`, `trust`). The evaluation commands (`test`, `eval`, `view`, `runs
  compare`) are added to the lazy map by `accord.cli`.

Imports of the engine happen inside the commands so that `accord --help` stays fast.
"""

from __future__ import annotations

from . import project, run, runs, validate
from .app import EXIT_FAILED, EXIT_INVALID, EXIT_NO_RESULT, EXIT_OK, LazyGroup, handle_errors, main
from .options import (
    SHARED,
    CommandParams,
    FiniteFloatRange,
    OutputFile,
    argument,
    check_resume,
    declared_options,
    executor_options,
    option,
    shared,
)
from .run import exit_code_for
from .runs import store_options, store_path
from .signals import interruptible

__all__ = [
    "EXIT_FAILED",
    "EXIT_INVALID",
    "EXIT_NO_RESULT",
    "EXIT_OK",
    "SHARED",
    "CommandParams",
    "FiniteFloatRange",
    "LazyGroup",
    "OutputFile",
    "argument",
    "check_resume",
    "declared_options",
    "executor_options",
    "exit_code_for",
    "handle_errors",
    "interruptible",
    "main",
    "option",
    "project",
    "run",
    "runs",
    "shared",
    "store_options",
    "store_path",
    "validate",
]
