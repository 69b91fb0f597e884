"""dlt's postgres credentials → libpq connection parameters for psycopg 3.

dlt accepts two forms for ``destination.postgres.credentials`` and so do we:

* a connection string ``postgresql://user:password@host:port/database?sslmode=require``
  (``postgres://`` too; user and password are percent-decoded);
* a table of fields with dlt's names: ``database``, ``username``, ``password``, ``host``,
  ``port``, ``connect_timeout``, ``client_encoding``, ``session_timezone``, an optional
  ``query`` table, and any other libpq option (``sslmode``, ``sslrootcert``, ...) as is.

Nothing here imports psycopg. Every password seen is remembered for redaction.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from dlt_ops.errors import ConfigError
from dlt_ops.redact import redact, remember_secret

SCHEMES = ("postgresql", "postgres")
DEFAULT_PORT = 5432
_RENAMED = {"username": "user", "database": "dbname"}
_DLT_ONLY = frozenset({"drivername", "session_timezone", "query"})
_FIX = (
    "Set DESTINATION__POSTGRES__CREDENTIALS (a postgresql://user:password@host:port/database "
    "string) or the fields of [destination.postgres.credentials] in .dlt/secrets.toml."
)


def _parse_url(value: str) -> dict[str, Any]:
    try:
        parts = urlsplit(value.strip())
        remember_secret(unquote(parts.password or ""))
        port = parts.port
    except ValueError as exc:
        raise ConfigError(
            f"postgres credentials {redact(value)!r} are not a valid connection string ({exc}). "
            f"{_FIX}"
        ) from None
    if parts.scheme.split("+")[0] not in SCHEMES or not parts.netloc:
        raise ConfigError(
            f"postgres credentials {redact(value)!r} are not a postgresql:// connection string. "
            f"{_FIX}"
        )
    fields: dict[str, Any] = {
        "username": unquote(parts.username) if parts.username else None,
        "password": unquote(parts.password) if parts.password is not None else None,
        "host": parts.hostname,
        "port": port,
        "database": unquote(parts.path.lstrip("/")) or None,
        "query": dict(parse_qsl(parts.query)),
    }
    return {k: v for k, v in fields.items() if v not in (None, "")}


def _as_int(name: str, value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ConfigError(
            f"postgres credentials field '{name}' must be a whole number, got {value!r}. Fix "
            f"{name} in [destination.postgres.credentials] or DESTINATION__POSTGRES__CREDENTIALS__"
            f"{name.upper()}."
        ) from None


def libpq_params(credentials: object, default_timeout_s: float = 10.0) -> dict[str, Any]:
    """Keyword arguments for ``psycopg.connect`` from dlt-style ``credentials``.

    ``connect_timeout`` defaults to ``default_timeout_s`` (rounded up to whole seconds), and the
    session time zone to UTC so timestamps come back aware and comparable.
    """
    if isinstance(credentials, str) and credentials.strip():
        fields = _parse_url(credentials)
    elif isinstance(credentials, Mapping) and credentials:
        fields = dict(credentials)
    else:
        raise ConfigError(f"no credentials found for the postgres destination. {_FIX}")
    query = fields.get("query") or {}
    if isinstance(query, str):
        query = dict(parse_qsl(query.lstrip("?")))
    params: dict[str, Any] = {}
    for key, value in [*dict(query).items(), *fields.items()]:
        if value is None or key in _DLT_ONLY:
            continue
        params[_RENAMED.get(str(key), str(key))] = value
    if isinstance(params.get("password"), str):
        params["password"] = params["password"].strip()  # as dlt does on resolve
        remember_secret(params["password"])
    params["port"] = _as_int("port", params.get("port", DEFAULT_PORT))
    if "connect_timeout" in params:
        params["connect_timeout"] = _as_int("connect_timeout", params["connect_timeout"])
    else:
        params["connect_timeout"] = max(1, math.ceil(default_timeout_s))
    options = str(params.get("options") or "")
    tz = fields.get("session_timezone")
    if tz:
        options = f"{options} -c TimeZone={tz}".strip()
    elif "timezone=" not in options.lower().replace(" ", ""):
        options = f"{options} -c TimeZone=UTC".strip()
    params["options"] = options
    return params


def describe(params: Mapping[str, Any]) -> str:
    """``postgresql://user:***@host:port/db``: safe to show in errors and logs."""
    user = params.get("user") or ""
    auth = f"{user}:***@" if params.get("password") else (f"{user}@" if user else "")
    host = params.get("host") or "localhost"
    port = params.get("port", DEFAULT_PORT)
    return f"postgresql://{auth}{host}:{port}/{params.get('dbname', '')}"


#: the fields of dlt's postgres credentials; any other key of a table is a libpq option
_DLT_FIELDS = frozenset(
    {"drivername", "database", "password", "username", "host", "port", "query",
     "connect_timeout", "client_encoding", "session_timezone"}
)  # fmt: skip


def dlt_credentials(credentials: object) -> object:
    """``credentials`` in the form dlt takes as given: a connection string stays as it is; a
    table of fields moves its libpq options (``sslmode``, ...) into ``query``, where dlt's own
    credentials carry them (at the top level dlt would drop them without a word)."""
    if not isinstance(credentials, Mapping):
        return credentials
    query = credentials.get("query") or {}
    if isinstance(query, str):
        query = dict(parse_qsl(query.lstrip("?")))
    options = {str(k): v for k, v in credentials.items() if k not in _DLT_FIELDS}
    fields = {k: v for k, v in credentials.items() if k in _DLT_FIELDS}
    return {**fields, "query": {**dict(query), **options}} if options or query else fields
