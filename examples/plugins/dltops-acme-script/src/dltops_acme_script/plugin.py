"""Registers the acme_script trigger emitter.

Entry point group ``dlt_ops.trigger_emitter``.
"""

from __future__ import annotations

from dlt_ops import hookimpl


@hookimpl
def dlt_ops_register_trigger_emitters(register):  # noqa: ANN001, ANN201
    from dltops_acme_script.emitter import AcmeScriptTarget

    register(AcmeScriptTarget(), name="acme_script")
