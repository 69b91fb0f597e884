"""The secret-backend conformance kit.

Subclass :class:`SecretBackendSuite` in your plugin's tests::

    class TestVaultBackend(SecretBackendSuite):
        __test__ = True

        @pytest.fixture
        def backend(self):
            return VaultBackend()  # what your plugin registers

        @pytest.fixture
        def served_project(self, tmp_path, vault):
            # a project with a source the backend claims and can serve: ``kit_src``
            return write_project(tmp_path / "p", {"p/source/kit_src.py": KIT_SOURCE},
                                 '[sources.kit_src.dlt_ops]\\nvault_path = "kv/feed"\\n')

        @pytest.fixture
        def provided(self, vault):
            return {"sources.kit_src.api_key": vault.value}  # what dlt resolves after prepare

``served_project`` must hold a source named :data:`SOURCE` that the backend serves (claims,
or, for a default backend, serves unclaimed). ``provided`` maps dlt config paths to the
values the backend makes visible to dlt (empty: the resolution check is skipped); the kit
checks dlt resolves them after ``prepare`` and that none reaches a log line. Give
``unservable_project`` (a project whose :data:`SOURCE` the backend cannot serve) to check that
``check`` reports a problem instead of the run failing later.
"""

from __future__ import annotations

import abc
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from dlt_ops.secrets import SECRET_BACKEND, SecretBackend
from dlt_ops.testing._inline import inline_registry
from dlt_ops.testing.validation_rules import write_project

#: The source name the kit's projects use.
SOURCE = "kit_src"
#: A source module for :data:`SOURCE` (reads nothing; the kit never runs it).
KIT_SOURCE = """
import dlt


@dlt.resource(name="rows")
def rows():
    yield [{"id": 1}]


@dlt.source(name="kit_src")
def kit_src_source():
    return rows
"""


class SecretBackendSuite(abc.ABC):
    """The secret-backend contract as tests. Subclass, set ``__test__ = True``, give the
    backend and a project it serves."""

    __test__ = False

    @abc.abstractmethod
    @pytest.fixture
    def backend(self) -> SecretBackend:
        """What the plugin registers."""

    @pytest.fixture
    def served_project(self, tmp_path: Path) -> Path:
        """A project whose source :data:`SOURCE` the backend serves (override to add the
        config that makes the backend claim it)."""
        return write_project(tmp_path / "served", {"p/source/kit_src.py": KIT_SOURCE},
                             f"[sources.{SOURCE}.dlt_ops]\n")  # fmt: skip

    @pytest.fixture
    def provided(self) -> Mapping[str, str]:
        """dlt config path -> value the backend makes visible for :data:`SOURCE`."""
        return {}

    @pytest.fixture
    def unservable_project(self, tmp_path: Path) -> Path | None:
        """A project whose :data:`SOURCE` the backend cannot serve (``None``: not checked)."""
        return None

    @pytest.fixture
    def _restored_environ(self) -> Iterator[None]:
        # prepare may put a secret in an env var (dlt's first provider): never past the test
        before = dict(os.environ)
        yield
        os.environ.clear()
        os.environ.update(before)

    def _registry(self, backend: SecretBackend) -> Any:
        return inline_registry("secret_backend", backend, backend.name)

    # -- shape --------------------------------------------------------------------------------

    def test_satisfies_the_protocol(self, backend: SecretBackend) -> None:
        assert isinstance(backend, SecretBackend)
        assert isinstance(backend.name, str) and backend.name.isidentifier(), backend.name
        prepare_destination = getattr(backend, "prepare_destination", None)
        assert prepare_destination is None or callable(prepare_destination)

    def test_registers_and_is_found_by_name(self, backend: SecretBackend) -> None:
        assert self._registry(backend).get(SECRET_BACKEND, backend.name) is backend

    def test_a_source_that_asks_for_nothing_is_not_claimed(self, backend: SecretBackend) -> None:
        # a backend claims the sources whose config asks for it; claiming every source would
        # collide with every other installed backend
        from dlt_ops.config import SourceConfig

        assert backend.claims(SourceConfig("plain")) is False

    # -- serving ------------------------------------------------------------------------------

    def test_the_served_source_resolves_to_this_backend(
        self, backend: SecretBackend, served_project: Path
    ) -> None:
        from dlt_ops.config import load_project_config
        from dlt_ops.secrets import DEFAULT_SECRET_BACKEND, resolve_secret_backend

        config = load_project_config(served_project)
        claims = backend.claims(config.source(SOURCE))
        assert claims or backend.name == DEFAULT_SECRET_BACKEND, (
            f"'{backend.name}' does not claim '{SOURCE}' in served_project"
        )
        name, found = resolve_secret_backend(config, self._registry(backend), SOURCE)
        assert (name, found) == (backend.name, backend)

    def test_check_passes_the_served_project(
        self, backend: SecretBackend, served_project: Path
    ) -> None:
        from dlt_ops.config import load_project_config

        assert backend.check(load_project_config(served_project), SOURCE) == []

    def test_check_reports_what_stops_it(
        self, backend: SecretBackend, unservable_project: Path | None
    ) -> None:
        if unservable_project is None:
            pytest.skip("no unservable_project given")
        from dlt_ops.config import load_project_config

        problems = backend.check(load_project_config(unservable_project), SOURCE)
        assert problems and all(isinstance(p, str) and p for p in problems), problems

    @pytest.mark.usefixtures("_restored_environ")
    def test_prepare_makes_the_secrets_visible_to_dlt(
        self, backend: SecretBackend, served_project: Path, provided: Mapping[str, str]
    ) -> None:
        if not provided:
            pytest.skip("no provided values given")
        import dlt

        from dlt_ops.config import load_project_config
        from dlt_ops.runner.pipeline import project_environment

        config = load_project_config(served_project)
        with project_environment(served_project):
            backend.prepare(config, SOURCE)
            for key, value in provided.items():
                assert dlt.secrets.get(key) == value, key

    @pytest.mark.usefixtures("_restored_environ")
    def test_no_secret_reaches_a_log_line(
        self, backend: SecretBackend, served_project: Path, provided: Mapping[str, str]
    ) -> None:
        from structlog.testing import capture_logs

        from dlt_ops.config import load_project_config
        from dlt_ops.runner.pipeline import project_environment

        config = load_project_config(served_project)
        with capture_logs() as logs, project_environment(served_project):
            backend.check(config, SOURCE)
            backend.prepare(config, SOURCE)
        text = json.dumps(logs, default=str)
        for key, value in provided.items():
            assert value not in text, f"the value of {key} was logged"

    @pytest.mark.usefixtures("_restored_environ")
    def test_prepare_twice_is_harmless(self, backend: SecretBackend, served_project: Path) -> None:
        # a backfill prepares the source once per chunk in one process
        from dlt_ops.config import load_project_config
        from dlt_ops.runner.pipeline import project_environment

        config = load_project_config(served_project)
        with project_environment(served_project):
            backend.prepare(config, SOURCE)
            backend.prepare(config, SOURCE)
