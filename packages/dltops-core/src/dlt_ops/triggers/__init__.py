"""Trigger emitters: the named origins of runs (``cli``, ``backfill``, ...)."""

from dlt_ops.triggers.protocol import TriggerEmitter

__all__ = ["TriggerEmitter"]
