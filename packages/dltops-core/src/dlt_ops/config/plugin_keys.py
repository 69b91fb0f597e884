"""Config keys a plugin declares (plugin kind ``config_key``), so validate and runs know them.

dlt-ops refuses a key it does not know under ``[dlt_ops]`` or ``[sources.<X>.dlt_ops]``: a
misspelled ``dataset`` must not be ignored. A plugin that reads its own key there (a validation
rule reading ``owner``, say) declares it: one ``dlt_ops.config_key`` entry point per key, named
after the key, whose module registers a :class:`ConfigKey`. The entry-point name is enough to
let the key through (no plugin is imported for a run that does not use it); when the project
sets the key, the declaring plugin is loaded and the value checked against ``check``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dlt_ops.errors import ConfigValueError

if TYPE_CHECKING:
    from dlt_ops.config.loader import ConfigWarning, ProjectConfig
    from dlt_ops.plugins import PluginRegistry

KIND = "config_key"
SCOPES = ("source", "project")


def _anything(value: Any) -> bool:
    return True


@dataclass(frozen=True)
class ConfigKey:
    """One key a plugin reads: ``[sources.<X>.dlt_ops] <name>`` (``scope="source"``) or
    ``[dlt_ops] <name>`` (``scope="project"``). ``expected`` says what a value must be, in
    words (it is quoted by the error); ``check`` tells (default: any value); ``doc`` is shown
    by ``plugins list``."""

    name: str
    scope: str = "source"
    expected: str = "any value"
    check: Callable[[Any], bool] = _anything
    doc: str = ""

    def __post_init__(self) -> None:
        if self.scope not in SCOPES:
            raise ValueError(f"ConfigKey {self.name!r}: scope must be one of {SCOPES}")


def _where(warning_key: str) -> tuple[str, str | None, str]:
    """``(scope, source, key)`` of an unknown-key warning's ``dlt_ops.<key>`` or
    ``sources.<source>.dlt_ops.<key>``."""
    parts = warning_key.split(".")
    if parts[0] == "sources" and len(parts) == 4 and parts[2] == "dlt_ops":
        return "source", parts[1], parts[3]
    return "project", None, parts[-1]


def _value(config: ProjectConfig, scope: str, source: str | None, key: str) -> Any:
    table = config.raw.get("dlt_ops", {})
    if scope == "source":
        table = config.raw.get("sources", {}).get(source, {}).get("dlt_ops", {})
    return table.get(key)


def undeclared(
    config: ProjectConfig, registry: PluginRegistry, warnings: list[ConfigWarning]
) -> list[ConfigWarning]:
    """``warnings`` less the unknown keys some plugin declares; a declared key's value is
    checked (raises ``ConfigValueError``, exit 2, when it is not what the plugin expects)."""
    declared = set(registry.names(KIND))
    out = []
    for warning in warnings:
        scope, source, key = _where(warning.key)
        if key not in declared or warning.key.count(".") not in (1, 3):
            out.append(_with_plugin_suggestion(warning, key, declared))
            continue
        spec = registry.get(KIND, key)
        if not isinstance(spec, ConfigKey) or spec.scope != scope:
            out.append(warning)
            continue
        value = _value(config, scope, source, key)
        if not spec.check(value):
            table = f"sources.{source}.dlt_ops" if scope == "source" else "dlt_ops"
            raise ConfigValueError(config.path, f"[{table}] {key}", spec.expected, value)
    return out


def _with_plugin_suggestion(warning: ConfigWarning, key: str, declared: set[str]) -> Any:
    """``warning``, suggesting a plugin-declared key when one is close and no built-in was."""
    import dataclasses
    import difflib

    close = difflib.get_close_matches(key, sorted(declared), n=1, cutoff=0.6)
    if not close or "did you mean" in warning.message:
        return warning
    head = warning.message.split("; known keys:")[0]
    suggestion = f"{head}; did you mean '{close[0]}' (a plugin's key)?"
    return dataclasses.replace(warning, message=suggestion)


def plugin_value(config: ProjectConfig, name: str, source: str | None = None) -> Any:
    """The value of a plugin-declared key (``None`` when unset): ``[sources.<source>.dlt_ops]
    <name>`` with ``source``, else ``[dlt_ops] <name>``."""
    return _value(config, "source" if source is not None else "project", source, name)
