"""``pipeline backfill --seed-cursor``: move the scheduled runs' cursor to the backfill's end.

Backfill chunks run their incrementals statelessly (dlt's ``end_value``), so after a history
backfill the pipeline's own cursor is where it was: on a new pipeline, nowhere, and the first
scheduled run re-extracts everything from the initial value. With ``--seed-cursor`` the
backfill ends with one ordinary run whose incrementals first have their stored ``last_value``
moved to the backfill's ``--to``: that run (and every scheduled run after it) extracts from
there. A cursor is only ever moved forward, and only over what the backfill covered: one that
stands before the backfill's ``--from`` would jump the gap between them, so the run is refused
before extracting anything (:class:`~dlt_ops.errors.SeedCursorError`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from dlt_ops.errors import SeedCursorError
from dlt_ops.log import get_logger
from dlt_ops.runner.window import Window

log = get_logger(__name__)


def _as_utc(value: Any) -> datetime | None:
    from datetime import UTC

    if not isinstance(value, datetime):
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def seed_cursors(pipeline: Any, source: Any, covered: Window) -> dict[str, str]:
    """Move each selected resource's stored cursor to ``covered.end``; returns what moved
    (``resource`` → the new value). Raises before changing anything when a cursor would jump
    a gap or is not a timestamp."""
    from dlt.common.time import ensure_pendulum_datetime

    from dlt_ops.project.incrementals import incremental_of

    plans: list[tuple[str, str, Any]] = []
    with pipeline.managed_state() as state:
        resources = state.setdefault("sources", {}).setdefault(source.name, {})
        resources = resources.setdefault("resources", {})
        for name, resource in source.selected_resources.items():
            found = incremental_of(resource)
            if found is None:
                continue
            incremental = found.incremental
            path = incremental.cursor_path
            stored = resources.get(name, {}).get("incremental", {}).get(path, {})
            current = stored.get("last_value", incremental.initial_value)
            at = _as_utc(current)
            if current is not None and at is None:
                raise SeedCursorError(name, f"its cursor {current!r} is not a timestamp")
            if at is not None and at >= covered.end:
                log.info("seed_cursor.already_there", resource=name, cursor=str(current))
                continue
            if at is not None and at < covered.start:
                raise SeedCursorError(
                    name,
                    f"its cursor stands at {at.isoformat()}, before the backfill's --from "
                    f"{covered.start.isoformat()}: moving it to {covered.end.isoformat()} would "
                    f"skip [{at.isoformat()}, {covered.start.isoformat()}). Backfill from "
                    f"{at.isoformat()} instead",
                )
            plans.append((name, path, incremental.initial_value))
        for name, path, initial in plans:  # all checked: now change them together
            slot = resources.setdefault(name, {}).setdefault("incremental", {})
            end = ensure_pendulum_datetime(covered.end)
            slot[path] = {**slot.get(path, {}), "initial_value": initial, "last_value": end,
                          "unique_hashes": []}  # fmt: skip
    moved = {name: covered.end.isoformat() for name, _, _ in plans}
    for name, value in moved.items():
        log.warning(f"[{name}] cursor seeded to {value}: this and later runs extract from there",
                    resource=name, cursor=value)  # fmt: skip
    return moved
