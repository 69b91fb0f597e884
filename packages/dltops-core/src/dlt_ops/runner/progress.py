"""A run's progress as dlt reports it: its step (extract / normalize / load) and rows per table.

dlt calls a *collector* (``dlt.pipeline(progress=...)``) at each step start and for every batch
of rows; :func:`dlt_collector` turns those calls into :class:`ProgressSink` calls, so the CLI's
display knows nothing of dlt and the runner nothing of terminals.
"""

from __future__ import annotations

from typing import Any, Protocol

#: dlt's own counters (not tables): extract counts resources, normalize files, load jobs.
_NOT_TABLES = frozenset({"Resources", "Files", "Items", "Jobs"})


class ProgressSink(Protocol):
    """Who shows a run's progress."""

    def step(self, name: str) -> None:
        """A dlt step began: ``extract``, ``normalize`` or ``load``."""

    def rows(self, table: str, inc: int) -> None:
        """``inc`` more rows of ``table`` in the current step."""


def dlt_collector(sink: ProgressSink) -> Any:
    """A dlt ``Collector`` forwarding to ``sink`` (imports dlt: call it only for a run)."""
    from dlt.common.runtime.collector_base import Collector

    class _Forward(Collector):
        def update(
            self,
            name: str,
            inc: int = 1,
            total: int | None = None,
            inc_total: int | None = None,
            message: str | None = None,
            label: str | None = None,
        ) -> None:
            if name not in _NOT_TABLES and not name.startswith("_dlt") and not label and inc:
                sink.rows(name, inc)

        def _start(self, step: str) -> None:
            sink.step(step.split(" ", 1)[0].lower())  # "Extract my_source" -> "extract"

        def _stop(self) -> None:
            pass

        def __deepcopy__(self, memo: dict[int, Any]) -> _Forward:
            return self  # dlt deep-copies its pipeline's collector; the display is one

    return _Forward()
