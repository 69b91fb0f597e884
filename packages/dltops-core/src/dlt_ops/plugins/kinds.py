"""Plugin kinds: their names, their registration hooks, and the typed ``register`` callback.

This is the bottom of the plugin layer: it imports no feature module, so the manager, the hook
specifications and every feature contract can depend on it without forming a cycle. The
protocols themselves live with their features and are collected in
:mod:`dlt_ops.plugin_api`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)

GROUP_PREFIX = "dlt_ops."

#: The module of hook specifications the manager loads (by name, like a plugin module: the
#: specs name types from every feature, so a static import from here would close cycles).
HOOKSPECS_MODULE = "dlt_ops.hookspecs"

#: Plugin kinds with a registration hook, in display order.
KIND_HOOKS: Mapping[str, str] = {
    "destination": "dlt_ops_register_destinations",
    "ledger_sink": "dlt_ops_register_ledger_sinks",
    "assertion_rule": "dlt_ops_register_assertion_rules",
    "trigger_emitter": "dlt_ops_register_trigger_emitters",
    "validation_rule": "dlt_ops_register_validation_rules",
    "secret_backend": "dlt_ops_register_secret_backends",
    "alert_sink": "dlt_ops_register_alert_sinks",
    "command": "dlt_ops_register_commands",
    "config_key": "dlt_ops_register_config_keys",
}
#: Kinds whose plugins register nothing: loading one (and its lifecycle hooks) is all there is.
HOOKLESS_KINDS: tuple[str, ...] = ("lifecycle",)
#: Every kind, in display order.
KINDS: tuple[str, ...] = (*KIND_HOOKS, *HOOKLESS_KINDS)


class Register(Protocol[T_contra]):
    """The callback a registration hook receives: ``register(obj, name="...")``.

    ``T_contra`` is what the kind accepts (a factory, an assertion type, a rule, ...); see the
    hook's docstring in :mod:`dlt_ops.hookspecs`.
    """

    def __call__(self, obj: T_contra, /, *, name: str) -> None: ...


class CommandProvider(Protocol):
    """What a ``command`` plugin registers: a ``typer.Typer`` (a group of subcommands) or a
    function typer turns into one command; both are callables."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...


class Kind(Generic[T]):
    """A plugin kind as a typed key: ``registry.get(LEDGER_SINK, name)`` returns a ``T``.

    The constants live in :mod:`dlt_ops.plugin_api`, next to the protocols they name.
    """

    __slots__ = ("contract", "name")

    def __init__(self, name: str, contract: object = None) -> None:
        if name not in KINDS:
            raise ValueError(f"unknown plugin kind {name!r}; kinds: {', '.join(KINDS)}")
        self.name = name
        #: What a registration must be (the same type as ``T``, kept for docs and checks).
        self.contract = contract

    def __repr__(self) -> str:
        return f"Kind({self.name!r})"


def _callable(obj: object) -> str | None:
    return None if callable(obj) else f"expected a factory (a callable), got {type(obj).__name__}"


def _adapter_factory(obj: object) -> str | None:
    # an adapter instance is accepted too (it has ``connect``); anything else must be callable
    return None if hasattr(obj, "connect") else _callable(obj)


def _command(obj: object) -> str | None:
    # a typer.Typer (a command group) or a function typer turns into a command
    if callable(obj) or type(obj).__name__ == "Typer":
        return None
    return f"expected a typer.Typer or a command function, got {type(obj).__name__}"


def _members(*names: str) -> Callable[[object], str | None]:
    def check(obj: object) -> str | None:
        missing = [n for n in names if not hasattr(obj, n)]
        return f"{type(obj).__name__} lacks: {', '.join(missing)}" if missing else None

    return check


#: The structural check each registration must pass (the full protocol is checked by the
#: kind's conformance kit; this catches registering the wrong thing at load time).
REGISTRATION_CHECKS: Mapping[str, Callable[[object], str | None]] = {
    "destination": _adapter_factory,
    "ledger_sink": _callable,
    "alert_sink": _callable,
    "assertion_rule": _members(
        "name", "row_scoped", "check_config", "start", "observe", "finalize"
    ),
    "trigger_emitter": _members("description"),
    "validation_rule": _members("id", "description", "check"),
    "secret_backend": _members("name", "claims", "check", "prepare"),
    "command": _command,
    "config_key": _members("name", "scope", "expected", "check"),
}


def registration_problem(kind: str, obj: object) -> str | None:
    """Why ``obj`` cannot be registered as ``kind`` (``None`` when it can)."""
    check = REGISTRATION_CHECKS.get(kind)
    return check(obj) if check is not None else None
