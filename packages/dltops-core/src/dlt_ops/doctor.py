"""``plugins list`` / ``plugins doctor`` as data: load every plugin and report what happened."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from dlt_ops.adapters.derived_label import is_derived
from dlt_ops.plugins import KINDS, PluginRegistry, PluginSource


@dataclass
class PluginRow:
    """One plugin as ``plugins list`` shows it."""

    kind: str
    name: str
    distribution: str | None
    version: str | None
    module: str
    hooks: list[str]
    registers: list[str]
    #: "ok" | "failed" (import or registration hook raised) | "conflict" | "incomplete" (loaded,
    #: but a name was refused, no hook is implemented, a hook-like function is unmarked, or an
    #: adapter lacks protocol members: ``error`` says which) | "disabled" (never imported)
    status: str
    error: str | None = None
    #: What turned a ``disabled`` plugin off: ``[dlt_ops.plugins] disable`` and/or
    #: ``DLT_OPS_DISABLE_PLUGINS``.
    disabled_by: str | None = None

    def to_json(self) -> dict[str, object]:
        """JSON-ready dict."""
        return asdict(self)


@dataclass
class DoctorReport:
    """Everything doctor found."""

    rows: list[PluginRow] = field(default_factory=list)
    conflicts: list[tuple[str, str, list[PluginSource]]] = field(default_factory=list)
    unknown_kinds: list[PluginSource] = field(default_factory=list)
    #: Disable entries that match no installed plugin (a note: the plugin stays on).
    unmatched_disables: list[str] = field(default_factory=list)

    @property
    def failures(self) -> list[PluginRow]:
        """Rows that failed to load or loaded with problems (``incomplete``)."""
        return [r for r in self.rows if r.status in ("failed", "incomplete")]

    @property
    def ok(self) -> bool:
        """No failures, no conflicts, no unknown kinds."""
        return not (self.failures or self.conflicts or self.unknown_kinds)


def _adapter_problem(registry: PluginRegistry, source: PluginSource) -> str | None:
    from dlt_ops.destinations import adapter_problems

    for reg in registry.registrations("destination"):
        if reg.source.value == source.value and reg.source.dist == source.dist:
            try:
                made = reg.obj  # a class or factory is called; an instance (has connect) kept
                if isinstance(made, type) or (callable(made) and not hasattr(made, "connect")):
                    made = made()
                obj = made
            except Exception as exc:  # a factory that raises is a broken plugin
                return f"{type(exc).__name__}: {exc}"
            missing = adapter_problems(obj)
            if missing:
                return f"adapter '{reg.name}' lacks: {', '.join(missing)}"
    return None


def _command_problems(
    registry: PluginRegistry, source: PluginSource, reserved: frozenset[str]
) -> list[str]:
    """A command plugin's names that can never run: a built-in command's name (the built-in
    wins), or a name no ``dlt_ops.command`` entry point carries (``--help`` lists and
    dispatches commands by entry-point name only)."""
    listed = {s.name for s in registry.sources("command")}
    out = []
    for name in registry.registered_by(source) if source.name not in reserved else ():
        if name not in listed:
            out.append(f"registers command '{name}', which no dlt_ops.command entry point names")
    if source.name in reserved:
        out.append(f"'{source.name}' is a built-in command: the plugin's command is not added")
    return out


def _problems(
    registry: PluginRegistry, source: PluginSource, reserved: frozenset[str] = frozenset()
) -> list[str]:
    """What is wrong with a plugin that loaded: refused names, hooks pluggy ignored, an
    adapter that lacks protocol members, a command that cannot run."""
    problems = [
        f"'{r.name}' not registered: {r.error}"
        for r in registry.rejected
        if r.kind == source.kind and (r.source.dist, r.source.value) == (source.dist, source.value)
    ]
    problems += registry.hook_problems(source)
    if source.kind == "destination" and (problem := _adapter_problem(registry, source)):
        problems.append(problem)
    if source.kind == "command":
        problems += _command_problems(registry, source, reserved)
    return problems


def inspect_plugins(
    registry: PluginRegistry, *, builtin_commands: frozenset[str] = frozenset()
) -> DoctorReport:
    """Load every plugin of every kind and collect the outcome per plugin
    (``builtin_commands``: the CLI's own command names, which a plugin cannot take)."""
    registry.load_all()
    failed = {f.source: f.error for f in registry.failures}
    conflicts = registry.conflicts()
    conflicted = {(k, n) for k, n, _ in conflicts}
    report = DoctorReport(
        conflicts=conflicts,
        unknown_kinds=list(registry.unknown_kinds),
        unmatched_disables=[f"'{d}' ({d.origin})" for d in registry.unmatched_disables()],
    )
    for kind in KINDS:
        for source in registry.sources(kind):
            registers = registry.registered_by(source)
            status, error = "ok", failed.get(source)
            disabled_by = registry.disabled_by(source)
            if disabled_by:  # never imported, so nothing else about it is known
                status = "disabled"
            elif error:
                status = "failed"
            elif problems := _problems(registry, source, builtin_commands):
                status, error = "incomplete", "; ".join(problems)
            elif any((kind, n) in conflicted for n in registers):
                status = "conflict"
            elif kind == "destination" and is_derived(source.value):
                status = "derived (untested)"  # built from dlt's SQL client, not a package
            report.rows.append(
                PluginRow(
                    kind=kind,
                    name=source.name,
                    distribution=source.dist,
                    version=source.version,
                    module=source.value,
                    hooks=list(registry.hooks_of(source)),
                    registers=registers,
                    status=status,
                    error=error,
                    disabled_by=disabled_by,
                )
            )
    return report
