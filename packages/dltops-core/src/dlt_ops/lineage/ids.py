"""OpenLineage run ids are UUIDs; dlt-ops run ids are not always (backfill chunks, orchestrators).

The mapping is stable and computable from the ledger alone: a run id that already is a UUID
(a plain run's uuid4 hex) is used as it is; any other id becomes ``uuid5`` of a fixed namespace
and ``run:<run_id>``. A backfill is ``backfill:<backfill_id>`` under the same namespace.
"""

from __future__ import annotations

import uuid

#: uuid5 namespace of every derived id (uuid5(NAMESPACE_URL, "https://dlt-ops/lineage")).
NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://dlt-ops/lineage")


def run_uuid(run_id: str) -> str:
    """The OpenLineage run id of the dlt-ops run ``run_id``."""
    try:
        return str(uuid.UUID(run_id))
    except ValueError:  # a backfill chunk's sha256 prefix, an orchestrator's --run-id
        return str(uuid.uuid5(NAMESPACE, f"run:{run_id}"))


def backfill_uuid(backfill_id: str) -> str:
    """The OpenLineage run id of the backfill ``backfill_id`` (its chunks' parent)."""
    return str(uuid.uuid5(NAMESPACE, f"backfill:{backfill_id}"))


def orchestrator_uuid(kind: str, run_id: str) -> str:
    """The OpenLineage run id of an orchestrator's run (an Airflow DAG run)."""
    return str(uuid.uuid5(NAMESPACE, f"{kind}:{run_id}"))
