"""Handing dlt the credentials dlt-ops resolved, so both always load into the same database.

dlt looks credentials up again on its own: from the current directory's ``.dlt/`` (or the
``.dlt/`` its providers read first in the process), and it refuses a credentials table it
finds in ``config.toml`` even when the password comes from an environment variable. An adapter
that pins dlt's destination with :func:`explicit_destination` makes the run independent of
both. Nothing here imports dlt until it is called.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dlt_ops.errors import DestinationError


def explicit_destination(engine: str, credentials: Any) -> Any:
    """dlt's destination factory for ``engine`` with ``credentials`` given explicitly."""
    from dlt.common.destination import Destination

    dest = Destination.from_reference(engine)
    if dest is None:
        raise DestinationError(f"dlt has no destination named '{engine}'")
    return Destination.from_reference(engine, credentials=as_native(dest, credentials))


def dlt_knows_destination(engine: str) -> bool | None:
    """Whether dlt has a destination named ``engine`` (``None``: dlt cannot say here)."""
    try:
        from dlt.common.destination import Destination
        from dlt.common.destination.exceptions import UnknownDestinationModule
    except ImportError:
        return None
    try:
        Destination.from_reference(engine)
    except UnknownDestinationModule:
        return False
    except Exception:  # dlt knows the name but cannot build it here (a missing extra)
        return True
    return True


def as_native(dest: Any, credentials: Any) -> Any:
    """A table of credential fields as dlt's connection string for ``dest``, where it has one.

    dlt merges a table it is handed with the ``credentials`` its config files hold (and refuses
    any found in ``config.toml``); a string it takes as it is."""
    if not isinstance(credentials, Mapping):
        return credentials
    from dlt.common.configuration.specs import ConnectionStringCredentials

    hint = dest.spec.get_resolvable_fields().get("credentials")
    if not (isinstance(hint, type) and issubclass(hint, ConnectionStringCredentials)):
        return credentials  # no string form (e.g. a service account): dlt takes the table
    try:
        native = hint()
        native.update(credentials)
        return native.to_native_representation()
    except (KeyError, TypeError, ValueError):
        return credentials  # fields dlt's string form cannot carry: let dlt judge the table
