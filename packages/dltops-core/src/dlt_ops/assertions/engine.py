"""The gate engine: per-resource evaluation of every assertion on every row, then verdicts.

Pure Python (no dlt). Every assertion observes every row, whatever the others said, so the
outcome does not depend on declaration order: a row that trips any ``fail`` assertion counts
towards failing the run even when another assertion quarantined it. A row's fate:

* it trips a ``quarantine`` assertion → it leaves the stream and is buffered for
  ``_dlt_rejected`` (one record per tripped quarantine assertion);
* it trips a ``fail`` assertion → counted; at :meth:`ResourceEngine.finalize` the run fails
  when the count exceeds the assertion's threshold (no threshold: any violation). Rows that
  stay within a threshold load (unless quarantined) and are reported as ``failed``;
* ``warn`` verdicts are counted and the first few logged; the row loads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from dlt_ops.assertions.model import AssertionSpec, OnFailure
from dlt_ops.assertions.quarantine import Rejected, params_json, row_json
from dlt_ops.errors import AssertionTypeCrashedError
from dlt_ops.log import get_logger

log = get_logger(__name__)

WARN_LOG_LIMIT = 5


@dataclass
class Entry:
    """One assertion at run time: its spec, its type (or predicate) and its counters."""

    spec: AssertionSpec
    atype: Any = None
    predicate: Callable[[Any], Any] | None = None
    #: who registered ``atype`` (for the error when it raises)
    plugin: str = "unknown plugin"
    state: Any = None
    violations: int = 0
    first: str | None = None
    logged: int = 0
    params_json: str = ""

    @property
    def name(self) -> str:
        """The type name (``custom`` for predicates)."""
        return self.spec.type_name

    @property
    def row_scoped(self) -> bool:
        """Predicates are row-scoped; types say so themselves."""
        return self.predicate is not None or bool(self.atype.row_scoped)

    def judge(self, row: Mapping[str, Any]) -> str | None:
        """This assertion's verdict on ``row``."""
        if self.predicate is not None:
            if self.predicate(row):
                return None
            return f"predicate {self.spec.predicate} failed"
        with self.crash_guard("observe"):
            return self.atype.observe(self.state, row, self.spec.params)

    @contextmanager
    def crash_guard(self, phase: str) -> Iterator[None]:
        """A type that raises is a plugin bug: say which type and plugin, in which phase."""
        try:
            yield
        except AssertionTypeCrashedError:
            raise
        except Exception as exc:
            raise AssertionTypeCrashedError(self.name, self.plugin, phase, exc) from exc


@dataclass(frozen=True)
class Failure:
    """A failed assertion: what the run's error says."""

    assertion_type: str
    message: str


@dataclass
class ResourceEngine:
    """All assertions of one resource in one run."""

    source: str
    resource: str
    entries: list[Entry]
    records_in: int = 0
    rejected_rows: int = 0
    warned_rows: int = 0
    failed_rows: int = 0
    batch_warnings: int = 0
    buffer: list[Rejected] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        for e in self.entries:
            if e.atype is not None:
                with e.crash_guard("start"):
                    e.state = e.atype.start(e.spec.params)
            e.params_json = params_json(e.spec.params)

    def observe(self, row: Mapping[str, Any]) -> bool:
        """Judge ``row`` with every assertion; ``True`` when it stays in the stream."""
        with self._lock:  # parallelized resources call in from several threads
            self.records_in += 1
            warned = failed = False
            quarantined: list[tuple[Entry, str]] = []
            for e in self.entries:
                verdict = e.judge(row)
                if verdict is None:
                    continue
                e.violations += 1
                if e.first is None:
                    e.first = verdict
                mode = e.spec.on_failure
                if mode is OnFailure.fail:
                    failed = True
                elif mode is OnFailure.quarantine:
                    quarantined.append((e, verdict))
                else:
                    warned = True
                    self._log_warning(e, verdict)
            self.warned_rows += warned
            self.failed_rows += failed
            if not quarantined:
                return True
            self.rejected_rows += 1
            payload = row_json(row)
            for e, verdict in quarantined:
                self.buffer.append(Rejected(self.resource, e.name, e.params_json, verdict, payload))
            return False

    def _log_warning(self, e: Entry, message: str) -> None:
        if e.logged < WARN_LOG_LIMIT:
            e.logged += 1
            log.warning(f"assertion '{e.name}' warn on {self.source}.{self.resource}: {message}")

    def finalize(self) -> list[Failure]:
        """Batch verdicts and thresholds; the failures, in declaration order."""
        failures: list[Failure] = []
        for e in self.entries:
            if not e.row_scoped:
                with e.crash_guard("finalize"):
                    verdict = e.atype.finalize(e.state, e.spec.params)
                if verdict is None:
                    continue
                e.violations, e.first = 1, verdict
                if e.spec.on_failure is OnFailure.fail:
                    failures.append(Failure(e.name, verdict))
                else:
                    self.batch_warnings += 1
                    self._log_warning(e, verdict)
                continue
            if e.spec.on_failure is not OnFailure.fail or e.violations == 0:
                continue
            threshold = e.spec.threshold
            if not threshold.exceeded(e.violations, self.records_in):
                log.warning(
                    f"assertion '{e.name}' on {self.source}.{self.resource}: {e.violations} of "
                    f"{self.records_in} row(s) violated, within {threshold.describe()}; "
                    f"first: {e.first}"
                )
                continue
            if threshold.active:
                message = (f"{e.violations} of {self.records_in} row(s) violated, exceeding "
                           f"{threshold.describe()}; first: {e.first}")  # fmt: skip
            elif e.violations > 1:
                message = f"{e.first} (and {e.violations - 1} more row(s))"
            else:
                message = str(e.first)
            failures.append(Failure(e.name, message))
        warned = {e.name: e.violations for e in self.entries
                  if e.spec.on_failure is OnFailure.warn and e.violations}  # fmt: skip
        if warned:
            counts = ", ".join(f"{k}={v}" for k, v in warned.items())
            log.warning(f"assertion warn summary for {self.source}.{self.resource}: {counts}")
        return failures

    def summary(self) -> dict[str, Any]:
        """Counts for the run's summary log line and (later) its receipt."""
        return {
            "records_in": self.records_in,
            "rejected": self.rejected_rows,
            "warned": self.warned_rows,
            "failed": self.failed_rows,
            "batch_warnings": self.batch_warnings,
            "violations": {
                e.spec.field.rsplit(".", 1)[-1] if e.spec.is_custom else e.name: e.violations
                for e in self.entries
            },  # fmt: skip
        }
