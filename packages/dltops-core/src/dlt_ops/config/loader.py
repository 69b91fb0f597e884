"""Loading ``.dlt/config.toml`` into typed ``ProjectConfig`` / ``SourceConfig`` objects."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from dlt_ops.config.backfill_window import resolve_backfill_keys
from dlt_ops.config.freshness import FreshnessSLA, parse_freshness
from dlt_ops.config.lineage import LineageConfig, parse_lineage
from dlt_ops.config.root import CONFIG_RELPATH
from dlt_ops.config.schema import PROJECT_KEYS, SOURCE_KEYS, KeySpec
from dlt_ops.config.secret_values import harvest_project_secrets
from dlt_ops.config.toml import read_toml_cached
from dlt_ops.errors import (
    ConfigError,
    ConfigValueError,
    UnresolvedDatasetError,
    UnresolvedDestinationError,
)


@dataclass(frozen=True)
class ConfigWarning:
    """A non-fatal finding about the config (an unknown key, with a suggestion)."""

    path: Path
    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True)
class SourceConfig:
    """``[sources.<name>.dlt_ops]`` with defaults applied. ``name`` is the source; built by
    hand (as dlt-ops 0.1's ``SourceConfig(schedule=...)``, which had no name) it may be left
    out."""

    name: str = ""
    schedule: str | None = None
    #: the IANA zone the schedule is evaluated in (an inline ``cron:... <zone>`` wins)
    timezone: str | None = None
    #: ``freshness``: the SLA on the age of the last successful run (``config/freshness.py``)
    freshness: FreshnessSLA | None = None
    destination: str | None = None
    dataset: str | None = None
    airflow_var: str | None = None
    #: an Airflow Connection whose URI becomes the destination's credentials
    airflow_conn: str | None = None
    schema_contract_evolve_reason: str | None = None
    injected_columns: tuple[str, ...] = ()
    assertions: Mapping[str, Any] = field(default_factory=dict)
    rule_exemptions: Mapping[str, Any] = field(default_factory=dict)
    cost: Mapping[str, Any] = field(default_factory=dict)
    reconcile: Mapping[str, Any] = field(default_factory=dict)
    #: the fixed window ``dlt_ops.dagster`` partitions into backfill chunks (UTC)
    backfill_start: datetime | None = None
    backfill_end: datetime | None = None
    backfill_chunk: str = "1d"
    #: a file dlt's filesystem readers cannot parse: "fail" the run, "skip" or "quarantine" it
    on_bad_file: str = "fail"
    has_section: bool = False

    @property
    def is_schema_contract_evolve(self) -> bool:
        """Whether a non-blank ``schema_contract_evolve_reason`` lets the schema evolve."""
        reason = self.schema_contract_evolve_reason
        return isinstance(reason, str) and bool(reason.strip())

    @property
    def schedule_valid(self) -> bool:
        """Whether ``schedule`` is one of the known tags or a ``cron:<expression>``."""
        from dlt_ops.cron import is_valid_schedule

        return is_valid_schedule(self.schedule, self.timezone)


@dataclass(frozen=True)
class ProjectConfig:
    """The project's ``[dlt_ops]`` table plus every ``[sources.<X>.dlt_ops]`` table."""

    root: Path
    path: Path
    default_destination: str | None = None
    default_dataset: str | None = None
    require_destination_adapter: bool = False
    load_timestamp_column: str | None = None
    injected_columns: tuple[str, ...] = ()
    staleness_days: int = 7
    alert_sinks: tuple[str, ...] | None = None
    alert_sink: Mapping[str, Any] = field(default_factory=dict)
    ledger_sinks: tuple[str, ...] = ("destination",)
    ledger_sink: Mapping[str, Any] = field(default_factory=dict)
    #: ``[dlt_ops.secret_backend.<name>]`` / ``[dlt_ops.lifecycle.<name>]``: per-plugin options
    #: (``call_timeout_s``, the bound on each call a run makes into it)
    secret_backend: Mapping[str, Any] = field(default_factory=dict)
    lifecycle: Mapping[str, Any] = field(default_factory=dict)
    derived_adapters: tuple[str, ...] = ()
    connect_timeout: float = 10.0
    heartbeat_seconds: float = 30.0
    rules: Mapping[str, bool] = field(default_factory=dict)
    plugins: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: ``[dlt_ops.plugins] disable``: plugins never loaded (see :mod:`dlt_ops.plugins.disable`)
    disabled_plugins: tuple[str, ...] = ()
    reconcile: Mapping[str, Any] = field(default_factory=dict)
    #: ``[dlt_ops.lineage]``, checked; ``None``: no OpenLineage events
    lineage: LineageConfig | None = None
    sources: Mapping[str, SourceConfig] = field(default_factory=dict)
    warnings: tuple[ConfigWarning, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)

    def source(self, name: str) -> SourceConfig:
        """The config of ``name`` (an empty one when the project has no section for it)."""
        return self.sources.get(name) or SourceConfig(name=name)

    def destination_for(self, name: str) -> str:
        """Per-source destination, else the project default, else a config error."""
        dest = self.source(name).destination or self.default_destination
        if not dest:
            raise UnresolvedDestinationError(
                "No destination configured: set [dlt_ops].default_destination or "
                f"[sources.{name}.dlt_ops].destination in .dlt/config.toml"
            )
        return dest

    def dataset_for(self, name: str, override: str | None = None) -> str:
        """``--dataset``, else per-source, else project default, else a config error."""
        dataset = override or self.source(name).dataset or self.default_dataset
        if not dataset:
            raise UnresolvedDatasetError(
                "No dataset configured: set [dlt_ops].default_dataset or "
                f"[sources.{name}.dlt_ops].dataset in .dlt/config.toml"
            )
        return dataset


def _suggest(key: str, known: Mapping[str, KeySpec]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else f"; known keys: {', '.join(known)}"


def _typed(
    table: Mapping[str, Any], known: Mapping[str, KeySpec], path: Path, prefix: str
) -> tuple[dict[str, Any], list[ConfigWarning]]:
    values: dict[str, Any] = {}
    warnings: list[ConfigWarning] = []
    for key, value in table.items():
        spec = known.get(key)
        if spec is None:
            warnings.append(
                ConfigWarning(
                    path,
                    f"{prefix}.{key}",
                    f"unknown key '{key}' in [{prefix}]" + _suggest(key, known),
                )
            )
            continue
        if not spec.check(value):
            raise ConfigValueError(path, f"[{prefix}] {key}", spec.expected, value)
        values[key] = value
    return values, warnings


def _disabled_plugins(plugins: Mapping[str, Any], path: Path) -> tuple[str, ...]:
    """``[dlt_ops.plugins] disable``: a list of entry-point names or ``kind:name`` entries."""
    from dlt_ops.plugins.disable import entry_problem

    key = "[dlt_ops.plugins] disable"
    entries = plugins.get("disable", [])
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise ConfigValueError(path, key, 'a list of plugin names (["<name>", "<kind>:<name>"])',
                               entries)  # fmt: skip
    for entry in entries:
        if (problem := entry_problem(entry)) is not None:
            raise ConfigError(f"{path}: {key}: {problem}. Edit {key} in {path.name}.")
    return tuple(entries)


def _plugin_picks(plugins: Mapping[str, Any], path: Path) -> dict[str, dict[str, str]]:
    from dlt_ops.plugins import KINDS

    picks: dict[str, dict[str, str]] = {}
    for kind, table in plugins.items():
        if kind == "disable":  # the disable list sits beside the per-kind pick tables
            continue
        if kind not in KINDS:
            raise ConfigError(
                f"{path}: [dlt_ops.plugins.{kind}]: unknown plugin kind '{kind}'; "
                f"valid kinds: {', '.join(KINDS)}."
            )
        if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
            raise ConfigValueError(
                path, f"[dlt_ops.plugins.{kind}]", 'a table of name = "<distribution>"', table
            )
        picks[kind] = dict(table)
    return picks


def _source_config(name: str, section: Any, path: Path) -> tuple[SourceConfig, list[ConfigWarning]]:
    if not isinstance(section, dict):
        raise ConfigValueError(path, f"[sources.{name}]", "a table", section)
    ops = section.get("dlt_ops", {})
    if not isinstance(ops, dict):
        raise ConfigValueError(path, f"[sources.{name}.dlt_ops]", "a table", ops)
    values, warnings = _typed(ops, SOURCE_KEYS, path, f"sources.{name}.dlt_ops")
    # checked here, read by the Airflow secret backend off the table (as in 0.1): the model
    # holds no key that only one plugin reads
    values.pop("airflow_var_key", None)
    for key in ("injected_columns",):
        if key in values:
            values[key] = tuple(values[key])
    if "freshness" in values:
        values["freshness"] = parse_freshness(values["freshness"])
    resolve_backfill_keys(values, path, f"sources.{name}.dlt_ops")
    return SourceConfig(name=name, has_section=True, **values), warnings


def _refuse_nul(value: Any, path: Path, where: str = "") -> None:
    """A NUL byte anywhere in ``config.toml`` (a key or a string, ``"\\u0000"`` in TOML) is a
    config error (exit 2): file names, drivers and dlt's own config cut a string at it, so the
    value used would silently differ from the one written."""
    if isinstance(value, str):
        if "\0" in value:
            raise ConfigError(
                f"{path}: {where or 'a value'} contains a NUL byte (\\u0000), which names, paths "
                f"and drivers cannot hold; remove it."
            )
    elif isinstance(value, dict):
        for key, item in value.items():
            inner = f"{where}.{key}" if where else str(key)
            _refuse_nul(str(key), path, repr(inner))
            _refuse_nul(item, path, inner)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _refuse_nul(item, path, f"{where}[{index}]")


def load_project_config(root: Path) -> ProjectConfig:
    """Read and type-check ``<root>/.dlt/config.toml``; arm redaction for the project's secrets.

    Every command, service and worker that acts on a project loads its config first, before
    any plugin hook or source import: the one place where harvesting secrets covers them all.
    """
    path = root / CONFIG_RELPATH
    raw = read_toml_cached(path)  # parsed once a process: the root check read it just now
    harvest_project_secrets(root, raw)
    return config_from_raw(root, raw)


def config_from_raw(root: Path, raw: dict[str, Any]) -> ProjectConfig:
    """Type-check an already parsed ``config.toml`` (``raw``) of the project at ``root``
    (``dlt-ops migrate`` checks a 0.1 file rewritten in memory before writing it)."""
    path = root / CONFIG_RELPATH
    _refuse_nul(raw, path)
    table = raw.get("dlt_ops")
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: a [dlt_ops] table is required to mark a dlt-ops project.")
    values, warnings = _typed(table, PROJECT_KEYS, path, "dlt_ops")
    if "plugins" in values:
        values["disabled_plugins"] = _disabled_plugins(values["plugins"], path)
        values["plugins"] = _plugin_picks(values["plugins"], path)
    for key in ("injected_columns", "alert_sinks", "ledger_sinks", "derived_adapters"):
        if key in values:
            values[key] = tuple(values[key])
    for key in ("connect_timeout", "heartbeat_seconds"):
        if key in values:
            values[key] = float(values[key])
    if "lineage" in values:
        values["lineage"] = parse_lineage(values["lineage"], path, root)
    sources_raw = raw.get("sources", {})
    if not isinstance(sources_raw, dict):
        raise ConfigValueError(path, "[sources]", "a table", sources_raw)
    sources: dict[str, SourceConfig] = {}
    for name, section in sources_raw.items():
        sources[name], source_warnings = _source_config(name, section, path)
        warnings.extend(source_warnings)
    return ProjectConfig(
        root=root, path=path, sources=sources, warnings=tuple(warnings), raw=raw, **values
    )
