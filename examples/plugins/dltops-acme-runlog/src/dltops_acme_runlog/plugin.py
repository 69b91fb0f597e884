"""The acme_runlog lifecycle hooks.

Entry point group ``dlt_ops.lifecycle``.
"""

from __future__ import annotations

from dlt_ops import hookimpl


@hookimpl
def dlt_ops_run_finished(run, outcome):  # noqa: ANN001, ANN201
    from dltops_acme_runlog.observer import record_finished

    record_finished(run, outcome)
