"""``[dlt_ops.lineage]``: where OpenLineage events go, checked when the config loads.

The table is optional; without it no event is built. Every key is checked here, so a typo in
the transport or a missing ``url`` fails every command that loads the config (exit 2), not the
first run that tries to send.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dlt_ops.errors import ConfigError, ConfigValueError
from dlt_ops.redact import remember_secret

TRANSPORTS = ("http", "file", "console")
#: Seconds a run may wait, at its end, for its events to be delivered.
DEFAULT_TIMEOUT = 5.0
_KEY = "[dlt_ops.lineage]"
_KNOWN = ("transport", "url", "endpoint", "api_key", "api_key_env", "path", "namespace",
          "timeout")  # fmt: skip


@dataclass(frozen=True)
class LineageConfig:
    """The checked ``[dlt_ops.lineage]`` table."""

    transport: str
    #: the job namespace (default: the project directory's name)
    namespace: str
    timeout: float = DEFAULT_TIMEOUT
    url: str | None = None
    endpoint: str = "api/v1/lineage"
    api_key: str | None = None
    #: ``file``: the JSON-lines file events are appended to (absolute)
    path: Path | None = None

    def transport_options(self) -> dict[str, Any]:
        """The openlineage-python transport config (``TransportFactory.create``'s input)."""
        if self.transport == "http":
            options: dict[str, Any] = {
                "type": "http", "url": self.url, "endpoint": self.endpoint,
                "timeout": self.timeout,
                # the run waits at most `timeout` in total; a retry storm must not outlive it
                "retry": {"total": 1, "backoff_factor": 0.1},
            }  # fmt: skip
            if self.api_key:
                options["auth"] = {"type": "api_key", "apiKey": self.api_key}
            return options
        if self.transport == "file":
            return {"type": "file", "log_file_path": str(self.path), "append": True}
        return {"type": "console"}


def _str(table: Mapping[str, Any], key: str, path: Path) -> str | None:
    value = table.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise ConfigValueError(path, f"{_KEY} {key}", "a non-empty string", value)
    return value


def _api_key(table: Mapping[str, Any], path: Path) -> str | None:
    key = _str(table, "api_key", path)
    env = _str(table, "api_key_env", path)
    if key and env:
        raise ConfigError(f"{path}: {_KEY}: set api_key or api_key_env, not both.")
    if env:
        key = os.environ.get(env) or None
        if key is None:
            raise ConfigError(
                f"{path}: {_KEY} api_key_env names ${env}, which is not set. Export it, or "
                f"remove api_key_env."
            )
    if key:
        remember_secret(key)  # masked in every log line, ledger row and event from now on
    return key


def _timeout(table: Mapping[str, Any], path: Path) -> float:
    value = table.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 300:
        raise ConfigValueError(path, f"{_KEY} timeout", "a number of seconds in (0, 300]", value)
    return float(value)


def parse_lineage(table: Any, path: Path, root: Path) -> LineageConfig | None:
    """``[dlt_ops.lineage]`` checked (``ConfigError`` naming the key); ``None`` when absent."""
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigValueError(path, _KEY, "a table", table)
    unknown = sorted(set(table) - set(_KNOWN))
    if unknown:
        raise ConfigError(
            f"{path}: {_KEY}: unknown key(s) {', '.join(unknown)}; known keys: {', '.join(_KNOWN)}."
        )
    transport = table.get("transport")
    if transport not in TRANSPORTS:
        raise ConfigValueError(path, f"{_KEY} transport", " or ".join(f'"{t}"' for t in TRANSPORTS),
                               transport)  # fmt: skip
    url = _str(table, "url", path)
    if transport == "http" and not (url and url.startswith(("http://", "https://"))):
        raise ConfigValueError(path, f"{_KEY} url", "an http:// or https:// URL", url)
    file = _str(table, "path", path)
    if transport == "file" and not file:
        raise ConfigError(f'{path}: {_KEY}: transport "file" needs path = "<events file>".')
    return LineageConfig(
        transport=transport,
        namespace=_str(table, "namespace", path) or root.name,
        timeout=_timeout(table, path),
        url=url,
        endpoint=_str(table, "endpoint", path) or "api/v1/lineage",
        api_key=_api_key(table, path),
        path=(root / file).resolve() if file else None,
    )
