"""TOML reading with errors that name the file and say how to fix it."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from dlt_ops.errors import ConfigError, ConfigParseError


def read_toml(path: Path) -> dict[str, Any]:
    """Parse ``path``; ``{}`` when it does not exist."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}.") from exc
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigParseError(path, f"not UTF-8 ({exc.reason} at byte {exc.start})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigParseError(path, str(exc)) from exc


_CACHE: dict[Path, tuple[tuple[int, int], dict[str, Any]]] = {}


def read_toml_cached(path: Path) -> dict[str, Any]:
    """``read_toml`` memoised on the file's mtime and size; callers must not mutate the result.

    Commands that resolve credentials for many sources (``status`` over fifty of them) would
    otherwise re-parse ``secrets.toml`` and ``config.toml`` once per source, and the root check,
    the config loader and the credentials lookup would each parse ``config.toml`` again. A file
    that does not exist is not opened either (no ``secrets.toml``: once per source per command).
    """
    try:
        stat = path.stat()
    except FileNotFoundError:
        return {}
    except OSError:
        return read_toml(path)
    key = (stat.st_mtime_ns, stat.st_size)
    hit = _CACHE.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    data = read_toml(path)
    _CACHE[path] = (key, data)
    return data
