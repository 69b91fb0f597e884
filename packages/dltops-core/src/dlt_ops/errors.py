"""The dlt-ops error hierarchy: every expected failure is a ``DltOpsError``.

Each error carries an ``exit_code`` (SPEC §1.4): 1 when an operation ran and failed, 2 when the
input (usage or configuration) was wrong and nothing was done. The CLI prints ``str(exc)`` as
one line and exits with that code; ``--debug`` adds the traceback.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class DltOpsError(Exception):
    """Root of every error dlt-ops raises on purpose."""

    exit_code: int = 1


# -- configuration ---------------------------------------------------------------------------


class ConfigError(DltOpsError):
    """The project configuration is missing, malformed or has a wrong value."""

    exit_code = 2


class ProjectRootNotFoundError(ConfigError):
    """No ``.dlt/config.toml`` with a ``[dlt_ops]`` table was found."""


class ConfigParseError(ConfigError):
    """A TOML file could not be parsed."""

    def __init__(self, path: Path, detail: str) -> None:
        self.path = path
        super().__init__(f"{path}: malformed TOML: {detail}. Fix the syntax and re-run.")


class ConfigValueError(ConfigError):
    """A config key holds a value of the wrong type or outside its allowed set."""

    def __init__(self, path: Path, key: str, expected: str, got: object) -> None:
        self.path, self.key, self.expected = path, key, expected
        super().__init__(
            f"{path}: {key} must be {expected}, got {type(got).__name__} {got!r}. "
            f"Edit {key} in {path.name}."
        )


class UnresolvedDestinationError(ConfigError):
    """No destination is configured for a source."""


class UnresolvedDatasetError(ConfigError):
    """No dataset is configured for a source."""


class UsageError(DltOpsError):
    """A command was called with arguments that cannot work together."""

    exit_code = 2


# -- plugins -----------------------------------------------------------------------------------


class PluginError(DltOpsError):
    """A plugin could not be loaded, registered or found."""

    exit_code = 2


class PluginLoadError(PluginError):
    """A plugin's module raised while being imported or registered."""

    def __init__(self, kind: str, name: str, origin: str, cause: str) -> None:
        self.kind, self.name, self.origin, self.cause = kind, name, origin, cause
        super().__init__(
            f"{kind} plugin '{name}' from {origin} failed to load: {cause}. "
            f"Run `dlt-ops plugins doctor` for details; reinstall or remove that distribution."
        )


class PluginConflictError(PluginError):
    """Two distinct plugins claim one name of one kind."""

    def __init__(self, kind: str, name: str, claimants: Sequence[str]) -> None:
        self.kind, self.name, self.claimants = kind, name, tuple(claimants)
        listed = ", ".join(claimants)
        super().__init__(
            f"{kind} name '{name}' is claimed by more than one plugin: {listed}. "
            f"Pick one in .dlt/config.toml:\n"
            f'[dlt_ops.plugins.{kind}]\n{name} = "{claimants[0]}"'
        )


class UnknownPluginError(PluginError, LookupError):
    """No plugin of a kind registers the requested name."""

    def __init__(self, kind: str, name: str, known: Sequence[str]) -> None:
        self.kind, self.name, self.known = kind, name, tuple(known)
        hint = ", ".join(known) if known else "none installed"
        super().__init__(f"no {kind} plugin named '{name}' (registered: {hint}).")


class UnknownDestinationError(UnknownPluginError):
    """A destination has no registered adapter (it may still run at core tier)."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        super().__init__("destination", name, known)
        self.args = (
            f"destination '{name}' has no registered DestinationAdapter "
            f"(registered: {', '.join(known) or 'none'}). Install its package, e.g. "
            f"`pip install dltops-{name}`, or run at core tier.",
        )


# -- destinations ------------------------------------------------------------------------------


class DestinationError(DltOpsError):
    """The destination refused or failed a statement; wraps the driver's error."""


class DestinationUnreachableError(DestinationError):
    """A connection to the destination could not be opened in time."""


class IdentifierError(DltOpsError, ValueError):
    """A name meant for SQL is outside the identifier grammar."""

    exit_code = 2


class StatementError(DltOpsError, ValueError):
    """A canonical statement is malformed (wrong placeholder count, unknown slot, ...)."""


class AssertionRuleError(DltOpsError):
    """An assertion type is misconfigured or failed to evaluate."""
