"""The live connection the BigQuery adapter hands out: SDK client, location, timeouts, session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dlt_ops.log import get_logger

log = get_logger(__name__)


def is_unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` means the endpoint could not be reached (not that a query failed)."""
    import requests
    from google.api_core import exceptions as gexc
    from google.auth import exceptions as aexc

    return isinstance(
        exc,
        requests.ConnectionError | requests.Timeout | gexc.RetryError | aexc.TransportError,
    )


@dataclass
class BigQueryConnection:
    """One SDK client plus what every call needs: location, timeouts, the open session."""

    bq: Any  # google.cloud.bigquery.Client
    project: str
    location: str | None
    timeout_s: float
    query_timeout_s: float
    session_id: str | None = None
    in_transaction: bool = False
    closed: bool = False

    def job(self, sql: str, params: list[Any], *, session: bool, new_session: bool = False) -> Any:
        """Start a query job with bounded retries (a dead endpoint fails in ``timeout_s``)."""
        from google.cloud.bigquery import ConnectionProperty, QueryJobConfig
        from google.cloud.bigquery.retry import DEFAULT_RETRY

        config = QueryJobConfig(query_parameters=params, create_session=new_session or None)
        if session and self.session_id:
            config.connection_properties = [ConnectionProperty("session_id", self.session_id)]
        return self.bq.query(
            sql,
            job_config=config,
            location=self.location,
            timeout=self.timeout_s,
            retry=DEFAULT_RETRY.with_timeout(self.timeout_s),
            # None: the SDK would otherwise wrap the insert in its own 10-minute retry loop
            # (even for a dead endpoint); failed jobs are restarted in ``wait`` instead.
            job_retry=None,
        )

    def wait(self, job: Any) -> Any:
        """The job's rows, waiting at most ``query_timeout_s``."""
        from google.api_core.retry import Retry
        from google.cloud.bigquery.retry import DEFAULT_RETRY

        return job.result(
            timeout=self.query_timeout_s,
            retry=DEFAULT_RETRY.with_timeout(self.timeout_s),
            job_retry=Retry(predicate=_job_should_retry, timeout=self.query_timeout_s),
        )

    def close(self) -> None:
        """End the session (if one was opened) and close the HTTP client; idempotent."""
        if self.closed:
            return
        self.closed = True
        if self.session_id:
            try:  # sessions expire on their own after 24 h; ending them early is courtesy
                self.wait(self.job("CALL BQ.ABORT_SESSION()", [], session=True))
            except Exception as exc:  # the emulator has no BQ.ABORT_SESSION
                log.debug("bigquery.session_abort_failed", error=type(exc).__name__)
        self.bq.close()


#: Job failures BigQuery documents as transient; the failed job is re-run (never a done one).
_JOB_RETRY_REASONS = frozenset(
    {
        "rateLimitExceeded",
        "backendError",
        "internalError",
        "jobBackendError",
        "jobInternalError",
        "jobRateLimitExceeded",
    }
)


def _job_should_retry(exc: BaseException) -> bool:
    if is_unreachable(exc):
        return False  # the API-call retry already spent its budget; do not start over
    errors = getattr(exc, "errors", None)
    try:
        reason = errors[0]["reason"]  # type: ignore[index]
    except (TypeError, IndexError, KeyError):
        return False
    return reason in _JOB_RETRY_REASONS
