"""``plugins list`` / ``plugins doctor`` as data: load every plugin and report what happened."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from dlt_ops.adapters.derived_label import is_derived
from dlt_ops.adapters.dlt_credentials import dlt_knows_destination
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
    #: Picks naming no installed claimant (see :func:`stale_picks`).
    stale_picks: list[str] = field(default_factory=list)

    @property
    def failures(self) -> list[PluginRow]:
        """Rows that failed to load or loaded with problems (``incomplete``)."""
        return [r for r in self.rows if r.status in ("failed", "incomplete")]

    @property
    def ok(self) -> bool:
        """No failures, no conflicts, no unknown kinds, no stale picks."""
        return not (self.failures or self.conflicts or self.unknown_kinds or self.stale_picks)


def _builds_dlt_destination_by_name(adapter: object) -> bool:
    """The adapter leaves dlt's destination to dlt, which finds it by the engine's name."""
    from dlt_ops.adapters.protocol import DestinationAdapter

    own = getattr(type(adapter), "dlt_destination", None)
    return own is None or own is DestinationAdapter.dlt_destination


def _adapter_problems(registry: PluginRegistry, source: PluginSource) -> list[str]:
    """Every registration of a destination plugin: missing protocol members, an adapter whose
    ``name`` is not the name it is registered under, and (where dlt builds the destination
    from that name) a name dlt has no destination for."""
    from dlt_ops.adapters.protocol import build_registered
    from dlt_ops.destinations import adapter_problems

    out = []
    for reg in registry.registrations("destination"):
        if reg.source.value != source.value or reg.source.dist != source.dist:
            continue
        try:
            obj = build_registered(reg.obj)
        except Exception as exc:  # a factory that raises is a broken plugin
            out.append(f"adapter '{reg.name}': {type(exc).__name__}: {exc}")
            continue
        missing = adapter_problems(obj)
        if missing:
            out.append(f"adapter '{reg.name}' lacks: {', '.join(missing)}")
        name = getattr(obj, "name", None)
        engine = reg.name.partition("+")[0]  # a dialect adapter (sqlalchemy+sqlite): its engine
        if isinstance(name, str) and name not in (reg.name, engine):
            out.append(
                f"adapter registered as '{reg.name}' says name = '{name}': an adapter's name "
                f"is dlt's engine name and must equal its registration (and entry point)"
            )
        elif (
            not missing
            and _builds_dlt_destination_by_name(obj)
            and dlt_knows_destination(engine) is False
        ):
            out.append(
                f"adapter '{reg.name}': dlt has no destination named '{engine}' and the "
                f"adapter does not build one (dlt_destination); name it after dlt's engine"
            )
    return out


def stale_picks(registry: PluginRegistry) -> list[str]:
    """``[dlt_ops.plugins.<kind>] <name> = "<pick>"`` entries whose pick is no installed
    claimant of that name (an uninstalled or renamed distribution): the pick does nothing."""
    out = []
    for kind, names in registry.picks.items():
        for name, pick in names.items():
            claimants = {
                who
                for reg in registry.registrations(kind)
                if reg.name == name
                for who in (reg.source.dist, reg.source.value)
            } | {who for s in registry.sources(kind) if s.name == name for who in (s.dist, s.value)}
            if pick not in claimants:
                known = ", ".join(sorted(c for c in claimants if c)) or "none"
                out.append(
                    f'[dlt_ops.plugins.{kind}] {name} = "{pick}" names no installed plugin '
                    f"claiming '{name}' (claimants: {known}); fix or remove the pick"
                )
    return out


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
    if source.kind == "destination":
        problems += _adapter_problems(registry, source)
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
        stale_picks=stale_picks(registry),
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
