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
