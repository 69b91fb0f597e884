"""The acme_vault secret backend: secrets from ``<root>/.dlt/acme_vault.json``
(``{"<source>": {"api_key": "..."}}``) for the sources listed in ``DLTOPS_ACME_VAULT_SOURCES``
(comma-separated)."""

from __future__ import annotations

import json
import os

from dlt_ops.config import ProjectConfig, SourceConfig
from dlt_ops.redact import remember_secret

ENV = "DLTOPS_ACME_VAULT_SOURCES"


def _secrets(config: ProjectConfig) -> dict:
    path = config.root / ".dlt" / "acme_vault.json"
    return json.loads(path.read_text(encoding="utf-8"))


class AcmeVaultBackend:
    """A ``SecretBackend``."""

    name = "acme_vault"

    def claims(self, source: SourceConfig) -> bool:
        return source.name in os.environ.get(ENV, "").split(",")

    def check(self, config: ProjectConfig, source: str) -> list[str]:
        try:
            found = _secrets(config)
        except (OSError, ValueError) as exc:
            return [f".dlt/acme_vault.json cannot be read: {type(exc).__name__}"]
        if not isinstance(found.get(source), dict):
            return [f".dlt/acme_vault.json has no object for '{source}'"]
        return []

    def prepare(self, config: ProjectConfig, source: str) -> None:
        for key, value in _secrets(config)[source].items():
            remember_secret(str(value))  # masked in every output from now on
            os.environ[f"SOURCES__{source.upper()}__{key.upper()}"] = str(value)
