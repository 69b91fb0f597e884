"""A derived adapter's credentials, made independent of the working directory.

dlt resolves a relative SQLite path (``sqlite:///rel.db``) against the process's current
directory; dlt-ops anchors it at the project root instead, as first-party file-engine adapters
do, so ``dlt-ops --root <project>`` from anywhere loads and keeps its ledger in the same file.
Only SQLite is rewritten: on a server engine ``database`` is a name, not a path.

Pure string work: nothing here imports dlt or a driver.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

_MEMORY = ":memory:"


def _is_sqlite(drivername: object) -> bool:
    """``sqlite`` or ``sqlite+<dbapi>`` (SQLAlchemy's driver naming)."""
    return isinstance(drivername, str) and drivername.split("+", 1)[0].lower() == "sqlite"


def _anchored(database: str, root: Path) -> str:
    """``database`` as an absolute path under ``root`` when it is a relative file path."""
    if not database or database.startswith((_MEMORY, "file:")):
        return database  # in-memory, or a URI filename SQLite itself interprets
    path = Path(database).expanduser()
    return str(path if path.is_absolute() else root / path)


def _anchored_url(url: str, root: Path) -> str:
    scheme, sep, rest = url.partition("://")
    if not sep or not _is_sqlite(scheme) or not rest.startswith("/"):
        return url  # not SQLite, or `sqlite://` (in-memory) / a host part SQLite has not
    database, qmark, query = rest[1:].partition("?")
    return f"{scheme}:///{_anchored(database, root)}{qmark}{query}"


def project_credentials(credentials: Any, root: Path) -> Any:
    """``credentials`` (a connection string or a table of fields) with a relative SQLite
    database path resolved against the project ``root``; anything else unchanged."""
    if isinstance(credentials, str):
        return _anchored_url(credentials, root)
    if isinstance(credentials, dict) and _is_sqlite(credentials.get("drivername")):
        database = credentials.get("database")
        if isinstance(database, str):
            return {**credentials, "database": _anchored(database, root)}
    return credentials


def sqlite_file(credentials: Any) -> str | None:
    """The SQLite database file ``credentials`` name (after :func:`project_credentials`), or
    ``None`` for anything else: another engine, ``sqlite://`` or ``:memory:``."""
    database: object = None
    if isinstance(credentials, str):
        scheme, sep, rest = credentials.partition("://")
        if sep and _is_sqlite(scheme) and rest.startswith("/"):
            database = rest[1:].partition("?")[0]
    elif isinstance(credentials, dict) and _is_sqlite(credentials.get("drivername")):
        database = credentials.get("database")
    if not isinstance(database, str) or not database or database.startswith(_MEMORY):
        return None
    return database
