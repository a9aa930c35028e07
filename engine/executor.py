"""Where node bodies do their work: the executor interface (SPEC §10).

The scheduler always runs in this process and decides what runs. A node body that does real
work asks the run's executor for it: model calls (`model_transport`, `limiters`), SQL queries
(`database`), programs (`program`: command targets, code judges, workspace scripts) and
evaluator work (`evaluate`: evaluators that need nothing of the run). The default executor
does all of it here, on the event loop and its threads; `RayExecutor`
(`engine/ray_executor.py`) sends it to a Ray cluster. The cache, the run store, retries and
usage stay with the caller in this process whichever executor runs the work.

The executor of the running node is found through a context variable, set by `execute` and
inherited by every task the scheduler starts.
"""

from __future__ import annotations

from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .databases.base import Database


class WorkFailure(Exception):
    """Work that gave no result for a reason its user should read (the message says why):
    a program that could not start or ran past its time, an evaluation that could not score.
    What the tasks raise for these (`TargetFailure`, `EvaluatorFailure`) derives from it, so an
    executor that runs the work elsewhere hands the reason back without knowing the tasks."""


class Executor:
    """The in-process executor: every method says "do it here" (None, or the object given)."""

    name = "local"
    remote = False

    def model_transport(self) -> Any | None:
        """An object whose `call(kwargs)` makes one litellm call elsewhere (None: here)."""
        return None

    def limiters(self) -> Any | None:
        """Rate limiters shared beyond this process (None: the client's own)."""
        return None

    def database(
        self, database: Database, spec: Any, root: Path, datasets: tuple[Path, ...]
    ) -> Database:
        """The database a node queries: `database` itself here."""
        return database

    async def program(
        self, argv: list[str], stdin: bytes, cwd: Path, timeout: float, env: dict[str, str] | None
    ) -> tuple[bytes, bytes, int] | None:
        """A program's (stdout, stderr, exit code) run elsewhere; None: run it here."""
        return None

    async def evaluate(self, evaluator: Any, case: Any, output: Any) -> Any | None:
        """A portable evaluator's finding computed elsewhere; None: compute it here."""
        return None

    def close(self) -> None:
        return None


LOCAL = Executor()
_current: ContextVar[Executor] = ContextVar("accord_executor", default=LOCAL)
_chosen: list[tuple[str | None, str | None]] = [(None, None)]  # --executor, --ray-address


def choose(name: str | None, address: str | None) -> None:
    """The command line's choice, for every run this process starts."""
    _chosen[0] = (name, address)


def chosen() -> tuple[str | None, str | None]:
    return _chosen[0]


def current() -> Executor:
    """The executor of the run this code runs in."""
    return _current.get()


def use(executor: Executor) -> Any:
    """Make `executor` the current one (in this context and the tasks it starts); returns the
    token `reset` takes."""
    return _current.set(executor)


def reset(token: Any) -> None:
    _current.reset(token)
