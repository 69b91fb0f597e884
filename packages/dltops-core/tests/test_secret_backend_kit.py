"""The built-in secret backends against the secret-backend conformance kit."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dlt_ops.builtin.airflow_secrets import AirflowVariableBackend
from dlt_ops.builtin.secrets_toml import SecretsTomlBackend
from dlt_ops.secrets import SecretBackend
from dlt_ops.testing import SecretBackendSuite, write_project
from dlt_ops.testing.secret_backends import KIT_SOURCE, SOURCE

API_KEY = "kit-api-key-5e1f0c"


class TestSecretsTomlBackend(SecretBackendSuite):
    __test__ = True

    @pytest.fixture
    def backend(self) -> SecretBackend:
        return SecretsTomlBackend()

    @pytest.fixture
    def served_project(self, tmp_path: Path) -> Path:
        return write_project(tmp_path / "served", {
            "p/source/kit_src.py": KIT_SOURCE,
            ".dlt/secrets.toml": f'[sources.{SOURCE}]\napi_key = "{API_KEY}"\n',
        }, f"[sources.{SOURCE}.dlt_ops]\n")  # fmt: skip

    @pytest.fixture
    def provided(self) -> dict[str, str]:
        return {f"sources.{SOURCE}.api_key": API_KEY}

    @pytest.fixture
    def unservable_project(self, tmp_path: Path) -> Path:
        return write_project(tmp_path / "broken", {
            "p/source/kit_src.py": KIT_SOURCE, ".dlt/secrets.toml": "[sources\napi_key = 1\n",
        })  # fmt: skip


AIRFLOW = importlib.util.find_spec("airflow") is not None


class TestAirflowBackend(SecretBackendSuite):
    __test__ = True

    @pytest.fixture
    def backend(self) -> SecretBackend:
        return AirflowVariableBackend()

    @pytest.fixture
    def served_project(self, tmp_path: Path) -> Path:
        if not AIRFLOW:
            pytest.skip("serves sources only where Airflow is installed (the Airflow lane)")
        return write_project(tmp_path / "served", {"p/source/kit_src.py": KIT_SOURCE},
                             f'[sources.{SOURCE}.dlt_ops]\nairflow_var = "kit_var"\n')  # fmt: skip

    @pytest.fixture
    def unservable_project(self, tmp_path: Path) -> Path | None:
        if AIRFLOW:
            return None
        return write_project(tmp_path / "unservable", {"p/source/kit_src.py": KIT_SOURCE},
                             f'[sources.{SOURCE}.dlt_ops]\nairflow_var = "kit_var"\n')  # fmt: skip
