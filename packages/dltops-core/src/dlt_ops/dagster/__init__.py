"""Dagster Definitions for a dlt-ops project: ``build_definitions``.

Installed by the ``dagster`` extra (``pip install "dltops-core[dagster]"``). A code location
calls the builder at load time, which reads the project with Phase 1 only (no source module is
imported); the assets and partition jobs run sources through :mod:`dlt_ops.orchestration`.
"""

try:
    import dagster  # noqa: F401
except ImportError:
    raise ImportError('dlt_ops.dagster needs Dagster: pip install "dltops-core[dagster]"') from None

from dlt_ops.dagster.definitions import build_definitions, concurrency_pool

__all__ = ["build_definitions", "concurrency_pool"]
