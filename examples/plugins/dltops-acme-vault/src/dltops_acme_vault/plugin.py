"""Registers the acme_vault secret backend.

Entry point group ``dlt_ops.secret_backend``.
"""

from __future__ import annotations

from dlt_ops import hookimpl


@hookimpl
def dlt_ops_register_secret_backends(register):  # noqa: ANN001, ANN201
    from dltops_acme_vault.backend import AcmeVaultBackend

    register(AcmeVaultBackend(), name="acme_vault")
