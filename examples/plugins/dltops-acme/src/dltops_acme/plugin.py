"""Registers the acme validate rules.

Entry point group ``dlt_ops.validation_rule``.
"""

from __future__ import annotations

from dlt_ops import hookimpl


@hookimpl
def dlt_ops_register_validation_rules(register):  # noqa: ANN001, ANN201
    from dltops_acme.rules import AcmeModuleDocstring

    rule = AcmeModuleDocstring()
    register(rule, name=rule.id)
