"""structlog set-up: readable lines, or JSON lines with `--log-format json` or a command's
`--format json`; always on stderr.

structlog (and the rich tracebacks its console renderer pulls in) costs ~50 ms to import, so it
is imported only when a message at an enabled level is actually logged: `accord validate`
and quiet runs never pay for it.

A message logged with its exception (`log.exception`) shows the exception's one line and the
request to report the bug; its traceback only with `--debug`, as plain text, never with the
frames' local variables (they hold keys and whole configurations). Every value is masked
(engine/masking) before it is rendered.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Mapping, MutableMapping
from contextvars import ContextVar
from typing import Any

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "exception": logging.ERROR,
}
_state: dict[str, Any] = {
    "level": logging.WARNING, "json": None, "ready": False, "tracebacks": False,
}  # fmt: skip
BUG_HINT = (
    "this is a bug in accord: please report it with the command you ran (--debug shows the "
    "traceback)"
)
# Fields every message in this asyncio context carries: `run_id` for a run; inside a node
# (each runs in an asyncio task of its own, so nothing leaks to another) its `task` and `type`,
# read from the node the scheduler sets in `current_node` (one set per node, no dict built).
_bound: ContextVar[Mapping[str, Any] | None] = ContextVar("accord_log_fields", default=None)
current_node: ContextVar[Any] = ContextVar("accord_node", default=None)


def bind_context(**values: Any) -> None:
    """Add fields to every message logged from here on in the current context."""
    _bound.set({**(_bound.get() or {}), **values})


def configure(
    level: str = "warning", *, json_logs: bool | None = None, tracebacks: bool = False
) -> None:
    """Log at `level` and above, to stderr; JSON lines when `json_logs` (None: readable
    lines, unless a command's JSON output asks for JSON logs with `json_by_default`);
    exceptions with their traceback when `tracebacks` (`--debug`)."""
    _state["level"] = getattr(logging, level.upper(), logging.WARNING)
    _state["json"] = json_logs
    _state["tracebacks"] = tracebacks
    _state["ready"] = False


def json_by_default() -> None:
    """A command writing JSON (`--format json`) logs JSON lines too, unless `--log-format`
    said otherwise."""
    if _state["json"] is None:
        _state["json"] = True
        _state["ready"] = False


def enabled(level: str) -> bool:
    """Whether a message at `level` would be written."""
    return _LEVELS.get(level, logging.INFO) >= int(_state["level"])


def _exception(logger: Any, name: str, event: MutableMapping[str, Any]) -> Mapping[str, Any]:
    """`exc_info` as the exception's line and the bug-report request; with `--debug`, also
    its plain traceback (structlog's console renderer would draw Rich's, with locals)."""
    exc_info = event.pop("exc_info", None)
    if not exc_info:
        return event
    if exc_info is True:
        exc_info = sys.exc_info()
    elif isinstance(exc_info, BaseException):
        exc_info = (type(exc_info), exc_info, exc_info.__traceback__)
    kind, exc, tb = exc_info
    if kind is None:
        return event
    event.setdefault("error", f"{kind.__name__}: {exc}")
    event.setdefault("hint", BUG_HINT)
    if _state["tracebacks"]:
        import traceback

        event["exception"] = "".join(traceback.format_exception(kind, exc, tb))
    return event


def _masked(logger: Any, name: str, event: MutableMapping[str, Any]) -> Mapping[str, Any]:
    from .masking import mask, mask_data

    plain = (str, int, float, bool, type(None), dict, list, tuple)
    return {
        key: mask_data(value) if isinstance(value, plain) else mask(repr(value))
        for key, value in event.items()
    }


def _structlog() -> Any:
    import structlog

    if not _state["ready"]:
        use_json = bool(_state["json"])
        renderer: Any = (
            structlog.processors.JSONRenderer()
            if use_json
            else structlog.dev.ConsoleRenderer(
                colors=sys.stderr.isatty(), exception_formatter=structlog.dev.plain_traceback
            )
        )
        structlog.configure(
            processors=[
                structlog.contextvars.merge_contextvars,
                structlog.processors.add_log_level,
                structlog.processors.TimeStamper(fmt="iso", utc=True),
                _exception,
                _masked,
                renderer,
            ],
            wrapper_class=structlog.make_filtering_bound_logger(int(_state["level"])),
            logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
            cache_logger_on_first_use=False,
        )
        _state["ready"] = True
    return structlog.get_logger("accord")


class Logger:
    """A structlog logger created on the first message that is not filtered out."""

    def __init__(self, context: dict[str, Any] | None = None) -> None:
        self._context = context or {}

    def bind(self, **values: Any) -> Logger:
        return Logger({**self._context, **values})

    def _emit(self, level: str, event: str, values: dict[str, Any]) -> None:
        if not enabled(level):
            return
        fields = {**(_bound.get() or {}), **self._context}
        node = current_node.get()
        if node is not None:
            fields.setdefault("task", node.key)
            fields.setdefault("type", node.type)
        # stderr full (/dev/full, a full disk) or closed (2>&-, then it is None): the line is
        # lost and the run goes on (raising here once left a failed task unsettled: a hang)
        with contextlib.suppress(Exception):
            getattr(_structlog().bind(**fields), level)(event, **values)

    def debug(self, event: str, **values: Any) -> None:
        self._emit("debug", event, values)

    def info(self, event: str, **values: Any) -> None:
        self._emit("info", event, values)

    def warning(self, event: str, **values: Any) -> None:
        self._emit("warning", event, values)

    def error(self, event: str, **values: Any) -> None:
        self._emit("error", event, values)

    def exception(self, event: str, **values: Any) -> None:
        self._emit("exception", event, values)


def get() -> Logger:
    """The engine's logger; quiet (warnings and up) until `configure` says otherwise."""
    return Logger()
