"""BigQuery adapter over ``google-cloud-bigquery`` (imported only when a connection opens).

How the contract maps (see ``docs/bigquery.md``):

* identifiers are quoted with backticks; tables render as ```dataset`.`table```;
* values bind as typed positional parameters (``None`` renders as ``NULL``, see ``_params``);
* datasets are created through the API (``create_dataset(exists_ok=True)``), not DDL;
* rows affected come from the query job's ``num_dml_affected_rows``;
* ``fetch_columns`` reads ``dataset.INFORMATION_SCHEMA.COLUMNS``;
* transactions run in a BigQuery session (``BEGIN``/``COMMIT``/``ROLLBACK TRANSACTION``);
* ``UNIQUE`` is not enforced by BigQuery, so the capability says so and no constraint is emitted;
* ``measured_cost`` sums the bytes BigQuery billed for the run's jobs (see ``_cost``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, ClassVar

from dlt_ops.adapters import (
    Capabilities,
    ColumnInfo,
    ColumnType,
    ConnectionTarget,
    SqlAdapterBase,
    Statement,
    check_identifier,
)
from dlt_ops.errors import DestinationError, DestinationUnreachableError, DltOpsError
from dlt_ops.log import get_logger
from dltops_bigquery import _cost, _params
from dltops_bigquery._auth import google_credentials, settings_for
from dltops_bigquery._connection import BigQueryConnection, is_unreachable

log = get_logger(__name__)


class BigQueryAdapter(SqlAdapterBase):
    """BigQuery through the ``google-cloud-bigquery`` SDK."""

    name: ClassVar[str] = "bigquery"
    #: the driver a worker process would import on its first connection (see the protocol)
    preload_modules: ClassVar[tuple[str, ...]] = ("google.cloud.bigquery",)
    #: dlt settings handed to ``connect`` in ``ConnectionTarget.options`` (dlt's own key names)
    dlt_setting_keys: ClassVar[tuple[str, ...]] = ("location",)
    capabilities: ClassVar[Capabilities] = Capabilities(
        create_schema=True,
        if_exists_ddl=True,
        unique_constraints=False,
        transactions=True,
        nested_transactions=False,  # one transaction per session; an inner one raises
        rowcount=True,
        max_identifier_length=300,  # column names; datasets and tables allow 1024
    )
    quote_char: ClassVar[str] = "`"
    #: dollars per TiB billed; BigQuery's on-demand price (override for negotiated rates)
    usd_per_tib_billed: ClassVar[float] = _cost.ON_DEMAND_USD_PER_TIB
    type_names: ClassVar[dict[ColumnType, str]] = {
        ColumnType.TEXT: "STRING",
        ColumnType.BIGINT: "INT64",
        ColumnType.DOUBLE: "FLOAT64",
        ColumnType.BOOLEAN: "BOOL",
        ColumnType.TIMESTAMPTZ: "TIMESTAMP",
    }

    # -- driver calls -----------------------------------------------------------------------

    def _open(self, target: ConnectionTarget) -> BigQueryConnection:
        from google.api_core.client_options import ClientOptions
        from google.cloud import bigquery

        settings = settings_for(target)
        credentials, project = google_credentials(settings)
        if not project:
            raise DestinationError(
                "bigquery: no project id. Set destination.bigquery.credentials.project_id "
                "in .dlt/secrets.toml (or GOOGLE_CLOUD_PROJECT for default credentials)."
            )
        options = (
            ClientOptions(api_endpoint=settings.api_endpoint) if settings.api_endpoint else None
        )
        client = bigquery.Client(
            project=project,
            credentials=credentials,
            location=settings.location,
            client_options=options,
        )
        log.debug("bigquery.connected", project=project, location=settings.location)
        return BigQueryConnection(
            bq=client,
            project=project,
            location=settings.location,
            timeout_s=target.connect_timeout_s,
            query_timeout_s=settings.query_timeout_s,
        )

    def _run(
        self, client: BigQueryConnection, sql: str, params: Sequence[Any], *, fetch: bool
    ) -> Any:
        job = client.job(sql, list(params), session=client.in_transaction)
        result = client.wait(job)
        if fetch:
            return [tuple(row.values()) for row in result]
        return job.num_dml_affected_rows or 0

    def _close(self, client: BigQueryConnection) -> None:
        client.close()

    def _wrap(self, exc: BaseException, what: str) -> DestinationError:
        wrapped = super()._wrap(exc, what)
        if is_unreachable(exc):
            return DestinationUnreachableError(
                f"{wrapped} (is the BigQuery endpoint reachable? check network, api_endpoint "
                f"or BIGQUERY_EMULATOR_HOST)"
            )
        return wrapped

    # -- rendering ----------------------------------------------------------------------------

    def _escape_text(self, text: str) -> str:
        return _params.escape_literals(text)

    def _dispatch(
        self,
        client: BigQueryConnection,
        dataset: str,
        stmt: Statement,
        params: Sequence[Any],
        *,
        fetch: bool,
    ) -> Any:
        values = tuple(params)
        sql = stmt.render(
            quote=self.quote_identifier,
            table=lambda t: self.table_ref(dataset, t),
            placeholder=_params.placeholder_for(values),
            escape_text=self._escape_text,
            n_params=len(values),
        )
        bound = _params.bind_all(values)
        try:
            return self._run(client, sql, bound, fetch=fetch)
        except DltOpsError:
            raise
        except Exception as exc:
            raise self._wrap(exc, f"{self.name} statement failed") from exc

    # -- cost -----------------------------------------------------------------------------------

    def measured_cost(self, client: Any, dataset: str, run: Any) -> float | None:
        """Dollars billed for the jobs these credentials ran on ``dataset`` during ``run``
        (``None`` when BigQuery lists none)."""
        ended = getattr(run, "completed_at", None) or datetime.now(UTC)
        jobs = client.bq.list_jobs(
            min_creation_time=run.started_at,
            max_creation_time=ended,
            state_filter="done",
            timeout=client.timeout_s,
        )
        billed = _cost.billed_bytes(jobs, dataset)
        if billed is None:
            return None
        log.debug("bigquery.measured_cost", bytes_billed=billed)
        return _cost.dollars(billed, self.usd_per_tib_billed)

    # -- datasets, introspection, transactions --------------------------------------------------

    def ensure_dataset(self, client: Any, dataset: str) -> None:
        """Create the dataset through the API (in the connection's location) if absent."""
        from google.cloud import bigquery
        from google.cloud.bigquery.retry import DEFAULT_RETRY

        self.quote_identifier(dataset)
        ref = bigquery.Dataset(f"{client.project}.{dataset}")
        if client.location:
            ref.location = client.location
        try:
            client.bq.create_dataset(
                ref,
                exists_ok=True,
                timeout=client.timeout_s,
                retry=DEFAULT_RETRY.with_timeout(client.timeout_s),
            )
        except Exception as exc:
            raise self._wrap(exc, f"could not create dataset {dataset}") from exc

    def fetch_columns(self, client: Any, dataset: str, table: str) -> list[ColumnInfo] | None:
        """Columns in order from ``dataset.INFORMATION_SCHEMA.COLUMNS``; ``None`` if absent."""
        from google.api_core.exceptions import NotFound

        check_identifier(table, max_length=self.capabilities.max_identifier_length)
        sql = (
            "SELECT column_name, data_type FROM "
            f"{self.quote_identifier(dataset)}.INFORMATION_SCHEMA.COLUMNS "
            "WHERE table_name = ? ORDER BY ordinal_position"
        )
        try:
            rows = self._run(client, sql, _params.bind_all((table,)), fetch=True)
        except NotFound:  # BigQuery: "Dataset ... was not found"
            return None
        except Exception as exc:
            raise self._wrap(exc, f"could not read the columns of {dataset}.{table}") from exc
        return [ColumnInfo(str(n), str(t)) for n, t in rows] or None

    @contextmanager
    def transaction(self, client: Any) -> Iterator[None]:
        """A multi-statement transaction inside the connection's BigQuery session.

        The first transaction opens the session (``create_session``); statements inside the
        block carry its ``session_id``. A failed statement makes BigQuery roll back on its own,
        so a failing ``ROLLBACK`` is logged, and the original error raised.
        """
        if client.in_transaction:
            raise DestinationError("bigquery: transactions do not nest; commit the outer one first")
        try:
            if client.session_id is None:
                job = client.job("BEGIN TRANSACTION", [], session=False, new_session=True)
                client.wait(job)
                client.session_id = job.session_info.session_id
                log.debug("bigquery.session_opened")
            else:
                client.in_transaction = True
                self._run(client, "BEGIN TRANSACTION", [], fetch=False)
        except Exception as exc:
            client.in_transaction = False
            raise self._wrap(exc, "bigquery could not begin a transaction") from exc
        client.in_transaction = True
        try:
            yield
        except BaseException:
            try:
                self._run(client, "ROLLBACK TRANSACTION", [], fetch=False)
            except Exception as exc:
                log.warning("bigquery.rollback_failed", error=type(exc).__name__)
            raise
        else:
            try:
                self._run(client, "COMMIT TRANSACTION", [], fetch=False)
            except Exception as exc:
                raise self._wrap(exc, "bigquery could not commit the transaction") from exc
        finally:
            client.in_transaction = False
