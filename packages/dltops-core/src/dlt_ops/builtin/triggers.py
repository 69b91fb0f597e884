"""Built-in trigger emitters: ``cli`` (a person or script ran a command), ``backfill``, the
built-in scheduler ``y-scheduler``, ``airflow`` (the DAG factory), ``dagster`` (the Definitions
builder), and the ``schedule emit`` targets ``cron`` and ``github-actions``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dlt_ops import hookimpl
from dlt_ops.plugins import Register

if TYPE_CHECKING:
    from dlt_ops.triggers import TriggerEmitter as TriggerEmitterProtocol


@dataclass(frozen=True)
class TriggerEmitter:
    """A named origin of runs, written to the ledger's ``trigger_source``."""

    name: str
    description: str


@hookimpl
def dlt_ops_register_trigger_emitters(register: Register[TriggerEmitterProtocol]) -> None:
    """Register the built-in emitters."""
    from dlt_ops.scheduler.targets import CronTarget, GitHubActionsTarget

    register(TriggerEmitter("cli", "run started from the dlt-ops command line"), name="cli")
    register(
        TriggerEmitter("backfill", "chunk run of `dlt-ops pipeline backfill`"), name="backfill"
    )
    register(
        TriggerEmitter("y-scheduler", "run started by the built-in `dlt-ops scheduler run`"),
        name="y-scheduler",
    )
    register(TriggerEmitter("airflow", "run started by a dlt_ops.airflow DAG task"), name="airflow")
    register(
        TriggerEmitter("dagster", "run started by a dlt_ops.dagster asset or partition run"),
        name="dagster",
    )
    register(CronTarget(), name="cron")
    register(GitHubActionsTarget(), name="github-actions")
