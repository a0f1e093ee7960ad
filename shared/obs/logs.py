"""structlog set-up: JSON lines with request, table and player ids bound per request.

Handlers bind ids with ``structlog.contextvars.bind_contextvars``; each log
line merges whatever the current task has bound, so a line written deep in a
commit still says which request, table and player it belongs to.

structlog is configured once, when this module is imported, to hand every
event to stdlib ``logging``; one handler on the root logger renders it to
stderr. So a logger bound at import time (before :func:`configure_logging`)
still ends up in the configured format, and the libraries' own stdlib lines
(grpc, nats, asyncio, redis, warnings) come out the same way. Nothing is ever
written to stdout, which belongs to a command's own output.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR}

#: Added to every line, whether structlog or a library's stdlib logger wrote it.
_COMMON: list[Any] = [
    structlog.contextvars.merge_contextvars,
    structlog.processors.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]

structlog.configure(
    processors=[structlog.stdlib.filter_by_level, *_COMMON,
                structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
    logger_factory=structlog.stdlib.LoggerFactory(),
    wrapper_class=structlog.stdlib.BoundLogger,
    cache_logger_on_first_use=True,
)


class _ClientGone(logging.Filter):
    """grpc logs a traceback when a reply cannot be sent because the client already left
    (deadline passed, connection dropped): routine for mobile clients, so one info line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("grpc.") and record.getMessage().startswith("ExecuteBatchError raised"):
            record.levelno, record.levelname = logging.INFO, "INFO"
            record.msg, record.args = "client_gone_before_reply", ()
            record.exc_info, record.exc_text = None, None
        return True


def _handler(fmt: str) -> logging.Handler:
    renderer: Any = (structlog.dev.ConsoleRenderer(colors=False) if fmt == "console"
                     else structlog.processors.JSONRenderer())
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name("stammtisch")
    handler.addFilter(_ClientGone())
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*_COMMON, structlog.stdlib.add_logger_name],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    structlog.processors.format_exc_info, renderer]))
    return handler


def configure_logging(level: str = "info", fmt: str = "json") -> None:
    """Set the process's level and format (`fmt` is "json" or "console"); safe to call again."""
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == "stammtisch"]:
        root.removeHandler(old)
    root.addHandler(_handler(fmt))
    root.setLevel(_LEVELS.get(level, logging.INFO))
    logging.captureWarnings(True)


def get_logger(name: str) -> Any:
    """A logger that tags every line with the emitting component."""
    return structlog.get_logger(f"stammtisch.{name}", component=name)


configure_logging()
