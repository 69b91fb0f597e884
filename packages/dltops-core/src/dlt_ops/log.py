"""structlog setup, called once by the CLI callback (library code never configures logging).

Logs go to stderr: a console renderer on a TTY, JSON lines otherwise or with
``--log-format json``. dlt's stdlib logging is routed through the same processors, and every
string a log line carries passes through secret redaction.

structlog is imported on first use, not at start-up: it costs ~45 ms (it imports asyncio), and
most ``pipeline status`` or ``runs list`` calls never log. :func:`configure_logging` only
records the settings and installs three things that apply them the moment they are needed:

- :func:`get_logger` hands out loggers that import structlog on their first call;
- the stdlib root logger gets a handler whose formatter builds structlog's on its first record;
- an import hook configures structlog right after *anyone* imports it, so a plugin or source
  that calls ``structlog.get_logger()`` itself logs to stderr, redacted, like our own code.
"""

from __future__ import annotations

import contextvars
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from enum import StrEnum
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType
from typing import Any

from dlt_ops.redact import redact


class LogFormat(StrEnum):
    """How log lines are rendered."""

    auto = "auto"
    console = "console"
    json = "json"


@dataclass
class _Settings:
    use_json: bool
    colors: bool
    level: int


_settings: _Settings | None = None  # set by configure_logging; None: structlog's defaults
_applied = False
_lock = threading.RLock()


@contextmanager
def _without_rich() -> Iterator[None]:
    """While structlog loads, rich is not importable: structlog imports it (~40 ms) only for
    pretty tracebacks, which we do not use. rich stays importable afterwards."""
    hide = "rich" not in sys.modules
    if hide:
        sys.modules["rich"] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if hide:
            del sys.modules["rich"]


def _import_structlog() -> ModuleType:
    if "structlog" not in sys.modules:
        with _without_rich():
            import structlog  # noqa: F401
    return sys.modules["structlog"]


def _structlog() -> ModuleType:
    """structlog, imported and (when the CLI asked for it) configured."""
    structlog = _import_structlog()
    if _settings is not None and not _applied:
        _apply(structlog)
    return structlog


def get_logger(name: str) -> Any:
    """A structlog logger for ``name`` that imports structlog on its first call."""
    return _LazyLogger(name)


def bound_contextvars(**values: Any) -> AbstractContextManager[None]:
    """structlog's ``bound_contextvars``: ``values`` ride on every log line inside the block."""
    contextvars: Any = _structlog().contextvars
    bound: AbstractContextManager[None] = contextvars.bound_contextvars(**values)
    return bound


def context_thread(target: Callable[..., Any], *args: Any, name: str) -> threading.Thread:
    """A daemon thread (not started) that runs ``target`` in a copy of the caller's context,
    so its log lines keep the values bound around it (a run's id, a backfill chunk)."""
    ctx = contextvars.copy_context()
    return threading.Thread(target=ctx.run, args=(target, *args), name=name, daemon=True)


class _LazyLogger:
    __slots__ = ("_logger", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def __getattr__(self, attribute: str) -> Any:  # info, warning, bind, ...
        if self._logger is None and _below_level(attribute):
            return _drop  # a debug line at info level need not load structlog to be dropped
        if self._logger is None:
            self._logger = _structlog().get_logger(self._name)
        return getattr(self._logger, attribute)


_METHOD_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "warn": logging.WARNING,
}


def _below_level(method: str) -> bool:
    settings = _settings
    return settings is not None and _METHOD_LEVELS.get(method, logging.CRITICAL) < settings.level


def _drop(*args: Any, **kwargs: Any) -> None:
    return None


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
    scrubbed: dict[str, Any] = _scrub(event)  # keys at every level: log.info(..., token=...)
    return scrubbed


def _apply(structlog: ModuleType) -> None:
    """Configure structlog and the root handler's formatter from :data:`_settings`; once."""
    global _applied
    with _lock:
        if _applied or _settings is None:
            return
        settings = _settings
        renderer: Any = (
            structlog.processors.JSONRenderer()
            if settings.use_json
            else structlog.dev.ConsoleRenderer(colors=settings.colors)
        )
        shared: list[Any] = [
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _redact_strings,
        ]
        if settings.use_json:
            shared.append(structlog.processors.format_exc_info)
        structlog.configure(
            processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
            logger_factory=structlog.stdlib.LoggerFactory(),
            wrapper_class=structlog.make_filtering_bound_logger(settings.level),
            cache_logger_on_first_use=True,
        )
        _handler.formatter = structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
        )
        _applied = True


class _FormatOnFirstRecord(logging.Formatter):
    """Stands in for structlog's formatter until a stdlib record (dlt's, a driver's) arrives."""

    def format(self, record: logging.LogRecord) -> str:
        _structlog()  # replaces this formatter on the handler
        formatter = _handler.formatter
        if formatter is self or formatter is None:  # no settings: plain, still redacted
            return redact(super().format(record))
        return formatter.format(record)


#: the root logger's handler; a new one per configure_logging (tests swap sys.stderr)
_handler: logging.Handler = logging.NullHandler()


class _ConfigureOnImport:
    """A ``sys.meta_path`` finder: whoever imports structlog first gets it configured."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != "structlog":
            return None
        spec = PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _ConfiguringLoader(spec.loader)  # type: ignore[assignment]
        return spec


class _ConfiguringLoader:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        with _without_rich():
            self.inner.exec_module(module)
        _apply(module)


_FINDER = _ConfigureOnImport()


class _OneLineErrors(logging.Filter):
    """Without ``--debug``, a stdlib record's traceback (dlt's ``logger.exception`` on a full
    disk or a lost destination, a driver's) becomes one line: the exception's type and
    message join the record's own, and the traceback is dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, dict):  # structlog's own event, rendered by its processors
            return True
        exc = record.exc_info[1] if record.exc_info else None
        message = record.getMessage()
        if _TRACEBACK in message:  # dlt quotes a failed job's traceback in the message itself
            message = _without_traceback(message)
        if exc is not None:
            first = next(iter(str(exc).splitlines()), "")
            message = f"{message}: {type(exc).__name__}: {first}".rstrip(": ")
        record.msg, record.args = message, ()
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


_TRACEBACK = "Traceback (most recent call last):"


def _without_traceback(message: str) -> str:
    """``message`` up to the traceback it quotes, then the last exception's first line (the
    first unindented line after the last traceback's frames)."""
    head, _, rest = message.partition(_TRACEBACK)
    last = rest.rpartition(_TRACEBACK)[2]
    cause = next((ln for ln in last.splitlines() if ln.strip() and not ln[0].isspace()), "")
    return f"{head.rstrip()} {cause.strip()}".strip()


_ONE_LINE = _OneLineErrors()


def _one_line_errors(on: bool) -> None:
    """Put (or, for ``--debug``, take) :class:`_OneLineErrors` on dlt's logger, which does not
    propagate, and on the root handler every other library's records reach."""
    for target in (logging.getLogger("dlt"), _handler):
        if on:
            target.addFilter(_ONE_LINE)
        else:
            target.removeFilter(_ONE_LINE)


def configure_logging(fmt: LogFormat = LogFormat.auto, *, debug: bool = False) -> None:
    """Set how structlog and the stdlib root logger render, for one CLI process."""
    global _settings, _applied, _handler
    tty = sys.stderr.isatty()
    use_json = fmt == LogFormat.json or (fmt == LogFormat.auto and not tty)
    level = logging.DEBUG if debug else logging.INFO
    with _lock:
        _settings = _Settings(use_json=use_json, colors=tty, level=level)
        _applied = False
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(_FormatOnFirstRecord())
        root = logging.getLogger()
        root.handlers[:] = [_handler]
        root.setLevel(level)
        _one_line_errors(not debug)
        if "structlog" in sys.modules:
            _apply(sys.modules["structlog"])
        elif _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)


def only_errors() -> None:
    """From now on log only errors (a command's ``--quiet``: README promises nothing else on
    stderr); ``--debug`` wins.

    Call it before the command logs anything: a logger caches its level on first use.
    """
    root = logging.getLogger()
    if root.level <= logging.DEBUG:
        return
    root.setLevel(logging.ERROR)
    # dlt's own "dlt" logger does not propagate and takes its level from dlt's config (default
    # WARNING); the environment is dlt's first provider, and its runtime reads it on first use
    os.environ["RUNTIME__LOG_LEVEL"] = "ERROR"
    with _lock:
        if _settings is not None:
            _settings.level = logging.ERROR
        if _applied:
            structlog = sys.modules["structlog"]
            structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))


def current_format() -> tuple[LogFormat, int]:
    """How this process was configured to log, ``(format, level)``, for
    :func:`configure_like` in a child process the command starts (``dlt_ops.isolation``)."""
    settings = _settings
    if settings is None:
        return LogFormat.auto, logging.INFO
    return (LogFormat.json if settings.use_json else LogFormat.console), settings.level


def configure_like(fmt: LogFormat, level: int) -> None:
    """Configure logging as :func:`current_format` described its parent's."""
    configure_logging(fmt, debug=level <= logging.DEBUG)
    if level >= logging.ERROR:
        only_errors()
