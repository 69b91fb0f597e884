"""Opening a backfill's state: a session on the source's destination and the claims handle.

Shared by the command's own process, each worker subprocess and the read-only views
(``backfill show``, ``--dry-run``), below all of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dlt_ops.backfill.state import BackfillState

if TYPE_CHECKING:
    from dlt_ops.adapters import DestinationSession
    from dlt_ops.config import ProjectConfig
    from dlt_ops.destinations import ResolvedDestination
    from dlt_ops.plugins import PluginRegistry


def open_state(
    registry: PluginRegistry,
    config: ProjectConfig,
    where: ResolvedDestination,
    token: str,
    *,
    read_only: bool = False,
) -> tuple[DestinationSession, BackfillState]:
    """A session on the source's destination and the state handle for ``token``."""
    from dlt_ops.adapters import DestinationSession
    from dlt_ops.destinations import connection_target, load_adapter, open_session

    if read_only:  # readers never create the database file or the dataset
        target = connection_target(config, where, read_only=True)
        session = DestinationSession.open(load_adapter(registry, where.engine), target)
    else:
        session = open_session(registry, config, where)
    return session, BackfillState(session, token)
