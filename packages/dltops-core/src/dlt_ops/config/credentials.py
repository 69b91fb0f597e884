"""Destination credentials, looked up where dlt looks them up, without importing dlt.

dlt resolves a destination's ``credentials`` from environment variables, then
``.dlt/secrets.toml``, then ``.dlt/config.toml``, trying the most specific section first:

``<pipeline>.destination.<engine>.credentials`` → ``destination.<engine>.credentials`` →
``<pipeline>.destination.credentials`` → ``destination.credentials``.

A value is either a connection string or a table of fields; fields of one section may be split
across providers (e.g. the password in ``DESTINATION__<ENGINE>__CREDENTIALS__PASSWORD``, the
rest in ``config.toml``), and the more specific provider wins per field. Every password found
is remembered for redaction.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from dlt_ops.config.toml import read_toml_cached
from dlt_ops.redact import remember_secret

Credentials = str | dict[str, Any] | None

#: inside :func:`lookups_frozen`: the environment's credential variables and each TOML file,
#: as first read in the block
_FROZEN: ContextVar[dict[object, Any] | None] = ContextVar("dlt_ops_frozen_lookups", default=None)
_ENVIRONMENT = object()  # the key of the environment's credential variables in _FROZEN


@contextmanager
def lookups_frozen() -> Iterator[None]:
    """Inside the block, the environment and both TOML files are read once, however many
    sources look their credentials up: a fleet of a thousand sources scanned the environment
    and stat()ed both files per source (nested blocks share the outer one's reads). For a
    block that changes neither the environment nor the files."""
    if _FROZEN.get() is not None:
        yield
        return
    token = _FROZEN.set({})
    try:
        yield
    finally:
        _FROZEN.reset(token)


def _once(key: object, build: Callable[[], Any]) -> Any:
    """``build()``, once per :func:`lookups_frozen` block for ``key`` (each call outside one)."""
    frozen = _FROZEN.get()
    if frozen is None:
        return build()
    if key not in frozen:
        frozen[key] = build()
    return frozen[key]


def _project_toml(root: Path, name: str) -> dict[str, Any]:
    """``read_toml_cached`` of ``root/.dlt/name``, read once per frozen block."""
    return _once((root, name), lambda: read_toml_cached(root / ".dlt" / name))


def _section_paths(engine: str, pipeline_name: str | None) -> list[tuple[str, ...]]:
    base = [("destination", engine, "credentials"), ("destination", "credentials")]
    if pipeline_name:
        return [(pipeline_name, *base[0]), base[0], (pipeline_name, *base[1]), base[1]]
    return base


def _toml_lookup(doc: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = doc
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _env_lookup(environ: Mapping[str, str], path: tuple[str, ...]) -> Any:
    key = "__".join(p.upper() for p in path)
    if key in environ:
        return environ[key]
    prefix = key + "__"
    fields = {k[len(prefix) :].lower(): v for k, v in environ.items() if k.startswith(prefix)}
    return fields or None


def _remember(value: Credentials) -> None:
    if isinstance(value, dict):
        for key in ("password", "private_key", "token"):
            remember_secret(value.get(key))
    elif isinstance(value, str) and "://" in value:
        try:
            remember_secret(urlsplit(value).password)
        except ValueError:
            pass


def _credential_keys(source: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``source`` whose name holds ``CREDENTIALS``. For ``os.environ`` its
    raw bytes are scanned (a match is decoded as ``os.environ`` would): iterating
    ``os.environ`` decodes every name, per source of a fleet."""
    raw = getattr(source, "_data", None) if source is os.environ and os.name == "posix" else None
    if not isinstance(raw, dict):
        return {k: source[k] for k in source if "CREDENTIALS" in k}
    return {
        k: source[k] for k in (os.fsdecode(b) for b in raw if b"CREDENTIALS" in b) if k in source
    }


def resolve_credentials(
    root: Path,
    engine: str,
    pipeline_name: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Credentials:
    """The credentials dlt would resolve for ``engine`` in this project, or ``None``."""
    # one plain copy of the keys a lookup can match (every path ends in "credentials": the
    # exact key or its "__" fields), so the prefix scans below are short: called per source
    # (keys first: os.environ decodes each value it is asked for)
    secrets = _project_toml(root, "secrets.toml")
    config = _project_toml(root, "config.toml")
    if environ is None:  # os.environ: its credential variables and each path, once per block
        env = _once(_ENVIRONMENT, lambda: _credential_keys(os.environ))
        from_env = lambda p: _once((_ENVIRONMENT, p), lambda: _env_lookup(env, p))  # noqa: E731
    else:
        env = _credential_keys(environ)
        from_env = lambda p: _env_lookup(env, p)  # noqa: E731
    providers = [
        from_env,
        lambda p: _toml_lookup(secrets, p),
        lambda p: _toml_lookup(config, p),
    ]
    for path in _section_paths(engine, pipeline_name):
        merged: dict[str, Any] = {}
        for provider in providers:
            value = provider(path)
            if isinstance(value, str) and value and not merged:
                _remember(value)
                return value
            if isinstance(value, Mapping):
                for k, v in value.items():
                    merged.setdefault(k, v)
        if merged:
            _remember(merged)
            return merged
    return None


def resolve_destination_setting(
    root: Path,
    engine: str,
    key: str,
    pipeline_name: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Any:
    """A scalar destination setting (e.g. a warehouse's ``location``) where dlt would find it:
    ``[<pipeline>.]destination.<engine>.<key>`` in env vars, secrets.toml, config.toml."""
    env = os.environ if environ is None else environ
    docs = [
        _project_toml(root, "secrets.toml"),
        _project_toml(root, "config.toml"),
    ]
    paths: list[tuple[str, ...]] = [("destination", engine, key)]
    if pipeline_name:
        paths.insert(0, (pipeline_name, "destination", engine, key))
    for path in paths:
        name = "__".join(p.upper() for p in path)
        if name in env:
            return env[name]
        for doc in docs:
            value = _toml_lookup(doc, path)
            if value is not None and not isinstance(value, Mapping):
                return value
    return None


def credentials_in_config(
    raw_config: Mapping[str, Any], engine: str, pipeline_name: str | None = None
) -> str | None:
    """The ``config.toml`` key holding a password for ``engine``'s credentials, if any.

    dlt refuses secrets from ``config.toml`` only when it resolves them, mid-run; this finds the
    mistake from the file alone, in every section :func:`resolve_credentials` reads (the
    pipeline-scoped ones too: a derived adapter hands dlt what was found there), as a connection
    string or a table with ``password``.
    """
    for path in _section_paths(engine, pipeline_name):
        creds = _toml_lookup(raw_config, path)
        key = ".".join(path)
        if isinstance(creds, str) and "://" in creds:
            try:
                if urlsplit(creds).password:
                    return key
            except ValueError:
                continue
        elif isinstance(creds, Mapping) and creds.get("password"):
            return f"{key}.password"
    return None
