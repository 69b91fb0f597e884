"""Secret harvesting, judged by what redaction masks afterwards (each test uses fresh values:
remembered secrets are process-wide)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from dlt_ops.config.secret_values import (
    harvest_project_secrets,
    is_secret_name,
    remember_secrets_file,
    secret_leaves,
    watch_dlt_secrets,
)
from dlt_ops.redact import redact


def fresh() -> str:
    return f"v{uuid.uuid4().hex[:12]}"


def masked(value: str) -> bool:
    return redact(f"<{value}>") == "<***>"


@pytest.mark.parametrize(
    "name", ["password", "db_pwd", "api_key", "AUTH", "client_secret", "signature", "Cookie"]
)
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["host", "username", "port", "dataset", ""])
def test_ordinary_names(name: str) -> None:
    assert not is_secret_name(name)


def test_secret_leaves_walk_tables_and_lists() -> None:
    doc = {"a": {"password": "p1", "host": "h", "tokens": ["t1", "t2"], "key": 5}, "pwd": "p2"}
    assert list(secret_leaves(doc)) == ["p1", "t1", "t2", "p2"]


def test_a_secrets_file_teaches_only_its_secret_values(tmp_path: Path) -> None:
    pw, host = fresh(), fresh()
    path = tmp_path / "secrets.toml"
    path.write_text(f'[sources.s]\napi_key = "{pw}"\nhost = "{host}"\n')
    remember_secrets_file(path)
    assert masked(pw) and not masked(host)
    broken = tmp_path / "broken.toml"
    broken.write_text("[[[ not toml")
    remember_secrets_file(broken)  # a broken file adds nothing and does not raise
    remember_secrets_file(tmp_path / "missing.toml")


def test_the_project_harvest_reads_files_config_and_environment(tmp_path: Path) -> None:
    (tmp_path / ".dlt").mkdir()
    in_file, in_config, in_env, url_pw, json_key = fresh(), fresh(), fresh(), fresh(), fresh()
    sort_key, own, plain_env, user = fresh(), fresh(), fresh(), fresh()
    (tmp_path / ".dlt" / "secrets.toml").write_text(f'[x]\npassword = "{in_file}"\n')
    config = {
        "sources": {
            "s": {"api_key": in_config, "sort_key": sort_key},
            "credentials": f"postgresql://{user}:{url_pw}@db/x",
        },
        "destination": {"credentials": json.dumps({"private_key": json_key, "x": user})},
        "dlt_ops": {"airflow_var_token": own},
    }
    environ = {
        "SOURCES__S__TOKEN": in_env,
        "SOURCES__S__SORT_KEY": sort_key,
        "MY_TOKEN": plain_env,  # not dlt's SECTION__KEY layout
    }
    harvest_project_secrets(tmp_path, config, environ)
    for value in (in_file, in_config, in_env, url_pw, json_key):
        assert masked(value), value
    for value in (sort_key, own, plain_env, user):
        assert not masked(value), value


def test_odd_credentials_strings_are_skipped(tmp_path: Path) -> None:
    ordinary = fresh()
    config = {
        "a": {"credentials": "{not json"},
        "b": {"credentials": "http://[bad"},
        "c": {"credentials": f"postgresql://{ordinary}@db/x"},  # no password part
        "d": {"credentials": ordinary},
    }
    harvest_project_secrets(tmp_path, config, {})
    assert not masked(ordinary)


def test_dlt_resolved_secrets_are_remembered_when_resolved(monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:  # fmt: skip
    import dlt

    secret = fresh()
    monkeypatch.setenv("SOURCES__HARVEST_SRC__API_KEY", secret)
    watch_dlt_secrets()
    watch_dlt_secrets()  # idempotent

    @dlt.source(name="harvest_src")
    def harvest_src(api_key: str = dlt.secrets.value):  # noqa: ANN202
        @dlt.resource
        def rows():  # noqa: ANN202
            yield {"k": len(api_key)}

        return rows

    assert not masked(secret)
    harvest_src()
    assert masked(secret)


def test_a_credentials_object_gives_its_secret_fields_only() -> None:
    from dlt.sources.credentials import ConnectionStringCredentials

    from dlt_ops.config.secret_values import _secret_values

    user, pw = fresh(), fresh()
    creds = ConnectionStringCredentials(f"postgresql://{user}:{pw}@db:5432/x")
    assert list(_secret_values(creds)) == [pw]
    assert list(_secret_values({"token": pw, "host": user})) == [pw]
    assert list(_secret_values(pw)) == [pw]


def test_a_secret_named_value_from_secrets_toml_is_remembered_without_a_secret_hint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    key, host, from_config = fresh(), fresh(), fresh()
    (tmp_path / ".dlt").mkdir()
    (tmp_path / ".dlt" / "secrets.toml").write_text(
        f'[sources.plain_src]\nsession_token = "{key}"\nhost = "{host}"\n'
    )
    (tmp_path / ".dlt" / "config.toml").write_text(
        f'[sources.plain_src]\nsort_token = "{from_config}"\n'
    )
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext

    from dlt_ops.project.loader import use_project_dir

    before = Path(Container()[PluggableRunContext].context.run_dir)
    monkeypatch.chdir(tmp_path)
    use_project_dir(tmp_path, refresh=True)
    try:
        _resolve_plain_src(key, host, from_config)
    finally:  # later tests in this process find dlt where it was
        use_project_dir(before, refresh=True)


def _resolve_plain_src(key: str, host: str, from_config: str) -> None:
    import dlt

    watch_dlt_secrets()

    @dlt.source(name="plain_src")
    def plain_src(session_token=dlt.config.value, host=dlt.config.value,  # noqa: ANN001, ANN202
                  sort_token=dlt.config.value):  # noqa: ANN001  # fmt: skip
        return dlt.resource([1], name="r")

    plain_src()
    assert masked(key)
    assert not masked(host)  # not a secret name
    assert not masked(from_config)  # a secret name, but from a config file


def test_dlts_global_secrets_files_are_harvested(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:  # fmt: skip
    import os

    from dlt_ops.config.secret_values import _global_dirs

    in_home, in_xdg = fresh(), fresh()
    (tmp_path / "home" / ".dlt").mkdir(parents=True)
    (tmp_path / "home" / ".dlt" / "secrets.toml").write_text(f'[a]\ntoken = "{in_home}"\n')
    (tmp_path / "xdg" / "dlt").mkdir(parents=True)
    (tmp_path / "xdg" / "dlt" / "secrets.toml").write_text(f'[a]\npassword = "{in_xdg}"\n')
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    dirs = _global_dirs()
    assert dirs[:2] == (tmp_path / "home" / ".dlt", tmp_path / "xdg" / "dlt")
    assert (Path("/var/dlt") in dirs) == (os.geteuid() == 0)  # dlt's data dir as root
    monkeypatch.delenv("XDG_DATA_HOME")
    assert tmp_path / "xdg" / "dlt" not in _global_dirs()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    harvest_project_secrets(tmp_path / "project", {}, {})
    assert masked(in_home) and masked(in_xdg)


def test_watching_reads_the_secrets_providers_and_what_dlt_resolved_before(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import dlt
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext
    from dlt.common.configuration.utils import TraceLogContext

    from dlt_ops.project.loader import use_project_dir

    unread, in_config, early = fresh(), fresh(), fresh()
    (tmp_path / ".dlt").mkdir()
    (tmp_path / ".dlt" / "secrets.toml").write_text(f'[sources.nobody]\napi_key = "{unread}"\n')
    (tmp_path / ".dlt" / "config.toml").write_text(f'[sources.nobody]\napi_key = "{in_config}"\n')
    before = Path(Container()[PluggableRunContext].context.run_dir)
    monkeypatch.chdir(tmp_path)
    use_project_dir(tmp_path, refresh=True)
    saved = Container()[TraceLogContext]
    try:
        Container()[TraceLogContext] = TraceLogContext()  # dlt's own log, not yet watched
        monkeypatch.setenv("SOURCES__EARLY_SRC__API_KEY", early)

        @dlt.source(name="early_src")
        def early_src(api_key: str = dlt.secrets.value):  # noqa: ANN202
            return dlt.resource([1], name="r")

        early_src()  # resolved before anyone watched
        assert not masked(early)
        watch_dlt_secrets()
        assert masked(early)  # taken from what dlt had already logged
        assert masked(unread)  # never resolved, but held by a secrets provider
        assert not masked(in_config)  # config.toml holds no secrets
    finally:
        Container()[TraceLogContext] = saved
        use_project_dir(before, refresh=True)


def test_a_connection_string_secret_teaches_its_password_alone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A credentials URL is remembered whole *and* by its password: a driver's error quotes the
    password by itself ("password authentication failed for ..."), not the URL."""
    import dlt

    from dlt_ops.config.secret_values import _secret_values

    user, pw, host, encoded = fresh(), fresh(), fresh(), fresh()
    url = f"postgresql://{user}:{pw}@{host}/db"
    path = tmp_path / "secrets.toml"
    path.write_text(f'[sources.pg]\ncredentials = "{url}"\n')
    remember_secrets_file(path)
    assert redact(f"login with {pw} failed") == "login with *** failed"
    assert not masked(user) and not masked(host)  # the user and host stay readable
    # percent-encoded in the URL, quoted decoded by whoever parsed it
    assert list(_secret_values(f"mssql://{user}:{encoded}%40x@{host}/db"))[1:] == [
        f"{encoded}%40x",
        f"{encoded}@x",
    ]
    assert list(_secret_values(f"postgresql://{user}@{host}/db")) == [
        f"postgresql://{user}@{host}/db"
    ]  # no password part: the string alone
    resolved_user, resolved_pw = fresh(), fresh()
    monkeypatch.setenv(
        "SOURCES__URL_SRC__CREDENTIALS", f"postgresql://{resolved_user}:{resolved_pw}@db/x"
    )
    watch_dlt_secrets()

    @dlt.source(name="url_src")
    def url_src(credentials: str = dlt.secrets.value):  # noqa: ANN202
        return dlt.resource([len(credentials)], name="r")

    url_src()
    assert masked(resolved_pw) and not masked(resolved_user)


def test_env_credentials_url_and_lists_of_secrets_in_config(tmp_path: Path) -> None:
    user, pw, first, second, blob_key = fresh(), fresh(), fresh(), fresh(), fresh()
    config = {
        "sources": {"s": {"token": [first, second]}},
        # a TOML multi-line string starts with a newline
        "destination": {"credentials": "\n  " + json.dumps({"private_key": blob_key}) + "\n"},
    }
    environ = {"SOURCES__PG__CREDENTIALS": f"postgresql://{user}:{pw}@db/x"}
    harvest_project_secrets(tmp_path, config, environ)
    for value in (pw, first, second, blob_key):
        assert masked(value), value
    assert not masked(user)


def test_a_non_root_user_does_not_read_var_dlt(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from dlt_ops.config.secret_values import _global_dirs

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert Path("/var/dlt") not in _global_dirs()
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert Path("/var/dlt") in _global_dirs()


def test_credentials_fields_by_secret_hint_or_by_name() -> None:
    from dlt.common.configuration.specs import CredentialsConfiguration, configspec
    from dlt.common.typing import TSecretStrValue

    from dlt_ops.config.secret_values import _secret_values

    class DsnCredentials(CredentialsConfiguration):
        dsn = None  # a secret hint, an ordinary name
        api_token = None  # a secret name, no hint
        host = None

    # set as objects: this module's annotations are strings dlt would resolve in its globals
    DsnCredentials.__annotations__ = {"dsn": TSecretStrValue, "api_token": str, "host": str}
    DsnCredentials = configspec(DsnCredentials)  # noqa: N806
    dsn, token, host = fresh(), fresh(), fresh()
    creds = DsnCredentials()
    creds.dsn, creds.api_token, creds.host = dsn, token, host
    assert sorted(_secret_values(creds)) == sorted([dsn, token])


def test_secret_hints_are_recognised_when_first_seen_and_when_unhashable() -> None:
    from typing import Annotated

    from dlt.common.typing import SecretSentinel

    from dlt_ops.config.secret_values import _is_secret_hint

    new_hint = Annotated[str, SecretSentinel, fresh()]  # never cached before
    assert _is_secret_hint(new_hint) is True
    assert _is_secret_hint(new_hint) is True  # and from the cache
    assert _is_secret_hint(Annotated[str, fresh()]) is False
    unhashable = Annotated[str, SecretSentinel, {"a": []}]
    with pytest.raises(TypeError):
        hash(unhashable)
    assert _is_secret_hint(unhashable) is True


def test_a_trace_read_from_a_secrets_provider_counts_by_its_name() -> None:
    from dlt.common.configuration.utils import ResolvedValueTrace

    from dlt_ops.config.secret_values import _remember_trace

    def trace(key: str, value: str, provider: str) -> ResolvedValueTrace:
        return ResolvedValueTrace(key, value, None, str, [], provider, None)

    in_secrets, in_config, in_env, plain = fresh(), fresh(), fresh(), fresh()
    _remember_trace(trace("session_token", in_secrets, "secrets.toml"))
    _remember_trace(trace("session_token", in_config, "config.toml"))
    _remember_trace(trace("session_token", in_env, "Environment Variables"))
    _remember_trace(trace("host", plain, "secrets.toml"))
    assert masked(in_secrets)
    assert not masked(in_config) and not masked(in_env) and not masked(plain)


def test_the_watched_log_is_installed_once_and_keeps_logging(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import dlt
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.utils import TraceLogContext

    from dlt_ops.config import secret_values

    saved = Container()[TraceLogContext]
    monkeypatch.setattr(secret_values, "_harvesting_class", None)  # built afresh here
    early, late = fresh(), fresh()
    monkeypatch.setenv("SOURCES__LOG_EARLY__API_KEY", early)
    monkeypatch.setenv("SOURCES__LOG_LATE__API_KEY", late)

    @dlt.source(name="log_early")
    def log_early(api_key: str = dlt.secrets.value):  # noqa: ANN202
        return dlt.resource([1], name="r")

    @dlt.source(name="log_late")
    def log_late(api_key: str = dlt.secrets.value):  # noqa: ANN202
        return dlt.resource([1], name="r")

    try:
        Container()[TraceLogContext] = TraceLogContext()
        log_early()
        watch_dlt_secrets()
        watched = Container()[TraceLogContext]
        watch_dlt_secrets()
        assert Container()[TraceLogContext] is watched  # not replaced on every call
        log_late()
        assert masked(late)  # remembered by the watched log as dlt resolved it
        # dlt's own record of what it resolved is kept, before and after the watch
        resolved = [t.value for t in watched.resolved_traces]
        assert early in resolved and late in resolved
        assert {early, late} <= {t.value for t in watched.all_traces}
    finally:
        Container()[TraceLogContext] = saved


def test_a_plugin_secrets_provider_is_read_wherever_it_is_listed() -> None:
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.providers import ConfigProvider
    from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext

    from dlt_ops.config.secret_values import _read_secret_providers

    class OpaqueProvider(ConfigProvider):
        """A secrets provider of a plugin that cannot list what it holds."""

        def __init__(self, toml: str | None = None, secrets: bool = True) -> None:
            self._toml, self._secrets = toml, secrets

        def get_value(self, key, hint, pipeline_name, *sections):  # noqa: ANN001, ANN201
            return None, key

        supports_secrets = property(lambda self: self._secrets)
        supports_sections = property(lambda self: True)
        name = property(lambda self: "vault")

    class VaultProvider(OpaqueProvider):
        """One that can, as TOML: not one of dlt's document providers."""

        def to_toml(self) -> str:
            if self._toml is None:
                raise RuntimeError("vault unreachable")
            return self._toml

    in_vault, in_config_like = fresh(), fresh()
    providers = Container()[PluggableRunContext].providers.providers
    added = [
        VaultProvider(f'[x]\ntoken = "{in_config_like}"\n', secrets=False),  # first: no secrets
        VaultProvider(None),  # unreachable: adds nothing, breaks nothing
        OpaqueProvider(),
        VaultProvider(f'[x]\ntoken = "{in_vault}"\n'),
    ]
    providers.extend(added)
    try:
        _read_secret_providers()
    finally:
        for provider in added:
            providers.remove(provider)
    assert masked(in_vault) and not masked(in_config_like)
