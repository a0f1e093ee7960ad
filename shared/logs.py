"""structlog set-up: JSON lines with request, table and player ids bound per request.

Handlers bind ids with ``structlog.contextvars.bind_contextvars``; each log
line merges whatever the current task has bound, so a line written deep in a
commit still says which request, table and player it belongs to.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR}


def configure_logging(level: str = "info", fmt: str = "json") -> None:
    """Configure structlog for the process; `fmt` is "json" or "console"."""
    renderer: Any = (structlog.dev.ConsoleRenderer(colors=False) if fmt == "console"
                     else structlog.processors.JSONRenderer())
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS.get(level, logging.INFO)),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )


def get_logger(name: str) -> Any:
    """A logger that tags every line with the emitting component."""
    return structlog.get_logger(component=name)
