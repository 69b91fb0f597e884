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
