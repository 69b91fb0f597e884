"""``airflow_var_required``: registered only when Airflow is importable (``dltops-core[airflow]``).

Airflow is detected with ``find_spec``, never imported (``import airflow`` takes seconds).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

from dlt_ops import hookimpl
from dlt_ops.plugins import Register
from dlt_ops.validate.framework import Finding, Rule, ValidationContext


def airflow_var_required(ctx: ValidationContext) -> Iterator[Finding]:
    """Sources whose signature reads dlt.secrets set airflow_var (Airflow workers have no
    secrets.toml)."""
    for s in ctx.sources():
        if s.secret_defaults and not ctx.config.source(s.name).airflow_var:
            yield Finding(
                s.name, "airflow_var",
                f"Source '{s.name}' reads dlt.secrets but sets no airflow_var; add "
                f'[sources.{s.name}.dlt_ops] airflow_var = "<Airflow Variable name>".',
            )  # fmt: skip


AIRFLOW_RULE = Rule(
    "airflow_var_required", "Sources reading dlt.secrets set airflow_var.", airflow_var_required
)


def airflow_available() -> bool:
    """Whether Airflow is installed (without importing it)."""
    return importlib.util.find_spec("airflow") is not None


@hookimpl
def dlt_ops_register_validation_rules(register: Register) -> None:
    """Register ``airflow_var_required`` when Airflow is installed."""
    if airflow_available():
        register(AIRFLOW_RULE, name=AIRFLOW_RULE.id)
