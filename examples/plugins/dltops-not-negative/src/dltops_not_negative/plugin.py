"""Registers the not_negative assertion type.

Entry point group ``dlt_ops.assertion_rule``.
"""

from __future__ import annotations

from dlt_ops import hookimpl


@hookimpl
def dlt_ops_register_assertion_rules(register):  # noqa: ANN001, ANN201
    from dltops_not_negative.assertion import NotNegative

    register(NotNegative, name="not_negative")
