"""The ``airflow`` secret backend: a source's secret from an Airflow Variable.

A source claims it with ``airflow_var = "<Variable name>"`` in ``[sources.<X>.dlt_ops]``
(and ``airflow_var_key``, default ``api_secret_key``, the key the source reads). Before the
source function runs, on every path that runs a source (CLI, scheduler, backfill, Airflow
tasks), the Variable's value is handed to dlt as ``sources.<X>.<airflow_var_key>``. The backend
claims sources only where Airflow is importable (the ``airflow`` extra); elsewhere a source
with ``airflow_var`` is refused with the install hint.

``airflow_conn = "<Connection id>"`` makes an Airflow Connection the source of the destination's
credentials: its URI is handed to dlt (and to dlt-ops' own ledger sessions) as
``DESTINATION__<ENGINE>__CREDENTIALS`` before the first destination session of a run opens.
"""

from __future__ import annotations

import importlib.util
import os
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig, SourceConfig


#: the key under ``sources.<X>`` the Variable's value fills, unless ``airflow_var_key`` says
DEFAULT_VAR_KEY = "api_secret_key"


def airflow_var_key(config: ProjectConfig, source: str) -> str:
    """``[sources.<source>.dlt_ops] airflow_var_key``, read off the table (the config model
    carries no key only this backend reads)."""
    from dlt_ops.config.plugin_keys import plugin_value

    return str(plugin_value(config, "airflow_var_key", source) or DEFAULT_VAR_KEY)


def _airflow_installed() -> bool:
    return importlib.util.find_spec("airflow") is not None


def _drivername(engine: str) -> str | None:
    """The URI scheme dlt's credentials for ``engine`` carry (Airflow may name the connection
    type differently): the engine fact comes from dlt, never from a name table here."""
    import typing

    from dlt.common.destination import Destination

    try:
        destination = Destination.from_reference(engine)
        if destination is None:
            return None
        credentials = typing.get_type_hints(destination.spec).get("credentials")
    except Exception:  # an engine dlt cannot describe: keep Airflow's scheme
        return None
    name = getattr(credentials, "drivername", None)
    return name if isinstance(name, str) and name else None


def connection_uri(conn: Any, engine: str | None = None) -> str:
    """A dlt connection string from an Airflow ``Connection``: ``<scheme>://login:password@host
    :port/schema``, the Connection's extra fields as the query string; the scheme is the one
    dlt's credentials for ``engine`` use, else the connection's type."""
    scheme = (_drivername(engine) if engine else None) or conn.conn_type
    auth = ""
    if conn.login or conn.password:
        auth = quote(conn.login or "", safe="")
        if conn.password:
            auth += ":" + quote(conn.password, safe="")
        auth += "@"
    netloc = auth + (conn.host or "") + (f":{conn.port}" if conn.port else "")
    extra = conn.extra_dejson or {}
    query = "?" + urlencode({k: str(v) for k, v in extra.items()}) if extra else ""
    return f"{scheme}://{netloc}/{conn.schema or ''}{query}"


def credentials_env(config: ProjectConfig, source: str) -> str:
    """The variable dlt reads the credentials of ``source``'s destination from."""
    from dlt_ops.destinations import engine_name

    return f"DESTINATION__{engine_name(config.destination_for(source)).upper()}__CREDENTIALS"


class AirflowVariableBackend:
    """Secrets from Airflow Variables (``Variable.get``), destination credentials from an
    Airflow Connection (``Connection.get``)."""

    name = "airflow"

    def claims(self, source: SourceConfig) -> bool:
        """Sources that set ``airflow_var`` or ``airflow_conn``, where Airflow is installed."""
        return bool(source.airflow_var or source.airflow_conn) and _airflow_installed()

    def check(self, config: ProjectConfig, source: str) -> list[str]:
        """Airflow must be importable."""
        if not _airflow_installed():
            return ['Apache Airflow is not installed: pip install "dltops-core[airflow]"']
        return []

    def prepare_destination(self, config: ProjectConfig, source: str) -> None:
        """Fetch ``airflow_conn`` and put its URI where dlt and dlt-ops resolve the
        destination's credentials (env, for this process); its password is masked from now."""
        cfg = config.source(source)
        if not cfg.airflow_conn:
            return
        from airflow.sdk import Connection

        from dlt_ops.errors import SecretBackendError
        from dlt_ops.redact import remember_secret

        try:
            conn = Connection.get(cfg.airflow_conn)
        except Exception as exc:  # AirflowNotFoundException, or a backend that failed
            raise SecretBackendError(
                f"Airflow Connection {cfg.airflow_conn!r} could not be read "
                f"({type(exc).__name__}); create it (`airflow connections add`) or fix "
                f"airflow_conn in [sources.{source}.dlt_ops]."
            ) from None
        remember_secret(conn.password)
        from dlt_ops.destinations import engine_name

        engine = engine_name(config.destination_for(source))
        os.environ[credentials_env(config, source)] = connection_uri(conn, engine)

    def prepare(self, config: ProjectConfig, source: str) -> None:
        """Fetch the Variable and put it where dlt resolves the source's secret (env, dlt's
        first provider, for this process). The Connection was fetched earlier, by
        :meth:`prepare_destination`, before the run's first destination session."""
        cfg = config.source(source)
        if not cfg.airflow_var:
            return
        from airflow.sdk import Variable

        value = Variable.get(str(cfg.airflow_var), default=None)
        if value is None:
            from dlt_ops.errors import SecretBackendError

            raise SecretBackendError(
                f"Airflow Variable {cfg.airflow_var!r} does not exist; create it or fix "
                f"airflow_var in [sources.{source}.dlt_ops]."
            )
        env = f"SOURCES__{source.upper()}__{airflow_var_key(config, source).upper()}"
        os.environ[env] = str(value)
