"""structlog setup, called once by the CLI callback (library code never configures logging).

Logs go to stderr: a console renderer on a TTY, JSON lines otherwise or with
``--log-format json``. dlt's stdlib logging is routed through the same processors, and every
string a log line carries passes through secret redaction.
"""

from __future__ import annotations

import logging
import sys
from enum import StrEnum
from types import ModuleType
from typing import Any

from dlt_ops.redact import redact


def _import_structlog() -> ModuleType:
    """Import structlog without letting it pull in rich (~40 ms per CLI process).

    structlog imports rich only to render pretty tracebacks, which we do not use; hiding rich
    while structlog's modules load makes it fall back to plain tracebacks. rich stays fully
    importable afterwards (typer renders ``--help`` with it).
    """
    if "structlog" in sys.modules:
        return sys.modules["structlog"]
    hide = "rich" not in sys.modules
    if hide:
        sys.modules["rich"] = None  # type: ignore[assignment]
    try:
        import structlog
    finally:
        if hide:
            del sys.modules["rich"]
    return structlog


structlog = _import_structlog()


class LogFormat(StrEnum):
    """How log lines are rendered."""

    auto = "auto"
    console = "console"
    json = "json"


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: "***" if str(k).lower() in _SECRET_KEYS else _scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_scrub(v) for v in value)
    return value


_SECRET_KEYS = frozenset({"password", "passwd", "pwd", "secret", "token", "private_key", "api_key"})


def _redact_strings(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
    return {k: _scrub(v) for k, v in event.items()}


def configure_logging(fmt: LogFormat = LogFormat.auto, *, debug: bool = False) -> None:
    """Configure structlog and the stdlib root logger for one CLI process."""
    use_json = fmt == LogFormat.json or (fmt == LogFormat.auto and not sys.stderr.isatty())
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if use_json
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _redact_strings,
    ]
    if use_json:
        shared.append(structlog.processors.format_exc_info)
    level = logging.DEBUG if debug else logging.INFO
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.make_filtering_bound_logger(level),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def only_warnings() -> None:
    """From now on log only warnings and errors (a command's ``--quiet``); ``--debug`` wins.

    Call it before the command logs anything: a logger caches its level on first use.
    """
    root = logging.getLogger()
    if root.level <= logging.DEBUG:
        return
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    root.setLevel(logging.WARNING)
