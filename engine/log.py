"""structlog set-up: human-readable on a terminal, JSON lines otherwise, always on stderr."""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

_configured = False


def configure(level: str = "warning", *, json_logs: bool | None = None) -> None:
    """Route structlog to stderr at `level`; JSON when stderr is not a terminal."""
    global _configured
    numeric = getattr(logging, level.upper(), logging.WARNING)
    use_json = (not sys.stderr.isatty()) if json_logs is None else json_logs
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if use_json
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    _configured = True


def get() -> Any:
    """The logger; quiet (warnings and up) until `configure` says otherwise."""
    if not _configured:
        configure()
    return structlog.get_logger("accord")
