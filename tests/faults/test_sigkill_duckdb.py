"""The SIGKILL family on DuckDB: kill a plain and a ``@with_checkpoints`` run at seeded random
points, re-run, and every row lands exactly once (the trials and checks are in ``_sigkill.py``;
the other engine's half is ``test_sigkill_postgres.py``)."""

from ._sigkill import sigkill_test

test_sigkill_then_rerun = sigkill_test("duckdb")
