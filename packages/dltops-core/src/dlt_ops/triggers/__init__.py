"""Trigger emitters: the named origins of runs (``cli``, ``backfill``, ...)."""

from dlt_ops.triggers.protocol import ScheduledSource, ScheduleTarget, TriggerEmitter

__all__ = ["ScheduleTarget", "ScheduledSource", "TriggerEmitter"]
