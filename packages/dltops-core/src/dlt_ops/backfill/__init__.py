"""Backfill: a window split into chunks, each claimed (with a lease) and run exactly once.

``plan`` (chunks and identities), ``state`` (``_dlt_backfills``), ``lease`` (heartbeats and the
per-dataset load lock), ``executor`` (one worker's chunk loop), ``workers`` (worker
subprocesses), ``service`` (entry checks, seeding, tally). See docs/backfill.md.
"""

from dlt_ops.backfill.plan import BackfillPlan, Chunk, canonical_chunk, chunk_run_id

__all__ = ["BackfillPlan", "Chunk", "canonical_chunk", "chunk_run_id"]
