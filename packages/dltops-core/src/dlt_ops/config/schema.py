"""The typed shape of ``[dlt_ops]`` and ``[sources.<X>.dlt_ops]``, one table of keys each.

Each key has a type check and a default. A wrong type is a ``ConfigValueError`` naming the
file, the key and the expected type; an unknown key is a warning with a did-you-mean.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from dlt_ops.config.backfill_window import CHUNK_EXPECTED, EDGE_EXPECTED, is_chunk, is_edge
from dlt_ops.config.freshness import EXPECTED as FRESHNESS_EXPECTED
from dlt_ops.config.freshness import is_freshness
from dlt_ops.cron import is_valid_zone


class Schedule(StrEnum):
    """Schedules a source may declare."""

    hourly = "@hourly"
    two_hourly = "@2hourly"
    daily = "@daily"
    weekly = "@weekly"
    monthly = "@monthly"
    manual = "@manual"
    # dlt-ops 0.1's member names: aliases of the same members
    HOURLY = "@hourly"
    TWO_HOURLY = "@2hourly"
    DAILY = "@daily"
    WEEKLY = "@weekly"
    MONTHLY = "@monthly"
    MANUAL = "@manual"

    @classmethod
    def from_string(cls, value: str) -> Schedule:
        """``Schedule("@daily")`` with an error that lists the valid tags (0.1's spelling)."""
        try:
            return cls(value.strip())
        except ValueError:
            valid = ", ".join(m.value for m in cls)
            raise ValueError(f"Invalid schedule {value!r}; valid: {valid}") from None


@dataclass(frozen=True)
class KeySpec:
    """One config key: its expected type (in words), a checker and the default."""

    expected: str
    check: Callable[[Any], bool]
    default: Any = None
    doc: str = ""


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def _is_pos_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _is_pos_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and v > 0


def _is_str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _is_bad_file_policy(v: Any) -> bool:
    return v in ("fail", "skip", "quarantine")


def _is_table(v: Any) -> bool:
    return isinstance(v, dict)


def _is_bool_table(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(x, bool) for x in v.values())


PROJECT_KEYS: Mapping[str, KeySpec] = {
    "default_destination": KeySpec("a string (a dlt destination name)", _is_str),
    "default_dataset": KeySpec("a string", _is_str),
    "require_destination_adapter": KeySpec("true or false", _is_bool, False),
    "load_timestamp_column": KeySpec("a string", _is_str),
    "injected_columns": KeySpec("a list of strings", _is_str_list, []),
    "staleness_days": KeySpec("a positive integer", _is_pos_int, 7),
    "alert_sinks": KeySpec("a list of strings", _is_str_list),
    "alert_sink": KeySpec("a table of sink options", _is_table, {}),
    "ledger_sinks": KeySpec("a list of strings", _is_str_list, ["destination"]),
    "ledger_sink": KeySpec("a table of sink options", _is_table, {}),
    "secret_backend": KeySpec("a table of secret backend options", _is_table, {}),
    "lifecycle": KeySpec("a table of lifecycle plugin options", _is_table, {}),
    "derived_adapters": KeySpec("a list of strings", _is_str_list, []),
    "connect_timeout": KeySpec("a positive number of seconds", _is_pos_number, 10.0),
    "heartbeat_seconds": KeySpec("a positive number of seconds", _is_pos_number, 30.0),
    "rules": KeySpec(
        "a table of rule_id = true|false (each must be true or false)", _is_bool_table, {}
    ),
    "plugins": KeySpec(
        "a table: disable = [names] and [dlt_ops.plugins.<kind>] tables", _is_table, {}
    ),
    "reconcile": KeySpec("a table of removal-drift thresholds", _is_table, {}),
    # OpenLineage events (checked key by key in config/lineage.py)
    "lineage": KeySpec('a table: transport = "http"|"file"|"console" and its options', _is_table),
}

SOURCE_KEYS: Mapping[str, KeySpec] = {
    "schedule": KeySpec('a string such as "@daily"', _is_str),
    "timezone": KeySpec('an IANA time zone such as "Europe/Berlin"', is_valid_zone),
    "freshness": KeySpec(FRESHNESS_EXPECTED, is_freshness),
    "destination": KeySpec("a string (a dlt destination name)", _is_str),
    "dataset": KeySpec("a string", _is_str),
    "airflow_var": KeySpec("a string", _is_str),
    "airflow_var_key": KeySpec("a string", _is_str, "api_secret_key"),
    "airflow_conn": KeySpec("a string (an Airflow Connection id)", _is_str),
    "schema_contract_evolve_reason": KeySpec("a string", _is_str),
    "injected_columns": KeySpec("a list of strings", _is_str_list, []),
    "assertions": KeySpec("a table of [..assertions.<resource>] tables", _is_table, {}),
    "rule_exemptions": KeySpec('a table of rule_id = "<reason>"', _is_table, {}),
    "cost": KeySpec("a table with per_record or per_page", _is_table, {}),
    "reconcile": KeySpec("a table of removal-drift thresholds", _is_table, {}),
    # the fixed window dlt_ops.dagster partitions into backfill chunks (config/backfill_window.py)
    "backfill_start": KeySpec(EDGE_EXPECTED, is_edge),
    "backfill_end": KeySpec(EDGE_EXPECTED, is_edge),
    "backfill_chunk": KeySpec(CHUNK_EXPECTED, is_chunk, "1d"),
    # what a file dlt's filesystem readers cannot parse does to the run (runner/bad_files.py)
    "on_bad_file": KeySpec('"fail", "skip" or "quarantine"', _is_bad_file_policy, "fail"),
}
