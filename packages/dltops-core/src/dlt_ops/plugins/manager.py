"""The plugin manager: entry points in, typed registrations out, lazily and in isolation.

Plugins of every kind load the same way, built-ins included: an entry point in group
``dlt_ops.<kind>`` names a module of ``@hookimpl`` functions; loading the plugin imports that
module, registers it with pluggy (``check_pending`` catches misspelled hooks) and calls its
registration hook for that kind. Nothing is imported until a kind and name are looked up, and a
plugin that fails to load is recorded as a :class:`PluginFailure` instead of raising into
unrelated commands. Two distinct plugins claiming one name is a :class:`PluginConflictError`
unless the project config picks a winner under ``[dlt_ops.plugins.<kind>]``. A plugin turned
off by ``[dlt_ops.plugins] disable`` or ``DLT_OPS_DISABLE_PLUGINS`` (:mod:`.disable`) is never
imported; looking it up is a :class:`PluginDisabledError`.

A registry is a plain object: build one per command (or per test); there is no global state.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, TypeVar, overload

import pluggy

from dlt_ops.errors import (
    PluginConflictError,
    PluginDisabledError,
    PluginLoadError,
    UnknownDestinationError,
    UnknownPluginError,
)
from dlt_ops.plugins import disable as _disable
from dlt_ops.plugins import entry_points as _scan
from dlt_ops.plugins.kinds import (
    GROUP_PREFIX,
    HOOKSPECS_MODULE,
    KIND_HOOKS,
    KINDS,
    Kind,
    registration_problem,
)

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

T = TypeVar("T")
HOOK_PREFIX = "dlt_ops_"


@dataclass(frozen=True)
class PluginSource:
    """Where a plugin comes from: one entry point, or one inline registration."""

    kind: str
    name: str
    value: str
    dist: str | None = None
    version: str | None = None

    @property
    def origin(self) -> str:
        """Human label: ``dist version (module)`` or ``<inline> (module)``."""
        who = f"{self.dist} {self.version}" if self.dist else "<inline>"
        return f"{who} ({self.value})"

    @property
    def claimant(self) -> str:
        """The string a ``[dlt_ops.plugins.<kind>]`` pick would use for this plugin."""
        return self.dist or self.value


@dataclass(frozen=True)
class Registration:
    """One thing a plugin registered: ``obj`` under ``kind``/``name``."""

    kind: str
    name: str
    obj: object
    source: PluginSource


@dataclass(frozen=True)
class PluginFailure:
    """A plugin that could not be imported or registered."""

    source: PluginSource
    error: str


@dataclass(frozen=True)
class RejectedRegistration:
    """A ``register(obj, name=...)`` call the kind refused (the plugin's other names stand)."""

    kind: str
    name: str
    source: PluginSource
    error: str


@dataclass
class _Plugin:
    source: PluginSource
    module: object | None = None
    hooks: tuple[str, ...] = ()
    called_kinds: set[str] = field(default_factory=set)
    #: The disable entries that turn this plugin off (empty: it is enabled).
    disabled_by: tuple[_disable.Disable, ...] = ()


def installed_entry_points() -> list[EntryPoint]:
    """Every installed entry point in a ``dlt_ops.*`` group (metadata only, no imports)."""
    from importlib.metadata import distributions

    return [
        ep
        for dist in distributions()
        for ep in dist.entry_points
        if ep.group.startswith(GROUP_PREFIX)
    ]


def installed_sources() -> list[PluginSource]:
    """Every installed ``dlt_ops.*`` entry point as a plugin source (metadata only)."""
    found = _scan.scan(GROUP_PREFIX)
    if found is None:  # a layout the direct reader does not handle: ask importlib.metadata
        names: dict[int, tuple[str, str]] = {}
        return [_source_for(ep, names) for ep in installed_entry_points()]
    return [
        PluginSource(kind=group[len(GROUP_PREFIX) :], name=name, value=value, dist=dist,
                     version=version)
        for group, name, value, dist, version in found
    ]  # fmt: skip


def _source_for(ep: EntryPoint, names: dict[int, tuple[str, str]] | None = None) -> PluginSource:
    """``ep`` as a plugin source; ``names`` remembers each distribution's name and version
    (importlib parses a distribution's METADATA file again on every ``.name``/``.version``)."""
    dist = getattr(ep, "dist", None)
    name = version = None
    if dist is not None:
        known = names.get(id(dist)) if names is not None else None
        if known is None:
            metadata = dist.metadata
            known = (metadata["Name"], metadata["Version"])
            if names is not None:
                names[id(dist)] = known
        name, version = known
    return PluginSource(
        kind=ep.group[len(GROUP_PREFIX) :], name=ep.name, value=ep.value, dist=name,
        version=version,
    )  # fmt: skip


def _same_plugin(a: PluginSource, b: PluginSource) -> bool:
    """Two sources are one plugin when they load the same module from the same distribution."""
    return (a.dist, a.value) == (b.dist, b.value)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def disabled_text(plugin: _Plugin) -> str:
    """``[dlt_ops.plugins] disable`` and/or ``DLT_OPS_DISABLE_PLUGINS``: what turned it off."""
    return " and ".join(dict.fromkeys(d.origin for d in plugin.disabled_by))


def unmarked_hooks(module: object, known: Iterable[str]) -> list[str]:
    """Functions of ``module`` named like a hook but not marked ``@hookimpl`` (pluggy skips
    them silently): each with what is wrong, misspelled or undecorated."""
    known = set(known)
    found = []
    for attr, value in sorted(vars(module).items()) if hasattr(module, "__dict__") else ():
        if not attr.startswith(HOOK_PREFIX) or not inspect.isfunction(value):
            continue
        if hasattr(value, "dlt_ops_impl"):
            continue  # marked: pluggy registered it (or check_pending refused the plugin)
        why = "not decorated with @hookimpl" if attr in known else "matches no hook (misspelled?)"
        found.append(f"{attr}: {why}")
    return found


class PluginRegistry:
    """Lazily loads plugins from entry points and answers ``get(kind, name)``.

    ``entry_points`` defaults to the installed ``dlt_ops.*`` entry points; tests pass their own
    list (or ``[]``) and add inline plugins with :meth:`add_plugin`. ``picks`` is the parsed
    ``[dlt_ops.plugins]`` table: ``{kind: {name: distribution-or-module}}``. ``specs`` is the
    module of hook specifications (default :data:`~dlt_ops.plugins.kinds.HOOKSPECS_MODULE`).
    ``disable`` is the project's ``[dlt_ops.plugins] disable`` list; the entries of
    ``DLT_OPS_DISABLE_PLUGINS`` are added to it (a per-process switch applies to every registry
    of the process). Either turns off entry-point plugins only, never :meth:`add_plugin` ones.
    """

    def __init__(
        self,
        *,
        entry_points: Iterable[EntryPoint] | None = None,
        picks: Mapping[str, Mapping[str, str]] | None = None,
        specs: ModuleType | None = None,
        disable: Iterable[str] = (),
    ) -> None:
        self.pm = pluggy.PluginManager("dlt_ops")
        self.disable = (
            *_disable.parse(disable, _disable.CONFIG_ORIGIN),
            *_disable.from_environment(),
        )
        self.pm.add_hookspecs(specs or importlib.import_module(HOOKSPECS_MODULE))
        self.picks: dict[str, dict[str, str]] = {k: dict(v) for k, v in (picks or {}).items()}
        self._plugins: list[_Plugin] = []
        self._seen: set[tuple[str, str, str, str | None]] = set()
        self.unknown_kinds: list[PluginSource] = []
        if entry_points is None:
            sources = installed_sources()
        else:
            names: dict[int, tuple[str, str]] = {}
            sources = [_source_for(ep, names) for ep in entry_points]
        for source in sources:
            self._add_source(source)
        self._registrations: list[Registration] = []
        self._called: set[tuple[int, str]] = set()
        self.failures: list[PluginFailure] = []
        self.rejected: list[RejectedRegistration] = []

    # -- building ------------------------------------------------------------------------------

    def _add_source(self, source: PluginSource, module: object | None = None) -> _Plugin | None:
        key = (source.kind, source.name, source.value, source.dist)
        if key in self._seen:  # the same entry point seen twice is one plugin, not a conflict
            return None
        self._seen.add(key)
        if source.kind not in KINDS:
            self.unknown_kinds.append(source)
            return None
        plugin = _Plugin(source=source, module=module)
        if module is None:  # entry points only: an inline plugin is code, not an install
            plugin.disabled_by = tuple(
                d for d in self.disable if d.matches(source.kind, source.name)
            )
        self._plugins.append(plugin)
        return plugin

    def add_plugin(self, module: object, *, name: str, kind: str) -> None:
        """Register an already-imported plugin object (tests, embedding applications)."""
        value = getattr(module, "__name__", repr(module))
        plugin = self._add_source(PluginSource(kind=kind, name=name, value=value), module)
        if plugin is not None:
            self._load(plugin)

    # -- loading -------------------------------------------------------------------------------

    def _load(self, plugin: _Plugin) -> bool:
        """Import, register and call the plugin's hook for its kind; record any failure."""
        kind = plugin.source.kind
        if kind in plugin.called_kinds:
            return True
        if plugin.disabled_by or self._failed(plugin.source):
            return False
        try:
            if plugin.module is None:
                plugin.module = importlib.import_module(plugin.source.value)
            if not self.pm.is_registered(plugin.module):
                self.pm.register(plugin.module, name=f"{plugin.source.origin}:{kind}")
                try:
                    self.pm.check_pending()
                except Exception:
                    self.pm.unregister(plugin.module)
                    raise
            plugin.hooks = tuple(
                sorted(
                    impl.function.__name__
                    for caller in self.pm.get_hookcallers(plugin.module) or []
                    for impl in caller.get_hookimpls()
                    if impl.plugin is plugin.module
                )
            )
            if kind in KIND_HOOKS and (id(plugin.module), kind) not in self._called:
                self._call_registration_hook(plugin)
                self._called.add((id(plugin.module), kind))
        except Exception as exc:  # a broken plugin is recorded, never raised into other work
            self.failures.append(PluginFailure(plugin.source, _describe(exc)))
            return False
        plugin.called_kinds.add(kind)
        return True

    def _failed(self, source: PluginSource) -> bool:
        return any(f.source == source for f in self.failures)

    def _call_registration_hook(self, plugin: _Plugin) -> None:
        source = plugin.source
        hook_name = KIND_HOOKS[source.kind]
        others = [p for p in self.pm.get_plugins() if p is not plugin.module]
        caller = self.pm.subset_hook_caller(hook_name, remove_plugins=others)
        found: list[Registration] = []

        def register(obj: object, /, *, name: str) -> None:
            if not isinstance(name, str) or not name:
                raise TypeError(f"register() needs a non-empty name, got {name!r}")
            problem = registration_problem(source.kind, obj)
            if problem is not None:  # refused, recorded; the plugin's other names still count
                self.rejected.append(RejectedRegistration(source.kind, name, source, problem))
                return
            found.append(Registration(source.kind, name, obj, source))

        caller(register=register)
        self._registrations.extend(found)

    def load_all(self, kind: str | None = None) -> None:
        """Load every known plugin (of one kind, or all): used by ``plugins list|doctor``."""
        for plugin in self._plugins:
            if kind is None or plugin.source.kind == kind:
                self._load(plugin)

    # -- queries -------------------------------------------------------------------------------

    def sources(self, kind: str | None = None) -> list[PluginSource]:
        """Known plugin sources (metadata only), in discovery order."""
        return [p.source for p in self._plugins if kind is None or p.source.kind == kind]

    def names(self, kind: str) -> list[str]:
        """Every usable name of ``kind`` (no imports): what loaded plugins registered, plus the
        entry-point names of plugins not loaded yet. Failed and disabled plugins are left out."""
        names = {r.name for r in self._registrations if r.kind == kind}
        names.update(  # not loaded yet: the entry-point name is all the metadata says
            p.source.name
            for p in self._plugins
            if p.source.kind == kind
            and kind not in p.called_kinds
            and not p.disabled_by
            and not self._failed(p.source)
        )
        return sorted(names)

    def registrations(self, kind: str | None = None) -> list[Registration]:
        """Registrations made by plugins loaded so far."""
        return [r for r in self._registrations if kind is None or r.kind == kind]

    def registered_by(self, source: PluginSource) -> list[str]:
        """The names an entry point accounts for: what its module registered under its kind,
        less the names a sibling entry point of the same module is named after."""
        siblings = {
            p.source.name
            for p in self._plugins
            if p.source.kind == source.kind and _same_plugin(p.source, source)
        } - {source.name}
        return sorted(
            {
                r.name
                for r in self._registrations
                if r.kind == source.kind
                and _same_plugin(r.source, source)
                and (r.name == source.name or r.name not in siblings)
            }
        )

    def hooks_of(self, source: PluginSource) -> tuple[str, ...]:
        """Hook implementations a loaded plugin provides."""
        for plugin in self._plugins:
            if plugin.source == source:
                return plugin.hooks
        return ()

    def disabled_by(self, source: PluginSource) -> str | None:
        """Which switch turned ``source`` off (``None``: it is enabled)."""
        for plugin in self._plugins:
            if plugin.source == source and plugin.disabled_by:
                return disabled_text(plugin)
        return None

    def unmatched_disables(self) -> list[_disable.Disable]:
        """Disable entries that match no known entry point (a typo leaves the plugin on)."""
        used = {d for p in self._plugins for d in p.disabled_by}
        return [d for d in self.disable if d not in used]

    def load_problems(self, kind: str) -> list[PluginFailure]:
        """Enabled plugins of ``kind`` that could not be used as written: a load failure, or a
        function named like a hook that pluggy ignores (misspelled or undecorated), so a hook
        the author wrote is never called. Call after :meth:`load_all` of ``kind``."""
        out = [f for f in self.failures if f.source.kind == kind]
        known = [n for n in dir(self.pm.hook) if n.startswith(HOOK_PREFIX)]
        for plugin in self._plugins:
            if plugin.source.kind != kind or plugin.disabled_by or plugin.module is None:
                continue
            if not self._failed(plugin.source) and (bad := unmarked_hooks(plugin.module, known)):
                out.append(PluginFailure(plugin.source, "; ".join(bad)))
        return out

    def hook_problems(self, source: PluginSource) -> list[str]:
        """Why a loaded plugin is suspect: it implements no hook, or has functions named like
        hooks that pluggy ignored (undecorated or misspelled)."""
        for plugin in self._plugins:
            if plugin.source == source and plugin.module is not None:
                known = [n for n in dir(self.pm.hook) if n.startswith(HOOK_PREFIX)]
                problems = unmarked_hooks(plugin.module, known)
                if not plugin.hooks:
                    problems.insert(0, "implements no hook")
                return problems
        return []

    def conflicts(self) -> list[tuple[str, str, list[PluginSource]]]:
        """``(kind, name, claimants)`` for every name with several claimants and no valid pick."""
        out = []
        by_key: dict[tuple[str, str], list[PluginSource]] = {}
        for reg in self._registrations:
            claimants = by_key.setdefault((reg.kind, reg.name), [])
            if all(_same_plugin(reg.source, c) is False for c in claimants):
                claimants.append(reg.source)
        for (kind, name), claimants in sorted(by_key.items()):
            if len(claimants) > 1 and self._picked(kind, name, claimants) is None:
                out.append((kind, name, claimants))
        return out

    def _picked(self, kind: str, name: str, claimants: list[PluginSource]) -> PluginSource | None:
        pick = self.picks.get(kind, {}).get(name)
        if pick is None:
            return None
        matches = [c for c in claimants if pick in (c.dist, c.value)]
        return matches[0] if len(matches) == 1 else None

    @overload
    def get(self, kind: Kind[T], name: str) -> T: ...

    @overload
    def get(self, kind: str, name: str) -> object: ...

    def get(self, kind: Kind[T] | str, name: str) -> T | object:
        """The object registered as ``kind``/``name``, loading only the plugins that claim it.

        Pass a typed kind (``LEDGER_SINK`` from :mod:`dlt_ops.plugin_api`) to get the
        kind's protocol type back; a kind name answers ``object``.

        Raises :class:`UnknownPluginError` (:class:`UnknownDestinationError` for destinations),
        :class:`PluginLoadError` when the claiming plugin failed to load,
        :class:`PluginDisabledError` when it is turned off, and
        :class:`PluginConflictError` when distinct plugins claim the name without a pick.
        """
        kind_name = kind.name if isinstance(kind, Kind) else kind
        return self._lookup(kind_name, name)

    def _lookup(self, kind: str, name: str) -> object:
        candidates = [p for p in self._plugins if p.source.kind == kind and p.source.name == name]
        for plugin in candidates:
            self._load(plugin)
        matches = [r for r in self._registrations if r.kind == kind and r.name == name]
        if not matches:  # a plugin may register names other than its entry-point name
            self.load_all(kind)
            matches = [r for r in self._registrations if r.kind == kind and r.name == name]
        if not matches:
            failed = [f for f in self.failures if f.source in [c.source for c in candidates]]
            if failed:
                f = failed[0]
                raise PluginLoadError(kind, name, f.source.origin, f.error)
            off = [c for c in candidates if c.disabled_by]
            if off:
                raise PluginDisabledError(kind, name, off[0].source.origin, disabled_text(off[0]))
            rejected = [r for r in self.rejected if r.kind == kind and r.name == name]
            if rejected:
                r = rejected[0]
                raise PluginLoadError(kind, name, r.source.origin, r.error)
            if kind == "destination":
                raise UnknownDestinationError(name, self.names(kind))
            raise UnknownPluginError(kind, name, self.names(kind))
        claimants: list[PluginSource] = []
        for reg in matches:
            if all(_same_plugin(reg.source, c) is False for c in claimants):
                claimants.append(reg.source)
        if len(claimants) > 1:
            chosen = self._picked(kind, name, claimants)
            if chosen is None:
                raise PluginConflictError(kind, name, [c.claimant for c in claimants])
            matches = [r for r in matches if _same_plugin(r.source, chosen)]
        return matches[-1].obj

    def has(self, kind: str, name: str) -> bool:
        """Whether any plugin claims ``kind``/``name`` by entry point (metadata only)."""
        return any(s.name == name for s in self.sources(kind))
