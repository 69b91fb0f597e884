"""What BigQuery billed for a run's load, from the jobs it ran (for ``measured_cost``).

BigQuery reports, per query job, the bytes it billed (``totalBytesBilled``; at least 10 MB per
table referenced, already rounded up by BigQuery) and the bytes it processed. Batch load jobs
are free. A run's load is every finished job of these credentials created between the run's
start and end that wrote to or read from the run's dataset (or dlt's staging dataset for it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: BigQuery's on-demand analysis price, US dollars per TiB billed.
ON_DEMAND_USD_PER_TIB = 6.25
TIB = 2**40
#: dlt's default staging dataset layout (merge and replace load there first)
STAGING_SUFFIX = "_staging"


def _touches(job: Any, dataset: str) -> bool:
    """Whether ``job`` wrote to or read from ``dataset`` (or its staging dataset)."""
    tables = list(getattr(job, "referenced_tables", None) or [])
    if getattr(job, "destination", None) is not None:
        tables.append(job.destination)
    return any(t.dataset_id in (dataset, dataset + STAGING_SUFFIX) for t in tables)


def billed_bytes(jobs: Iterable[Any], dataset: str) -> int | None:
    """Bytes billed by the finished jobs that touched ``dataset``; ``None`` when there were none.

    A query job without a billed figure counts what it processed; a load job bills nothing.
    """
    total, found = 0, False
    for job in jobs:
        if getattr(job, "state", None) != "DONE" or getattr(job, "error_result", None):
            continue
        if not _touches(job, dataset):
            continue
        found = True
        if getattr(job, "job_type", None) == "query":
            billed = job.total_bytes_billed
            total += int(billed if billed is not None else job.total_bytes_processed or 0)
    return total if found else None


def dollars(n_bytes: int, usd_per_tib: float = ON_DEMAND_USD_PER_TIB) -> float:
    """On-demand price of ``n_bytes`` billed."""
    return n_bytes / TIB * usd_per_tib
