"""Load packages whose load committed although dlt never recorded them as loaded.

dlt loads a package's jobs, writes the package's row into the dataset's ``_dlt_loads`` (the
last write of a load, after every job committed), and only then moves the package from
``load/normalized`` to ``load/loaded``. A failure between the two — a full disk when dlt writes
the package's completion marker, a process killed at that moment — leaves a package that is
fully in the destination but still pending locally, and the next load step would load it again
(an append table would hold its rows twice).

So before a run loads, and again when its load step fails, the pending packages' load ids are
looked up in ``_dlt_loads``; one found there is moved to ``load/loaded`` (one rename, which a
full disk allows) and booked like any loaded package, never loaded again.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from dlt_ops.dlt_schema import LOADS_TABLE
from dlt_ops.log import get_logger

if TYPE_CHECKING:
    from dlt_ops.adapters import DestinationSession

log = get_logger(__name__)

#: dlt's ``_dlt_loads.status`` of a completed load.
LOADED_STATUS = 0


def pending_load_ids(working_dir: Path) -> list[str]:
    """Packages dlt normalized and has not recorded as loaded (``load/normalized/<id>``)."""
    folder = working_dir / "load" / "normalized"
    try:
        return sorted(p.name for p in folder.iterdir() if p.is_dir())
    except OSError:
        return []


def committed_load_ids(session: DestinationSession, load_ids: list[str]) -> set[str]:
    """Those of ``load_ids`` that ``_dlt_loads`` records as loaded (one query)."""
    from dlt_ops.adapters import Statement

    if not load_ids or session.fetch_columns(LOADS_TABLE) is None:
        return set()
    marks = ", ".join("?" for _ in load_ids)
    sql = Statement(
        f"SELECT load_id FROM {{{LOADS_TABLE}}} WHERE status = {LOADED_STATUS} "
        f"AND load_id IN ({marks})"
    )
    return {str(row[0]) for row in session.query(sql, *load_ids)}


def settle_committed(
    working_dir: Path,
    open_session: Callable[[], DestinationSession] | None,
    *,
    all_or_none: bool = False,
) -> list[str]:
    """Move every pending package that ``_dlt_loads`` says committed to ``load/loaded``; return
    their load ids. Asks the destination only when a package is pending; a destination that
    cannot be asked (or a core-tier one, ``open_session`` ``None``) settles nothing.
    ``all_or_none``: settle only when every pending package committed (a failed load step that
    counts as loaded), else leave them all to the next run, which books what it settles."""
    pending = pending_load_ids(working_dir)
    if not pending or open_session is None:
        return []
    try:
        committed = committed_load_ids(open_session(), pending)
    except Exception as exc:  # noqa: BLE001 - unknown means "not committed": dlt loads it
        log.warning("packages.commit_check_failed", error=f"{type(exc).__name__}: {exc}"[:300])
        return []
    if all_or_none and committed != set(pending):
        return []
    settled = []
    loaded = working_dir / "load" / "loaded"
    for load_id in sorted(committed):
        try:
            loaded.mkdir(parents=True, exist_ok=True)
            os.replace(working_dir / "load" / "normalized" / load_id, loaded / load_id)
        except OSError as exc:
            log.warning("packages.settle_failed", load_id=load_id, error=str(exc)[:300])
            continue
        settled.append(load_id)
        log.warning(
            "packages.committed_settled",
            load_id=load_id,
            reason="its load committed (it is in _dlt_loads) but dlt never recorded the package "
            "as loaded; it is booked, not loaded again",
        )
    return settled
