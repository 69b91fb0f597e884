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


class CredentialsInConfigError(ConfigError):
    """Destination credentials with a password sit in ``config.toml``, which dlt never reads
    secrets from: a run would write its ledger row and then fail inside dlt."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(
            f".dlt/config.toml sets {key} with a password, but dlt reads secrets only from "
            f".dlt/secrets.toml or environment variables (it would refuse the value mid-run). "
            f"Move it to .dlt/secrets.toml under the same table, or set "
            f"{key.upper().replace('.', '__')} in the environment."
        )


class UnknownConfigKeyError(ConfigError):
    """A run's config tables hold keys dlt-ops does not know (a typo would otherwise be
    ignored silently: ``datset`` loads into the default dataset)."""

    def __init__(self, messages: Sequence[str]) -> None:
        self.messages = tuple(messages)
        joined = "; ".join(self.messages)
        ended = joined if joined.endswith((".", "?", "!")) else joined + "."
        super().__init__(
            f"{ended} Fix .dlt/config.toml (`dlt-ops pipeline validate` lists every finding)."
        )


class ProjectNotWritableError(ConfigError):
    """A run needs to write the project's local state, and the project directory is read-only."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(
            f"{path} is not writable (a read-only checkout or mount?): a run keeps dlt's working "
            f"state, its locks and an embedded database's file there. Nothing was run. Read-only "
            f"commands (status, runs, list, validate) work as they are; run from a writable copy "
            f"of the project."
        )


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


class ProjectLinkError(ConfigError):
    """A pipeline directory holds a symlink that cannot be followed (a loop, a module linked to
    nothing); a run refuses before anything is written."""


class UnresolvedDestinationError(ConfigError):
    """No destination is configured for a source."""


class UnresolvedDatasetError(ConfigError):
    """No dataset is configured for a source."""


class UsageError(DltOpsError):
    """A command was called with arguments that cannot work together."""

    exit_code = 2


class InvalidNameError(UsageError):
    """A name or path given to a command cannot be one: a control character (a NUL, a line
    break), a path where a name belongs, or too long (see ``dlt_ops.names``)."""


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


class RunPluginLoadError(PluginLoadError):
    """A plugin every run loads (a lifecycle plugin, a secret backend) failed to load, or
    implements a hook pluggy would never call: every run and backfill is refused (fail closed:
    such a plugin may be a guard that refuses runs)."""

    def __init__(self, failures: Sequence[tuple[str, str, str, str]]) -> None:
        kind, name, origin, cause = failures[0]
        super().__init__(kind, name, origin, cause)
        self.failures = tuple(failures)
        kinds = " and ".join(sorted({f[0] for f in failures}))
        listed = "; ".join(
            f"{k} plugin '{n}' from {o} failed to load: {c}" for k, n, o, c in failures
        )
        names = ", ".join(f'"{n}"' for _, n, _, _ in failures)
        self.args = (
            f"{listed}. Every run and backfill loads every {kinds} plugin, so none starts until "
            f"it loads: fix or reinstall that distribution (`dlt-ops plugins doctor` shows "
            f"details), or turn it off with [dlt_ops.plugins] disable = [{names}] in "
            f".dlt/config.toml, or DLT_OPS_DISABLE_PLUGINS={','.join(f[1] for f in failures)} "
            f"for one process.",
        )


class RunRefusedError(DltOpsError):
    """A plugin's ``dlt_ops_prepare_run`` refused the run (before anything was written)."""

    exit_code = 2

    def __init__(self, plugin: str, source: str, error: BaseException) -> None:
        self.plugin, self.source = plugin, source
        super().__init__(
            f"plugin {plugin} refused the run of '{source}' before anything was written: "
            f"{type(error).__name__}: {error}"
        )


class PluginTimeoutError(PluginError):
    """A sink plugin's call took longer than its bound (``call_timeout_s``); the caller went on
    without it. Never fatal to a run: the core logs it as it logs a sink that raised."""

    exit_code = 1

    def __init__(self, plugin: str, call: str, seconds: float, *, behind: bool = False) -> None:
        self.plugin, self.call, self.seconds, self.behind = plugin, call, seconds, behind
        if behind:
            what = (
                f"{plugin}: {call} not waited for, an earlier call is still running past its "
                f"bound of {seconds:g}s"
            )
        else:
            what = f"{plugin}: {call} timed out after {seconds:g}s and goes on in the background"
        super().__init__(
            f"{what}. Fix the plugin or raise call_timeout_s in its options table "
            f"(see docs/plugins.md)."
        )


class PluginDisabledError(PluginError):
    """A command needs a plugin that ``[dlt_ops.plugins] disable`` or
    ``DLT_OPS_DISABLE_PLUGINS`` turned off (it was never imported)."""

    def __init__(self, kind: str, name: str, origin: str, disabled_by: str) -> None:
        self.kind, self.name, self.origin, self.disabled_by = kind, name, origin, disabled_by
        super().__init__(
            f"{kind} plugin '{name}' from {origin} is disabled by {disabled_by}, so it was not "
            f"loaded and cannot serve this command. Remove '{name}' from {disabled_by} to use it."
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
            f"(registered: {', '.join(known) or 'none'}). Install a dlt-ops adapter package "
            f'for it, opt in to a derived adapter ([dlt_ops] derived_adapters = ["{name}"]), '
            f"or run at core tier.",
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


# -- project discovery, init and runtime preflight ---------------------------------------------


class UnknownSourceError(UsageError, LookupError):
    """A command named a source the project does not define."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        self.name, self.known = name, tuple(known)
        listed = ", ".join(known) if known else "none (run `dlt-ops pipeline list`)"
        super().__init__(f"unknown source '{name}'; available sources: {listed}.")


class DuplicateSourceError(ConfigError):
    """Two modules define a source with the same name."""

    def __init__(self, name: str, modules: Sequence[Path]) -> None:
        self.name, self.modules = name, tuple(modules)
        listed = ", ".join(str(m) for m in modules)
        super().__init__(
            f"source '{name}' is defined by more than one module: {listed}. Source names are "
            f"identities; rename one (@dlt.source(name=...) and its module and config section)."
        )


class ProjectExistsError(DltOpsError):
    """``init`` refuses to overwrite an existing project."""


class SourceImportError(DltOpsError):
    """A source's module could not be imported (syntax error, raised at import, ...)."""

    def __init__(self, name: str, module: Path, reason: str) -> None:
        self.name, self.module, self.reason = name, module, reason
        super().__init__(
            f"source '{name}' failed to import from {module}: {reason}. "
            f"Fix the module; `dlt-ops pipeline validate` shows every problem."
        )


class SourceImportEnvironmentError(SourceImportError):
    """A source's module failed to import in the run's process although it imports cleanly on
    its own (the import-safety check imported it), or that check itself could not run: the
    process is at fault, not the module. The scheduler retries such a run within its slot."""

    def __init__(self, name: str, module: Path, reason: str) -> None:
        super().__init__(name, module, reason)
        self.args = (
            f"source '{name}' failed to import from {module} in this run's process: {reason}. "
            f"The module itself imports cleanly (the import-safety check imported it), so the "
            f"process or machine is at fault, not the module: re-run it (the scheduler retries "
            f"it within the slot).",
        )


class ImportSafetyError(SourceImportError):
    """A source's module does network I/O, writes files, spawns processes or runs a pipeline
    at import time, so dlt-ops refuses to import it."""

    def __init__(self, name: str, module: Path, violations: Sequence[str]) -> None:
        self.violations = tuple(violations)
        reason = "violates import safety at import time: " + "; ".join(violations)
        super().__init__(name, module, reason)
        self.args = (
            f"source '{name}' {reason}. Move that work into the source or resource function, "
            f"or opt out with [dlt_ops.rules] import_safety = false.",
        )


class PreflightError(DltOpsError):
    """A run or backfill was refused before extract (reference Tier 2). Exit code 1."""


class PluginNotRegisteredError(PreflightError):
    """The run references a plugin (secret backend, alert sink, assertion type) nobody registers."""

    def __init__(self, kind: str, name: str, known: Sequence[str], needed_by: str) -> None:
        self.kind, self.name, self.known = kind, name, tuple(known)
        super().__init__(
            f"{needed_by} needs {kind} plugin '{name}', but none is registered (registered: "
            f"{', '.join(known) or 'none'}). Install a package that provides it under the "
            f"'dlt_ops.{kind}' entry-point group; inspect with `dlt-ops plugins doctor`."
        )


class PluginLoadFailedError(PreflightError):
    """A plugin the run needs is installed but failed to load."""

    def __init__(self, kind: str, name: str, cause: str) -> None:
        self.kind, self.name, self.cause = kind, name, cause
        super().__init__(
            f"{kind} plugin '{name}' failed to load: {cause}. Run `dlt-ops plugins doctor` "
            f"for details; reinstall or remove that distribution."
        )


class DestinationNotResolvableError(PreflightError):
    """dlt does not know the configured destination."""


class AdapterCapabilityError(PreflightError):
    """The registered adapter is incomplete (missing protocol members)."""


#: What a gated feature keeps at the destination, where 0.1's refusal said so (its wording).
_GATED_DETAIL = {"backfill": "backfill (chunk state in _dlt_backfills)"}


class DestinationCapabilityError(PreflightError):
    """The destination has no adapter but the run engages adapter-gated features."""

    def __init__(
        self,
        destination: str,
        engaged: Sequence[str],
        gated: Sequence[str],
        registered: Sequence[str],
    ) -> None:
        self.destination, self.engaged = destination, tuple(engaged)
        named = ", ".join(_GATED_DETAIL.get(f, f) for f in engaged)
        super().__init__(
            f"destination '{destination}' has no registered DestinationAdapter (core tier), but "
            f"this run engages adapter-gated feature(s): {named}. Features gated "
            f"on an adapter: {', '.join(gated)}. Registered adapters: "
            f"{', '.join(registered) or 'none'}. Fix: install a dlt-ops adapter package for "
            f"'{destination}' if one exists, or opt in to a derived adapter built from dlt's "
            f'SQL client with [dlt_ops] derived_adapters = ["{destination}"] (SQL '
            f"destinations only; untested), or turn the feature off for this source."
        )


class UnknownRuleIdError(PreflightError):
    """``[dlt_ops.rules]`` names a rule id no installed plugin registers."""


class SecretBackendError(PreflightError):
    """A source's secret backend is ambiguous or cannot serve it."""


class MissingIncrementalCursorError(PreflightError):
    """A windowed run selects resources without an incremental cursor."""

    def __init__(self, resources: Sequence[str]) -> None:
        self.resources = tuple(resources)
        super().__init__(
            "window bounds were supplied but resource(s) without an incremental cursor are "
            f"selected: {', '.join(resources)}. Declare a dlt.sources.incremental cursor or "
            "deselect them."
        )


class IncrementalWindowError(PreflightError):
    """A windowed run selects resources whose incremental dlt cannot bound to the window.

    Exit code 2: the source's declaration is what must change, and nothing was written."""

    exit_code = 2

    def __init__(self, problems: Sequence[tuple[str, str, str]]) -> None:
        self.resources = tuple(name for name, _, _ in problems)
        listed = "; ".join(f"resource '{name}': {why}. Fix: {fix}" for name, why, fix in problems)
        super().__init__(
            f"window bounds were supplied but dlt cannot apply them to {len(problems)} selected "
            f"resource(s), so the run would fail or load the wrong range; refused before "
            f"anything was written. {listed}."
        )


# -- runs ---------------------------------------------------------------------------------------


class UnknownResourceError(UsageError, LookupError):
    """``--resource`` names a resource the source does not have."""

    def __init__(self, source: str, unknown: Sequence[str], known: Sequence[str]) -> None:
        self.source, self.unknown, self.known = source, tuple(unknown), tuple(known)
        super().__init__(
            f"source '{source}' has no resource(s) {', '.join(unknown)}; "
            f"its resources are: {', '.join(known) or 'none'}."
        )


# -- assertions ---------------------------------------------------------------------------------


class AssertionConfigError(PreflightError):
    """``[sources.X.dlt_ops.assertions]`` is invalid; the run is refused before extract."""

    def __init__(self, source: str, issues: Sequence[str]) -> None:
        self.source, self.issues = source, tuple(issues)
        super().__init__(
            f"invalid assertion config for source '{source}': {'; '.join(issues)}. Fix "
            f"[sources.{source}.dlt_ops.assertions] (`dlt-ops pipeline validate` lists them)."
        )


class AssertionTypeCrashedError(DltOpsError):
    """An assertion type raised instead of giving a verdict: a plugin bug. The run fails and
    nothing of it loads (its load package is dropped)."""

    def __init__(self, assertion_type: str, plugin: str, phase: str, cause: BaseException) -> None:
        self.assertion_type, self.plugin, self.phase = assertion_type, plugin, phase
        super().__init__(
            f"assertion type '{assertion_type}' (plugin {plugin}) raised in {phase}: "
            f"{type(cause).__name__}: {cause}. Nothing of this run was loaded. Fix or upgrade "
            f"the plugin, or remove the assertion from [sources.<name>.dlt_ops.assertions]."
        )


class AssertionFailedError(DltOpsError):
    """A ``fail`` assertion tripped: nothing of this run loads and its load package is dropped."""

    def __init__(self, source: str, resource: str, assertion_type: str, message: str) -> None:
        self.source, self.resource = source, resource
        self.assertion_type, self.assertion_message = assertion_type, message
        super().__init__(f"assertion '{assertion_type}' failed on {source}.{resource}: {message}")


class QuarantineWriteError(DltOpsError):
    """Quarantined rows could not be written to ``_dlt_rejected``; the run aborts before load."""


# -- checkpoints ----------------------------------------------------------------------------------


class UnregisteredDestinationError(DltOpsError, LookupError):
    """A feature that needs a DestinationAdapter touched a core-tier destination at runtime
    (the backstop behind preflight's static detection, e.g. an aliased ``with_checkpoints``)."""

    def __init__(self, pipeline: str, destination: str, feature: str, registered: Sequence[str]):
        self.pipeline, self.destination, self.feature = pipeline, destination, feature
        super().__init__(
            f"pipeline '{pipeline}': destination '{destination}' has no registered "
            f"DestinationAdapter (core tier), but {feature} needs one. Registered adapters: "
            f"{', '.join(registered) or 'none'}. Install a DestinationAdapter under the "
            f"'dlt_ops.destination' entry-point group (e.g. `pip install dltops-{destination}`), "
            f"switch to a destination that has one, or remove the feature."
        )


class CheckpointStateError(DltOpsError):
    """The checkpoint table could not be set up or its resume state could not be read; the
    run is refused before extracting rather than silently run without its resume state."""


# -- backfill -----------------------------------------------------------------------------------


class BadSourceFileError(DltOpsError):
    """A filesystem reader could not parse one file (``on_bad_file = "fail"``, the default)."""

    def __init__(self, resource: str, source: str, file: str, line: int | None, error: str) -> None:
        self.resource, self.source, self.file, self.line = resource, source, file, line
        where = f", line {line}" if line is not None else ""
        super().__init__(
            f"resource '{resource}' cannot read {file}{where}: {error}. Fix or remove the file, "
            f'or set on_bad_file = "skip" (or "quarantine") in [sources.{source}.dlt_ops] to '
            f"load the other files and list this one in the receipt."
        )


class SeedCursorError(DltOpsError):
    """``backfill --seed-cursor`` cannot move a resource's cursor to the backfill's end."""

    def __init__(self, resource: str, why: str) -> None:
        self.resource = resource
        super().__init__(
            f"cannot seed the cursor of resource '{resource}': {why}. Nothing was extracted "
            f"and no cursor moved; the backfill itself is complete."
        )


class BackfillError(DltOpsError):
    """A backfill ran and did not cover its window (exit code 1)."""


class BackfillStateError(BackfillError):
    """A load-bearing write or read of ``_dlt_backfills`` failed or found inconsistent state."""


class LeaseLostError(BackfillStateError):
    """This worker's lease on a chunk expired and another worker reclaimed it."""


class BackfillChunkError(BackfillError):
    """A chunk run failed (after its attempts); the invocation stopped there."""


class BackfillNotCoveredError(BackfillError):
    """The invocation ended with chunks not completed (failed, pending or held elsewhere)."""


class InterruptedRunError(DltOpsError):
    """Ctrl-C or SIGTERM stopped the work; what was in flight recorded itself as failed."""

    exit_code = 130


class LedgerUnreadableError(DltOpsError):
    """A ledger (or backfill state) could not be read: an outage, never an empty history."""

    exit_code = 1


class AirflowPoolError(DltOpsError):
    """An Airflow pool the DAG's tasks use was not created (``dlt-ops airflow pools --apply``)."""

    exit_code = 1
