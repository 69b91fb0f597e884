"""Teach redaction every secret a run can see: what dlt resolves as a secret, and secrets files.

Destination passwords were the only masked values once; a source's ``api_key`` resolved by dlt
from ``.dlt/secrets.toml`` or a ``SOURCES__X__API_KEY`` env var then leaked through any error
message that quoted it (stderr, the ledger's ``error_summary``, receipts). Three feeds close that:

* :func:`remember_secrets_file` reads a secrets TOML file without dlt (the project's
  ``.dlt/secrets.toml``) and remembers the values held under secret-looking keys;
* :func:`watch_dlt_secrets` hooks dlt's own config-resolution log, so every value dlt resolves
  with a *secret hint* — ``dlt.secrets.value`` arguments, credentials fields, from any provider
  (env vars, TOML files, vaults) — is remembered the moment it is resolved, before code that
  received it can raise with it; it also reads dlt's secret-capable TOML providers (the global
  ``secrets.toml`` too);
* destination credentials, resolved by :mod:`dlt_ops.config.credentials` as before.

Those feeds start when the source is about to run; a lifecycle plugin's ``dlt_ops_prepare_run``
or ``dlt_ops_run_started`` runs earlier and could quote a secret verbatim.
:func:`harvest_project_secrets` closes that gap: called when a project's config is loaded, it
reads, without dlt, everything dlt could later hand out as a secret (the project's and dlt's
global ``secrets.toml``, secret-named keys in ``config.toml`` and in ``SECTION__KEY`` env vars).

Only values under secret-looking names (or with dlt's secret hint) are taken: a ``host`` or
``username`` in ``secrets.toml`` is not a secret, and masking ``localhost`` everywhere would make
every message unreadable.
"""

from __future__ import annotations

import os
import re
import threading
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from dlt_ops.config.toml import read_toml_cached
from dlt_ops.errors import ConfigError
from dlt_ops.redact import remember_secret

_SECRET_NAME = re.compile(
    r"pass|pwd|secret|token|key|auth|credential|private|signature|cookie|session|bearer",
    re.IGNORECASE,
)
_lock = threading.Lock()
_harvesting_class: type[Any] | None = None


def is_secret_name(name: str) -> bool:
    """Whether a config key's name says its value is a secret (``api_key``, ``password``...)."""
    return bool(_SECRET_NAME.search(name))


def secret_leaves(doc: Any, key: str = "") -> Iterator[str]:
    """String values in ``doc`` held under a secret-looking key, at any depth."""
    if isinstance(doc, Mapping):
        for name, value in doc.items():
            yield from secret_leaves(value, str(name))
    elif isinstance(doc, list | tuple):
        for value in doc:
            yield from secret_leaves(value, key)
    elif isinstance(doc, str) and is_secret_name(key):
        yield from _with_url_password(doc)


def _with_url_password(value: str) -> Iterator[str]:
    """``value``, then the password of a connection string (as written and percent-decoded):
    a driver's error quotes the password alone, never the whole URL."""
    yield value
    yield from _url_password(value)


def _url_password(value: str) -> Iterator[str]:
    if "://" not in value:
        return
    from urllib.parse import unquote, urlsplit

    try:
        password = urlsplit(value.strip()).password
    except ValueError:
        return
    if password:
        yield password
        if unquote(password) != password:
            yield unquote(password)


def remember_secrets_file(path: Path) -> None:
    """Remember the secret values of a secrets TOML file; a missing or broken file adds none."""
    try:  # cached: credentials resolution parses the same file again
        doc = read_toml_cached(path)
    except ConfigError:
        return  # the secrets backend's own check reports a broken file
    for value in secret_leaves(doc):
        remember_secret(value)


#: Outside ``secrets.toml`` a name must *end* in a secret word: there ``sort_key`` or
#: ``session_timeout`` is ordinary config whose value must stay readable in every message.
_STRICT_SECRET_NAME = re.compile(
    r"(?:^|_)(?:password|passwd|pwd|secret|secret_key|token|api_key|apikey|private_key"
    r"|access_key)$",
    re.IGNORECASE,
)


def harvest_project_secrets(
    root: Path, config_doc: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> None:
    """Remember every secret the project could hand out, before any plugin or source runs.

    Reads files and the environment only (no dlt import; ``secrets.toml`` parses are cached),
    so every command that loads a project pays well under a millisecond for it:

    * the project's and dlt's global ``secrets.toml``, as :func:`remember_secrets_file`;
    * ``config_doc`` (the parsed ``config.toml``) and ``SECTION__KEY`` env vars, where only a
      key ending in a secret word counts (``password``, ``token``, ``api_key``, ...; the
      ``[dlt_ops]`` tables are skipped), and of a ``credentials`` connection string only its
      password.
    """
    remember_secrets_file(root / ".dlt" / "secrets.toml")
    for folder in _global_dirs():
        remember_secrets_file(folder / "secrets.toml")
    for value in _config_secrets(config_doc):
        remember_secret(value)
    for name, value in (os.environ if environ is None else environ).items():
        if "__" in name:  # dlt's env layout; other variables are not dlt config
            for secret in _named_secrets(name.rsplit("__", 1)[1], value):
                remember_secret(secret)


def _global_dirs() -> tuple[Path, ...]:
    """Where dlt may keep its global ``secrets.toml`` (``~/.dlt``, XDG, ``/var/dlt`` as root)."""
    dirs = [Path(os.path.expanduser("~")) / ".dlt"]  # never raises, unlike Path.home()
    if "XDG_DATA_HOME" in os.environ:
        dirs.append(Path(os.environ["XDG_DATA_HOME"]) / "dlt")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        dirs.append(Path("/var/dlt"))
    return tuple(dirs)


def _config_secrets(doc: Any, key: str = "") -> Iterator[str]:
    if isinstance(doc, Mapping):
        for name, value in doc.items():
            if name != "dlt_ops":  # dlt-ops' own settings hold names like airflow_var_key
                yield from _config_secrets(value, str(name))
    elif isinstance(doc, list | tuple):
        for value in doc:
            yield from _config_secrets(value, key)
    elif isinstance(doc, str):
        yield from _named_secrets(key, doc)


def _named_secrets(name: str, value: str) -> Iterator[str]:
    """The secrets in ``value`` held under ``name`` (a config key or an env var's last part)."""
    if _STRICT_SECRET_NAME.search(name):
        yield value
    elif name.lower() == "credentials":
        if value.lstrip().startswith("{"):  # dlt takes JSON credentials (a service account)
            import json

            try:
                yield from _config_secrets(json.loads(value))
            except ValueError:
                pass
        else:
            yield from _url_password(value)


def _secret_values(value: Any) -> Iterator[str]:
    """The strings to mask for a value dlt resolved with a secret hint."""
    if isinstance(value, str):
        yield from _with_url_password(value)
        return
    try:
        from dlt.common.configuration.specs import BaseConfiguration

        if isinstance(value, BaseConfiguration):  # credentials object: its secret fields
            hints = value.get_resolvable_fields()
            from dlt.common.configuration import is_secret_hint

            for name, hint in hints.items():
                field = getattr(value, name, None)
                if is_secret_hint(hint) or is_secret_name(name):
                    yield from _secret_values(field)
            return
    except ImportError:  # pragma: no cover - dlt is always present when dlt resolved something
        pass
    yield from secret_leaves(value)


def _harvesting_trace_log() -> type[Any]:
    """A ``TraceLogContext`` that remembers secret values as dlt logs each resolution."""
    global _harvesting_class
    if _harvesting_class is not None:
        return _harvesting_class
    from dlt.common.configuration.specs import configspec
    from dlt.common.configuration.utils import ResolvedValueTrace, TraceLogContext

    @configspec(init=False)  # the base class writes its own __init__
    class HarvestingTraceLog(TraceLogContext):
        def log(self, trace: ResolvedValueTrace) -> None:
            _remember_trace(trace)
            super().log(trace)

    _harvesting_class = HarvestingTraceLog
    return HarvestingTraceLog


def _from_secrets(trace: Any) -> bool:
    """A value under a secret-looking name read from a secrets provider (not a config file)."""
    return is_secret_name(trace.key) and "secret" in str(trace.provider_name).lower()


def watch_dlt_secrets() -> None:
    """From now on, remember every secret dlt resolves in this thread (and dlt's pool threads).

    Also reads dlt's secret-capable TOML providers once. Idempotent and cheap; call it on every
    path that is about to run a source.
    """
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.utils import TraceLogContext

    harvesting = _harvesting_trace_log()
    with _lock:
        current = Container()[TraceLogContext]
        if not isinstance(current, harvesting):
            replacement = harvesting()
            # keep what was already logged, so nothing resolved before this call is lost
            replacement.resolved_traces = list(current.resolved_traces)
            replacement.all_traces = list(current.all_traces)
            Container()[TraceLogContext] = replacement
            for trace in current.resolved_traces:
                _remember_trace(trace)
    _read_secret_providers()


def _remember_trace(trace: Any) -> None:
    if trace.value is not None and (_is_secret_hint(trace.hint) or _from_secrets(trace)):
        for value in _secret_values(trace.value):
            remember_secret(value)


#: ``is_secret_hint`` per hint: dlt resolves the same few hints many thousand times a run
#: (every page of a checkpointed extract), and unwrapping a typing hint is not free
_secret_hint_cache: dict[Any, bool] = {}


def _is_secret_hint(hint: Any) -> bool:
    try:
        return _secret_hint_cache[hint]
    except KeyError:
        pass
    except TypeError:  # an unhashable hint: asked every time
        return _dlt_is_secret_hint(hint)
    found = _secret_hint_cache[hint] = _dlt_is_secret_hint(hint)
    return found


def _dlt_is_secret_hint(hint: Any) -> bool:
    from dlt.common.configuration import is_secret_hint

    return bool(is_secret_hint(hint))


def _read_secret_providers() -> None:
    try:
        from dlt.common.configuration.container import Container
        from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext

        providers = Container()[PluggableRunContext].providers.providers
    except Exception:  # noqa: BLE001 - best effort: resolution traces still catch every secret
        return
    for provider in providers:
        if not provider.supports_secrets:
            continue
        for value in secret_leaves(_provider_doc(provider)):
            remember_secret(str(value))


def _provider_doc(provider: Any) -> Any:
    """What a secret-capable provider holds, as a mapping (``None`` when it cannot say).

    A TOML provider's document is walked as it is: rendering it with ``to_toml`` and parsing
    that again cost ~0.1 s per run, paid on every run and every backfill chunk.
    """
    from dlt.common.configuration.providers.doc import BaseDocProvider

    if isinstance(provider, BaseDocProvider):
        return provider._config_doc
    if not hasattr(provider, "to_toml"):
        return None
    try:
        return tomllib.loads(provider.to_toml())
    except Exception:  # noqa: BLE001 - an unreadable provider adds nothing
        return None
