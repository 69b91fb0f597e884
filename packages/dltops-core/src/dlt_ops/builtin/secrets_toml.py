"""The built-in ``secrets_toml`` secret backend: dlt's own providers and ``.dlt/secrets.toml``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dlt_ops import hookimpl
from dlt_ops.plugins import Register

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig, SourceConfig
    from dlt_ops.secrets import SecretBackend


class SecretsTomlBackend:
    """Secrets come from env vars and ``<root>/.dlt/secrets.toml``, read by dlt itself."""

    name = "secrets_toml"

    def claims(self, source: SourceConfig) -> bool:
        """The default backend claims nothing explicitly; it serves every unclaimed source."""
        return False

    def check(self, config: ProjectConfig, source: str) -> list[str]:
        """``.dlt/secrets.toml`` must parse when present (dlt would fail later, obscurely)."""
        from dlt_ops.config.toml import read_toml
        from dlt_ops.errors import ConfigError

        try:
            read_toml(config.root / ".dlt" / "secrets.toml")
        except ConfigError as exc:
            return [str(exc)]
        return []

    def prepare(self, config: ProjectConfig, source: str) -> None:
        """Nothing to do: dlt reads the file once pointed at the project root."""


@hookimpl
def dlt_ops_register_secret_backends(register: Register[SecretBackend]) -> None:
    """Register ``secrets_toml``."""
    register(SecretsTomlBackend(), name="secrets_toml")
