"""Registers ``dlt-ops hello``.

Entry point group ``dlt_ops.command``.
"""

from __future__ import annotations

from dlt_ops import hookimpl


@hookimpl
def dlt_ops_register_commands(register):  # noqa: ANN001, ANN201
    from dltops_hello.command import hello

    register(hello, name="hello")
