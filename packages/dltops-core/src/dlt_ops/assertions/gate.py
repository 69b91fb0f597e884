"""The assertion gate: a dlt transform step per asserted resource, judged before load.

``attach`` adds one step per resource with ``placement_affinity = 1.3``, so dlt places it after
the Pydantic validator (0.9), the incremental filter (1.0), ``add_limit`` (1.1) and any
stamping step (1.2): assertions see the final row shape of exactly the rows that would load.
Rows are only *observed* during extract (quarantined rows are filtered out); every verdict is
taken in ``after_extract``, once the run's load package exists. On a failure the gate drops
that package alone — never an earlier pending one — and rewinds dlt's local state (incremental
cursors) to where the package started, then raises :class:`AssertionFailedError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from dlt.extract.items_transform import BaseItemTransform, ItemTransform

from dlt_ops.assertions.checks import check_specs, load_type, plugin_label, resolve_predicate
from dlt_ops.assertions.engine import Entry, ResourceEngine
from dlt_ops.assertions.model import ParsedAssertions, parse_assertions
from dlt_ops.assertions.quarantine import QuarantineWriter
from dlt_ops.errors import AssertionConfigError, AssertionFailedError
from dlt_ops.log import get_logger
from dlt_ops.runner.gates import GateSummary, ResourceVerdicts

if TYPE_CHECKING:
    from dlt import Pipeline
    from dlt.extract.source import DltSource

    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.runner.context import RunContext
    from dlt_ops.runner.prepare import PreparedRun

log = get_logger(__name__)


def _as_row(item: Any) -> Mapping[str, Any]:
    if type(item) is dict or isinstance(item, Mapping):  # the exact check is the fast path
        return item
    dump = getattr(item, "model_dump", None)  # a Pydantic model that reached the gate
    if callable(dump):
        return dump()
    return {"value": item}


class AssertionStep(ItemTransform[Any, dict[str, Any]]):
    """Observes each row; drops quarantined rows. Handles dicts, lists and Arrow tables."""

    placement_affinity: ClassVar[float] = 1.3

    def __init__(self, engine: ResourceEngine) -> None:
        BaseItemTransform.__init__(self)
        self.engine = engine

    def __call__(self, item: Any, meta: Any = None) -> Any:
        observe = self.engine.observe
        if isinstance(item, list):
            kept = [row for row in item if observe(_as_row(row))]
            return kept if kept or not item else None
        to_pylist = getattr(item, "to_pylist", None)
        if callable(to_pylist):  # pyarrow Table / RecordBatch
            mask = [observe(row) for row in to_pylist()]
            if all(mask):
                return item
            import pyarrow as pa

            return item.filter(pa.array(mask)) if any(mask) else None
        return item if observe(_as_row(item)) else None


def drop_package(pipeline: Any, load_id: str) -> None:
    """Delete the extracted package ``load_id`` only and rewind local state to its start.

    Packages older than ``load_id`` (e.g. a previous run's package whose load failed and that
    dlt will retry) are untouched.
    """
    try:
        from dlt.pipeline.abort import TAbortPlan  # noqa: F401 - dlt >= 1.30

        plan = {
            "package_to_abort": None,
            "packages_to_delete": [],
            "extracted_packages_to_delete": [load_id],
            "restore_from_load_id": load_id,
        }
        pipeline._apply_abort_plan(plan)
    except ImportError:  # older dlt: no state snapshot to rewind to
        pipeline._get_normalize_storage().extracted_packages.delete_package(load_id)
        log.warning("assertions.state_not_rewound", load_id=load_id)
    log.info("Dropped this run's load package after assertion failure", load_id=load_id)


def _declared_columns(resource: Any) -> tuple[str, ...] | None:
    model = (getattr(resource, "_hints", None) or {}).get("original_columns")
    fields = getattr(model, "model_fields", None)
    return tuple(fields) if isinstance(fields, Mapping) else None


def build_engines(
    config: ProjectConfig,
    registry: PluginRegistry,
    parsed: ParsedAssertions,
    resources: Mapping[str, Any],
) -> dict[str, ResourceEngine]:
    """Engines for the asserted ``resources`` of an already checked config (see
    :meth:`AssertionGateFactory.check`); resolves custom predicates for real."""
    engines = {}
    for res in parsed.selected(list(resources)):
        entries = []
        for spec in res.specs:
            if spec.is_custom:
                try:
                    fn = resolve_predicate(spec.predicate or "", config.root)
                except Exception as exc:
                    raise AssertionConfigError(parsed.source, [
                        f"[{spec.field}] custom predicate '{spec.predicate}' is not "
                        f"resolvable: {type(exc).__name__}: {exc}"
                    ]) from exc  # fmt: skip
                entries.append(Entry(spec, predicate=fn))
            else:
                atype = load_type(registry, spec.type_name)
                entries.append(Entry(spec, atype=atype,
                                     plugin=plugin_label(registry, spec.type_name)))  # fmt: skip
        if entries:
            engines[res.resource] = ResourceEngine(parsed.source, res.resource, entries)
    return engines


class AssertionGateFactory:
    """The assertion gate of one prepared run: the config is parsed once (a whole backfill
    shares it) and checked once per run against the instantiated source."""

    def __init__(self, prepared: PreparedRun) -> None:
        self.config, self.registry = prepared.config, prepared.registry
        self.source = prepared.source
        self._parsed: ParsedAssertions | None = None
        # the config's own mistakes refuse the run in prepare, before anything is written
        issues, _ = check_specs(self.parsed, self.registry)
        if issues:
            raise AssertionConfigError(self.source, [str(i) for i in issues])

    @property
    def parsed(self) -> ParsedAssertions:
        """``[sources.X.dlt_ops.assertions]``, parsed on first use."""
        if self._parsed is None:
            self._parsed = parse_assertions(self.config.source(self.source).assertions, self.source)
        return self._parsed

    def check(self, source: DltSource) -> None:
        """Every check ``validate`` makes, for the selected resources (their models' columns
        included); raises :class:`AssertionConfigError`."""
        selected = dict(source.selected_resources)
        declared = {name: _declared_columns(r) for name, r in selected.items()}
        issues, columns = check_specs(
            self.parsed, self.registry, resources=dict(source.resources) or None,
            declared=declared, only=list(selected),
        )  # fmt: skip
        if "assertion_columns_exist" in self.config.source(self.source).rule_exemptions:
            columns = []  # exempted in validate: the preflight honours the same exemption
        if issues or columns:
            raise AssertionConfigError(self.source, [str(i) for i in (*issues, *columns)])

    def gate(self, run: RunContext, source: DltSource) -> AssertionGate | None:
        """Check, then the run's gate; ``None`` when no selected resource has assertions."""
        self.check(source)
        engines = build_engines(
            self.config, self.registry, self.parsed, dict(source.selected_resources)
        )
        return AssertionGate(run, engines) if engines else None


class AssertionGate:
    """The run's assertion gate (an ``ExtractGate``)."""

    name = "assertions"

    def __init__(self, ctx: RunContext, engines: dict[str, ResourceEngine]) -> None:
        self.ctx = ctx
        self.engines = engines
        self.failures: list[tuple[str, str, str]] = []
        self.quarantined = 0
        #: rows count as ``rejected`` only once they are in ``_dlt_rejected``
        self.quarantine_written = False

    def attach(self, source: DltSource) -> DltSource:
        """Add one assertion step to every asserted resource."""
        for name, engine in self.engines.items():
            source.resources[name].add_step(AssertionStep(engine))
            log.info(f"Assertion gate attached to resource '{name}' "
                     f"({len(engine.entries)} assertion(s))")  # fmt: skip
        return source

    def after_extract(self, pipeline: Pipeline, load_id: str) -> None:
        """Take every verdict; on failure drop this run's package and raise; else quarantine."""
        try:
            for name, engine in self.engines.items():
                for failure in engine.finalize():
                    self.failures.append((name, failure.assertion_type, failure.message))
        except BaseException:  # a crashing type (or Ctrl-C): no verdict, so nothing may load
            drop_package(pipeline, load_id)
            raise
        log.info("assertions.summary", **self.details())
        if self.failures:
            drop_package(pipeline, load_id)
            name, atype, message = self.failures[0]
            if len(self.failures) > 1:
                others = ", ".join(f"{t} on {r}" for r, t, _ in self.failures[1:])
                message = f"{message} (also failed: {others})"
            raise AssertionFailedError(self.ctx.source, name, atype, message)
        rejected = [r for engine in self.engines.values() for r in engine.buffer]
        if rejected:
            writer = QuarantineWriter(self.ctx.open_session, pipeline_name=self.ctx.pipeline_name,
                                      source=self.ctx.source, run_id=self.ctx.run_id)  # fmt: skip
            try:
                self.quarantined = writer.write(rejected)
                self.quarantine_written = True
            except Exception:
                drop_package(pipeline, load_id)
                raise
            log.info(f"Quarantined {self.quarantined} row(s) to _dlt_rejected")
        for engine in self.engines.values():
            engine.buffer.clear()

    def details(self) -> dict[str, Any]:
        """Per resource: records_in, rejected, warned, failed and per-assertion counts (the
        ``assertions.summary`` log line)."""
        return {
            "gate": self.name,
            "resources": {name: e.summary() for name, e in self.engines.items()},
            "failed_assertions": [f"{t} on {r}" for r, t, _ in self.failures],
        }

    def summary(self) -> GateSummary:
        """Per resource: rows quarantined, warned and counted towards failing the run.

        A run that failed before the quarantine write rejected nothing (its would-be rejects
        were held back with the rest: the receipt's ``failed``). A batch-scoped ``warn``
        verdict (``min_rows_per_load`` ...) covers every row of the batch: all are warned.
        """
        return GateSummary(
            self.name,
            {name: ResourceVerdicts(
                e.rejected_rows if self.quarantine_written else 0,
                e.records_in if e.batch_warnings else e.warned_rows,
                e.failed_rows,
            ) for name, e in self.engines.items()},
            tuple(f"{t} on {r}" for r, t, _ in self.failures),
        )  # fmt: skip
