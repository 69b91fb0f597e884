"""Declares the ``owner`` config key (entry point group ``dlt_ops.config_key``)."""

from __future__ import annotations

from dlt_ops import hookimpl


@hookimpl
def dlt_ops_register_config_keys(register):  # noqa: ANN001, ANN201
    from dltops_owner.keys import KEY

    register(KEY, name="owner")
