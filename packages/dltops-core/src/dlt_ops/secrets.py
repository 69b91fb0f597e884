"""Secret backends: who provides a source's secrets, and the check every run repeats.

A backend (plugin kind ``secret_backend``) *claims* the sources whose secrets it provides
(the ``airflow`` backend claims sources with ``airflow_var``); a source nobody claims uses the
built-in ``secrets_toml`` backend, i.e. dlt's own providers reading ``.dlt/secrets.toml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from dlt_ops.errors import (
    PluginConflictError,
    PluginLoadError,
    PluginLoadFailedError,
    PluginNotRegisteredError,
    SecretBackendError,
    UnknownPluginError,
)
from dlt_ops.plugins.kinds import Kind

if TYPE_CHECKING:
    from collections.abc import Callable

    from dlt_ops.config import ProjectConfig, SourceConfig
    from dlt_ops.plugins import PluginRegistry

DEFAULT_SECRET_BACKEND = "secrets_toml"


@runtime_checkable
class SecretBackend(Protocol):
    """What a ``secret_backend`` plugin registers."""

    name: str

    def claims(self, source: SourceConfig) -> bool:
        """Whether this backend provides the secrets of ``source`` (the default claims none)."""

    def check(self, config: ProjectConfig, source: str) -> list[str]:
        """Problems that would stop the backend from serving ``source`` (empty when fine)."""

    def prepare(self, config: ProjectConfig, source: str) -> None:
        """Make the secrets visible to dlt's providers before the source is instantiated."""


#: The typed key: ``registry.get(SECRET_BACKEND, name)`` is a :class:`SecretBackend`.
SECRET_BACKEND: Kind[SecretBackend] = Kind("secret_backend", SecretBackend)


def resolve_secret_backend(
    config: ProjectConfig, registry: PluginRegistry, source: str
) -> tuple[str, SecretBackend]:
    """The backend serving ``source``, checked; raises a ``PreflightError`` subclass."""
    cfg = config.source(source)
    claimers: list[str] = []
    for name in registry.names("secret_backend"):
        if name == DEFAULT_SECRET_BACKEND:
            continue
        try:
            backend = registry.get(SECRET_BACKEND, name)
        except (UnknownPluginError, PluginLoadError, PluginConflictError):
            continue  # reported by `plugins doctor`; it matters only if it would claim
        if backend.claims(cfg):
            claimers.append(name)
    if len(claimers) > 1:
        raise SecretBackendError(
            f"source '{source}' is claimed by several secret backends: {', '.join(claimers)}. "
            f"Keep one claim (e.g. remove airflow_var) or uninstall one backend."
        )
    for key in ("airflow_var", "airflow_conn"):
        if getattr(cfg, key) and not claimers:
            raise SecretBackendError(
                f"source '{source}' sets {key} = {getattr(cfg, key)!r} but no installed secret "
                f"backend claims it. Install the Airflow backend (`pip install "
                f"dltops-core[airflow]`) or remove {key} from [sources.{source}.dlt_ops]."
            )
    name = claimers[0] if claimers else DEFAULT_SECRET_BACKEND
    try:
        backend = registry.get(SECRET_BACKEND, name)
    except PluginLoadError as exc:
        raise PluginLoadFailedError("secret_backend", name, exc.cause) from exc
    except UnknownPluginError as exc:
        raise PluginNotRegisteredError(
            "secret_backend", name, exc.known, f"source '{source}'"
        ) from exc
    problems = backend.check(config, source)
    if problems:
        raise SecretBackendError(
            f"secret backend '{name}' cannot serve source '{source}': {'; '.join(problems)}"
        )
    return name, backend


def engage_secrets(config: ProjectConfig, registry: PluginRegistry, source: str) -> SecretBackend:
    """Resolve, check and prepare ``source``'s secret backend, and arm redaction for its secrets.

    Every path that runs a source calls this before the source function is called: from then
    on each value dlt resolves as a secret is masked in every output — errors, logs, ledger
    rows, receipts, sink lines. The project's own secrets were harvested earlier, when its
    config was loaded; they are harvested again after the backend's ``prepare``, which may
    have put a fetched secret in an env var (the Airflow backend does).
    """
    from dlt_ops.config.secret_values import harvest_project_secrets, watch_dlt_secrets

    name, backend = resolve_secret_backend(config, registry, source)
    _bounded(config, name, "prepare", backend.prepare, source)
    harvest_project_secrets(config.root, config.raw)
    watch_dlt_secrets()
    return backend


def engage_destination_secrets(
    config: ProjectConfig, registry: PluginRegistry, source: str
) -> None:
    """Let ``source``'s secret backend supply its destination's credentials, before the first
    destination session of the run opens (the lease, the ledger's start row). A backend opts in
    with a ``prepare_destination(config, source)`` method (the ``airflow`` backend fetches an
    Airflow Connection there); the others are left alone."""
    name, backend = resolve_secret_backend(config, registry, source)
    prepare = getattr(backend, "prepare_destination", None)
    if prepare is not None:
        _bounded(config, name, "prepare_destination", prepare, source)


def secret_call_timeout(config: ProjectConfig, name: str) -> float:
    """Backend ``name``'s bound, ``[dlt_ops.secret_backend.<name>] call_timeout_s`` (default
    30 s; a bad value is a ``ConfigError``)."""
    from dlt_ops.plugins.bound import sink_call_timeout

    return sink_call_timeout(config.secret_backend, "secret_backend", name)


def _bounded(
    config: ProjectConfig,
    name: str,
    call: str,
    fn: Callable[[ProjectConfig, str], None],
    source: str,
) -> None:
    """``fn(config, source)`` waited for at most the backend's bound. A backend that does not
    answer fails the run (the source's secrets are not there: going on would run it without
    them), with the bound in the error; the built-in ``dlt`` backend reads local files only."""
    from dlt_ops.errors import PluginTimeoutError
    from dlt_ops.plugins.bound import Bound

    if name == DEFAULT_SECRET_BACKEND:
        fn(config, source)
        return
    seconds = secret_call_timeout(config, name)
    try:
        Bound(f"secret_backend '{name}'", seconds).read(call, fn, config, source)
    except PluginTimeoutError as exc:
        raise SecretBackendError(
            f"secret backend '{name}' did not answer {call} for source '{source}' within "
            f"{seconds:g}s, so its secrets are not available; the run stops here. Fix the "
            f"backend or raise [dlt_ops.secret_backend.{name}] call_timeout_s."
        ) from exc
