"""Registers the litefile adapter (entry point group ``dlt_ops.destination``).

The entry point's name is the engine's name; driver imports stay in the adapter module.
"""

from __future__ import annotations

from dlt_ops import hookimpl


@hookimpl
def dlt_ops_register_destinations(register):  # noqa: ANN001, ANN201
    from dltops_litefile.adapter import LitefileAdapter

    register(LitefileAdapter, name="litefile")
