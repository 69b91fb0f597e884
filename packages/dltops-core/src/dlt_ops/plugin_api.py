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
===================  ==========================================  ===============================

The protocols live with their features; this module only collects them, so importing it loads
each feature's contract module (no dlt, no driver).
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
    "Finding",
    "Kind",
    "LedgerPruner",
    "LedgerQuery",
    "LedgerSink",
    "LedgerSinkContext",
    "LedgerSinkFactory",
    "ReadableLedgerSink",
    "Register",
    "RunReader",
    "ScheduleTarget",
    "ScheduledSource",
    "SecretBackend",
    "SqlClient",
    "TriggerEmitter",
    "ValidationContext",
    "ValidationRule",
]
