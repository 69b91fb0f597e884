"""Every protocol a dlt-ops plugin implements, in one place, and the typed kind keys.

A plugin author needs only this module (plus :mod:`dlt_ops.hookspecs` for the hooks):

===================  ==========================================  ===============================
kind                 what ``register(obj, name=...)`` receives    ``registry.get(KIND, name)``
===================  ==========================================  ===============================
``destination``      a zero-argument factory of an adapter        :data:`DestinationAdapterFactory`
``ledger_sink``      a factory taking a ``LedgerSinkContext``     :data:`LedgerSinkFactory`
``assertion_rule``   an assertion type (class or instance)        :data:`AssertionTypeProvider`
``trigger_emitter``  an emitter (a ``ScheduleTarget`` too, to be   :class:`TriggerEmitter`
                     a ``schedule emit`` target)
``validation_rule``  a rule                                       :class:`ValidationRule`
``secret_backend``   a backend                                    :class:`SecretBackend`
``alert_sink``       a factory taking an ``AlertSinkContext``     :data:`AlertSinkFactory`
``command``          a ``typer.Typer`` or a command function      :class:`CommandProvider`
``config_key``       a ``ConfigKey``                              :class:`ConfigKey`
===================  ==========================================  ===============================

The lifecycle hooks receive and return :class:`PreparedRun`, :class:`RunContext`,
:class:`RunRecord`, :class:`RunOutcome` and :class:`GateFactory` (whose gates are
:class:`ExtractGate` objects reporting a :class:`GateSummary`); they are here too, so every
type a hook receives or returns is importable from this module (a test checks the hook
specifications against ``__all__``).

The protocols live with their features; this module only collects them, so importing it loads
each feature's contract module (no dlt, no driver).

:data:`PLUGIN_API_VERSION` is the version of this contract, ``"MAJOR.MINOR"``. A MINOR
release only adds: new hooks, new kinds, new arguments a hook may be given (pluggy passes only
the ones an implementation names), new optional protocol members with defaults, new fields on
the objects a hook receives. Anything that could break a plugin written against an earlier
MINOR of the same MAJOR (a removed or renamed hook, argument, member or field, a changed
meaning, a new required member) waits for the next MAJOR and is announced by a deprecation
warning for at least one MINOR before. Hooks are never renamed.
"""

from __future__ import annotations

from typing import Any

from dlt_ops.adapters.protocol import (
    DESTINATION,
    DestinationAdapter,
    DestinationAdapterFactory,
    SqlClient,
)
from dlt_ops.alerts.model import ALERT_SINK, Alert, AlertSink, AlertSinkContext, AlertSinkFactory
from dlt_ops.assertions.model import (
    ASSERTION_RULE,
    AssertionContext,
    AssertionType,
    AssertionTypeProvider,
)
from dlt_ops.config.plugin_keys import ConfigKey
from dlt_ops.ledger.model import RunRecord
from dlt_ops.ledger.sinks import (
    LEDGER_SINK,
    LedgerPruner,
    LedgerQuery,
    LedgerSink,
    LedgerSinkContext,
    LedgerSinkFactory,
    ReadableLedgerSink,
    RunReader,
)
from dlt_ops.plugins.kinds import CommandProvider, Kind, Register
from dlt_ops.runner.model import (
    ExtractGate,
    GateFactory,
    GateSummary,
    ResourceVerdicts,
    RunContext,
    RunOutcome,
    RunPhase,
)
from dlt_ops.runner.prepare import PreparedRun
from dlt_ops.secrets import SECRET_BACKEND, SecretBackend
from dlt_ops.triggers.protocol import (
    TRIGGER_EMITTER,
    ScheduledSource,
    ScheduleTarget,
    TriggerEmitter,
)
from dlt_ops.validate.framework import (
    VALIDATION_RULE,
    Finding,
    ValidationContext,
    ValidationRule,
)

#: The version of the plugin contract (see the module docstring for what a change may do).
PLUGIN_API_VERSION = "1.0"

#: Config keys a plugin reads (see ``dlt_ops_register_config_keys``).
CONFIG_KEY: Kind[ConfigKey] = Kind("config_key", ConfigKey)
#: ``dlt-ops <name>`` commands a plugin adds (see ``dlt_ops_register_commands``).
COMMAND: Kind[CommandProvider] = Kind("command", CommandProvider)

#: Every typed kind with a registration hook, by kind name.
TYPED_KINDS: dict[str, Kind[Any]] = {
    k.name: k
    for k in (
        DESTINATION,
        LEDGER_SINK,
        ASSERTION_RULE,
        TRIGGER_EMITTER,
        VALIDATION_RULE,
        SECRET_BACKEND,
        ALERT_SINK,
        COMMAND,
        CONFIG_KEY,
    )
}

__all__ = [
    "ALERT_SINK",
    "ASSERTION_RULE",
    "COMMAND",
    "CONFIG_KEY",
    "DESTINATION",
    "LEDGER_SINK",
    "PLUGIN_API_VERSION",
    "SECRET_BACKEND",
    "TRIGGER_EMITTER",
    "TYPED_KINDS",
    "VALIDATION_RULE",
    "Alert",
    "AlertSink",
    "AlertSinkContext",
    "AlertSinkFactory",
    "AssertionContext",
    "AssertionType",
    "AssertionTypeProvider",
    "CommandProvider",
    "ConfigKey",
    "DestinationAdapter",
    "DestinationAdapterFactory",
    "ExtractGate",
    "Finding",
    "GateFactory",
    "GateSummary",
    "Kind",
    "LedgerPruner",
    "LedgerQuery",
    "LedgerSink",
    "LedgerSinkContext",
    "LedgerSinkFactory",
    "PreparedRun",
    "ReadableLedgerSink",
    "Register",
    "ResourceVerdicts",
    "RunContext",
    "RunOutcome",
    "RunPhase",
    "RunReader",
    "RunRecord",
    "ScheduleTarget",
    "ScheduledSource",
    "SecretBackend",
    "SqlClient",
    "TriggerEmitter",
    "ValidationContext",
    "ValidationRule",
]
