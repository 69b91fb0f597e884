"""The acme_vault secret backend against dlt-ops' secret-backend kit."""

from __future__ import annotations

import json

import pytest

from dlt_ops.testing import SecretBackendSuite, write_project
from dlt_ops.testing.secret_backends import KIT_SOURCE, SOURCE
from dltops_acme_vault.backend import ENV, AcmeVaultBackend

KEY = "kit-acme_vault-key-0f3a"


class TestAcmeVaultBackend(SecretBackendSuite):
    __test__ = True

    @pytest.fixture
    def backend(self):
        return AcmeVaultBackend()

    @pytest.fixture
    def served_project(self, tmp_path, monkeypatch):
        monkeypatch.setenv(ENV, SOURCE)
        secrets = json.dumps({SOURCE: {"api_key": KEY}})
        files = {"p/source/kit_src.py": KIT_SOURCE, ".dlt/acme_vault.json": secrets}
        return write_project(tmp_path / "served", files)

    @pytest.fixture
    def provided(self):
        return {f"sources.{SOURCE}.api_key": KEY}

    @pytest.fixture
    def unservable_project(self, tmp_path):
        return write_project(tmp_path / "unservable", {"p/source/kit_src.py": KIT_SOURCE})
