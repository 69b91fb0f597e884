"""``CheckpointManager``: one resource's checkpoint lifecycle against the destination.

Where the session comes from:

* inside a dlt-ops run (``current_run()``), the run's shared ``DestinationSession`` — one
  connection for the ledger and every checkpoint write; rows carry the run's ledger ``run_id``;
* outside one (a plain ``pipeline.run`` in a script or notebook), a session the manager opens
  itself from the active dlt pipeline: the engine and dataset of ``dlt.current.pipeline()`` and
  the credentials dlt resolved for it, through the adapter registered for that engine. It is
  closed when the resource finishes; ``ledger_run_id`` is NULL there.

Either way a core-tier destination raises ``UnregisteredDestinationError`` (the runtime backstop
behind preflight's static detection).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from dlt_ops.adapters import DestinationSession
from dlt_ops.checkpoints import finisher
from dlt_ops.checkpoints.table import (
    ACTIVE,
    COMPLETED,
    parse_value,
    serialize_value,
    statements,
    table_spec,
)
from dlt_ops.checkpoints.writer import CheckpointWriter
from dlt_ops.clock import utcnow
from dlt_ops.errors import CheckpointStateError, UnregisteredDestinationError
from dlt_ops.log import get_logger
from dlt_ops.redact import redact

log = get_logger(__name__)

FEATURE = "checkpoints (@with_checkpoints)"


@functools.lru_cache(maxsize=1)
def _registry() -> Any:
    """The process's plugin registry for scripts outside dlt-ops (entry points read once)."""
    from dlt_ops.plugins import PluginRegistry

    return PluginRegistry()


def _active_pipeline() -> Any:
    """The active dlt pipeline, or ``None``. (``dlt.current.pipeline()`` would resolve a
    pipeline configuration first, ~2 ms, and with none active make a default pipeline.)"""
    from dlt.common.configuration.container import Container
    from dlt.common.pipeline import PipelineContext

    context = Container()[PipelineContext]
    return context.pipeline() if context.is_active() else None


def _own_session(pipeline: Any) -> DestinationSession:
    """A session for the active dlt pipeline, outside a dlt-ops run."""
    from dlt.common.destination import Destination

    from dlt_ops.adapters import ConnectionTarget
    from dlt_ops.destinations import load_adapter

    if pipeline is None:
        raise CheckpointStateError(
            "@with_checkpoints runs outside any dlt pipeline context: run the resource through "
            "a dlt pipeline (`pipeline.run(...)`) or `dlt-ops pipeline run`."
        )
    if pipeline.destination is None:
        raise CheckpointStateError(
            f"pipeline '{pipeline.pipeline_name}' has no destination; checkpoints live in the "
            f"destination, so give the pipeline one."
        )
    engine = Destination.to_name(pipeline.destination.destination_type)
    from dlt_ops.target import adapter_tier

    registry = _registry()
    if not adapter_tier(registry, engine).has_adapter:
        raise UnregisteredDestinationError(
            pipeline.pipeline_name, engine, FEATURE, registry.names("destination")
        )
    credentials = _resolved_credentials(pipeline)
    native = credentials.to_native_representation() if credentials is not None else None
    target = ConnectionTarget(
        destination=engine,
        dataset=pipeline.dataset_name,
        project_root=Path(os.environ.get("DLT_PROJECT_DIR") or os.getcwd()),
        credentials=native,
        pipeline_name=pipeline.pipeline_name,
    )
    return DestinationSession.open(load_adapter(registry, engine), target)


def _resolved_credentials(pipeline: Any) -> Any:
    """The credentials dlt resolves for ``pipeline``'s destination (env vars, TOML files,
    vaults; pipeline-scoped sections first), as ``pipeline.destination_client()`` would.

    That call also builds a schema, capabilities and a job client around the same resolution:
    ~8 ms of every checkpointed extract outside dlt-ops. Only the destination's own
    ``configuration()``, under the section context ``destination_client`` sets, is kept.
    """
    from dlt.common.configuration import inject_section
    from dlt.common.configuration.specs.config_section_context import ConfigSectionContext

    try:
        from dlt.dataset.utils import get_destination_client_initial_config
    except ImportError:  # an older dlt: the job client's config holds the same credentials
        return pipeline.destination_client().config.credentials
    destination = pipeline.destination
    initial = get_destination_client_initial_config(destination, pipeline.dataset_name)
    context = ConfigSectionContext(
        pipeline_name=pipeline.pipeline_name,
        sections=(),
        merge_style=ConfigSectionContext.prefer_existing,
    )
    with inject_section(context):
        config = destination.configuration(initial, accept_partial=False)
    return getattr(config, "credentials", None)


class CheckpointManager:
    """Writes, reads and retires one resource's checkpoints in one isolation namespace."""

    def __init__(
        self,
        resource_name: str,
        run_id: str | None,
        *,
        frequency: int,
        checkpoint_table: str,
        cleanup_days: int,
    ) -> None:
        self.resource_name = resource_name
        self.run_id = run_id
        self.frequency = frequency
        self.table = checkpoint_table
        self.cleanup_days = cleanup_days
        self.sql = statements(checkpoint_table)
        self.page_count = 0
        self.records_count = 0
        self.session: DestinationSession | None = None
        self.writer: CheckpointWriter | None = None
        self.pipeline_name = ""
        self.ledger_run_id: str | None = None
        self._owned = False
        self._pipeline: Any = None  # the dlt pipeline extracting (finisher's key)
        self._handed_off = False

    @property
    def tag(self) -> str:
        """The ``[resource]`` prefix of the seed's log lines."""
        return f"[{self.resource_name}]"

    # -- setup ---------------------------------------------------------------------------------

    def open(self, *, reads_first: bool = False) -> None:
        """Get the session and ensure the table; raise (before extracting) when impossible.

        With ``reads_first`` the table is left to :meth:`resume_value`, which creates it only
        when its read finds it missing: an existing table then costs one query, not the DDL
        round trips (seconds each on a warehouse) of an idempotent create.
        """
        from dlt_ops.runner.context import current_run

        finisher.install()
        self._pipeline = _active_pipeline()
        if self._pipeline is not None:
            # a finish of this pipeline still running (the same resource twice in one step)
            # lands before this one reads its resume state
            finisher.HOOK.join(self._pipeline)
        run = current_run()
        if run is not None:
            if not run.target.has_adapter:
                raise UnregisteredDestinationError(
                    run.pipeline_name, run.target.engine, FEATURE, run.registry.names("destination")
                )
            self.pipeline_name, self.ledger_run_id = run.pipeline_name, run.run_id
            self.session = run.open_session()
        else:
            self.session = _own_session(self._pipeline)
            self.pipeline_name = self._pipeline.pipeline_name
            self._owned = True
        if not reads_first:
            self._create_table()

    def _create_table(self) -> None:
        assert self.session is not None
        try:
            self.session.ensure_table(table_spec(self.table))
        except Exception as exc:
            self.close()
            raise CheckpointStateError(
                f"{self.tag} Failed to initialize checkpoint table '{self.table}': "
                f"{redact(str(exc))}. The run is refused before extracting: a feature the "
                f"resource demands must not run without its state."
            ) from exc

    def flush(self) -> None:
        """Wait until every checkpoint handed to the writer has landed (or failed)."""
        if self.writer is not None:
            self.writer.flush()

    def close(self) -> None:
        """Stop the writer; close a session the manager opened itself (a run's session
        belongs to the run). After :meth:`finish` handed off, the finisher does this."""
        if not self._handed_off:
            self._release()

    def _release(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        if self._owned and self.session is not None:
            self.session.close()
        self.session = None

    # -- resume --------------------------------------------------------------------------------

    def resume_value(
        self,
        like: Any = None,
        parser: Callable[[str], Any] | None = None,
        pick: Callable[[list[Any]], Any] = max,
    ) -> tuple[str, Any] | None:
        """The furthest active checkpoint of this namespace: ``(stored text, parsed value)``.

        "Furthest" is by cursor value (``pick``: the incremental's ``max``/``min``), never by
        page number, so a second failed attempt cannot regress the resume point. A read
        failure raises ``CheckpointStateError``; it is never downgraded to "start fresh".
        """
        assert self.session is not None
        null = self.run_id is None
        stmt = self.sql.active_values_null if null else self.sql.active_values
        params: list[object] = [self.pipeline_name, self.resource_name, ACTIVE]
        if not null:
            params.append(self.run_id)
        try:
            rows = self.session.query(stmt, *params)
        except Exception as exc:
            if not self._table_absent():
                raise self._unreadable(exc) from exc
            self._create_table()  # its first use here; a failure refuses the run
            return None
        try:
            candidates = [(parse_value(str(r[0]), like, parser), r) for r in rows]
        except Exception as exc:
            raise self._unreadable(exc) from exc
        if not candidates:
            return None
        try:
            best = pick([c[0] for c in candidates])
            text = next(str(r[0]) for v, r in candidates if v == best)
        except TypeError:  # incomparable values: newest row wins
            v, r = max(candidates, key=lambda c: (c[1][2], c[1][1] or 0))
            best, text = v, str(r[0])
        return text, best

    def _table_absent(self) -> bool:
        assert self.session is not None
        try:
            return self.session.fetch_columns(self.table) is None
        except Exception:  # cannot tell: the read's own error is the one to report
            return False

    def _unreadable(self, exc: Exception) -> CheckpointStateError:
        return CheckpointStateError(
            f"{self.tag} failed to read resume state from '{self.table}': "
            f"{redact(str(exc))}. Refusing to continue: starting fresh would silently "
            f"re-extract the window. Fix the destination or clear the rows with "
            f"`dlt-ops checkpoints cleanup --include-active`."
        )

    # -- progress ------------------------------------------------------------------------------

    @property
    def next_is_checkpoint(self) -> bool:
        """Whether the next page counted lands on a ``frequency`` boundary."""
        return (self.page_count + 1) % self.frequency == 0

    def page(self, page_records: int, cursor_value: Any) -> None:
        """Count a page; every ``frequency`` pages queue ``cursor_value`` for the writer
        (``CheckpointWriter``: written off the extract loop, failures logged at ERROR)."""
        self.page_count += 1
        self.records_count += page_records
        if self.page_count % self.frequency or cursor_value is None:
            return
        value = serialize_value(cursor_value)
        now = utcnow()
        row = (
            self.pipeline_name,
            self.resource_name,
            self.run_id,
            value,
            self.page_count,
            self.records_count,
            ACTIVE,
            now,
            now,
            self.ledger_run_id,
        )
        if self.writer is None:
            assert self.session is not None
            self.writer = CheckpointWriter(
                self.session, table_spec(self.table), self.tag, self.resource_name
            )
        self.writer.submit(row, self.page_count, self.records_count, value)

    # -- finish --------------------------------------------------------------------------------

    def finish(self) -> None:
        """A clean finish: :meth:`complete`, then release the writer and session. Handed to
        ``finisher`` (run beside dlt's end of the extract step, which waits for it) while a
        step of the pipeline is in progress; otherwise done here, before returning."""
        if self._pipeline is not None and finisher.will_join(self._pipeline):
            self._handed_off = True
            finisher.HOOK.hand_off(self._pipeline, self._complete_and_release, self.tag)
            return
        self.complete()

    def _complete_and_release(self) -> None:
        try:
            self.complete()
        finally:
            self._release()

    def complete(self) -> None:
        """Mark this namespace's active rows completed, then apply retention to this resource.

        Runs on every clean finish, zero pages included. A failure is logged at ERROR: the
        extract itself succeeded, and a stale active row cannot pull a later run backwards
        (resume never moves an incremental behind its own start value).
        """
        assert self.session is not None
        self.flush()
        now = utcnow()
        null = self.run_id is None
        stmt = self.sql.complete_null if null else self.sql.complete
        params: list[Any] = [COMPLETED, now, self.pipeline_name, self.resource_name, ACTIVE]
        if not null:
            params.append(self.run_id)
        try:
            self.session.execute(stmt, *params)
        except Exception as exc:
            log.error(
                f"{self.tag} Failed to mark checkpoints as completed ({redact(str(exc))}); "
                "they stay active until the next clean finish or `dlt-ops checkpoints cleanup`.",
                resource=self.resource_name,
            )
            return
        log.info(f"{self.tag} Checkpoints marked as completed", resource=self.resource_name)
        cutoff = now - timedelta(days=self.cleanup_days)
        try:
            deleted = self.session.execute(
                self.sql.retention, self.pipeline_name, self.resource_name, COMPLETED, cutoff
            )
        except Exception as exc:
            log.warning(
                f"{self.tag} Checkpoint retention cleanup failed ({redact(str(exc))})",
                resource=self.resource_name,
            )
            return
        log.info(
            f"{self.tag} Cleaned up checkpoints older than {self.cleanup_days} days",
            resource=self.resource_name,
            deleted=deleted,
        )
