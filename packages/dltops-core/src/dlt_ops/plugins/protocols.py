"""Every protocol a dlt-ops plugin implements, in one place, and the typed kind keys.

A plugin author needs only this module (plus :mod:`dlt_ops.hookspecs` for the hooks):

===================  ==========================================  ===============================
kind                 what ``register(obj, name=...)`` receives    ``registry.get(KIND, name)``
===================  ==========================================  ===============================
``destination``      a zero-argument factory of an adapter        :data:`DestinationAdapterFactory`
``ledger_sink``      a factory taking a ``LedgerSinkContext``     :data:`LedgerSinkFactory`
``assertion_rule``   an assertion type (class or instance)        :data:`AssertionTypeProvider`
``trigger_emitter``  an emitter                                   :class:`TriggerEmitter`
``validation_rule``  a rule                                       :class:`ValidationRule`
``secret_backend``   a backend                                    :class:`SecretBackend`
===================  ==========================================  ===============================

The protocols live with their features; this module only collects them, so importing it loads
each feature's contract module (no dlt, no driver).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from dlt_ops.adapters.protocol import DestinationAdapter, SqlClient
from dlt_ops.assertions.model import AssertionContext, AssertionType
from dlt_ops.ledger.sinks import (
    LedgerPruner,
    LedgerQuery,
    LedgerSink,
    LedgerSinkContext,
    LedgerSinkFactory,
    ReadableLedgerSink,
    RunReader,
)
from dlt_ops.plugins.kinds import Kind, Register
from dlt_ops.secrets import SecretBackend
from dlt_ops.triggers.protocol import TriggerEmitter
from dlt_ops.validate.framework import Finding, ValidationContext, ValidationRule

#: What ``dlt_ops_register_destinations`` registers: usually the adapter class.
DestinationAdapterFactory: TypeAlias = Callable[[], DestinationAdapter]
#: What ``dlt_ops_register_assertion_rules`` registers: the class (instantiated once per run
#: with no arguments) or a ready instance.
AssertionTypeProvider: TypeAlias = AssertionType | type[AssertionType]

DESTINATION: Kind[DestinationAdapterFactory] = Kind("destination", DestinationAdapterFactory)
LEDGER_SINK: Kind[LedgerSinkFactory] = Kind("ledger_sink", LedgerSinkFactory)
ASSERTION_RULE: Kind[AssertionTypeProvider] = Kind("assertion_rule", AssertionTypeProvider)
TRIGGER_EMITTER: Kind[TriggerEmitter] = Kind("trigger_emitter", TriggerEmitter)
VALIDATION_RULE: Kind[ValidationRule] = Kind("validation_rule", ValidationRule)
SECRET_BACKEND: Kind[SecretBackend] = Kind("secret_backend", SecretBackend)

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
    )
}

__all__ = [
    "ASSERTION_RULE",
    "DESTINATION",
    "LEDGER_SINK",
    "SECRET_BACKEND",
    "TRIGGER_EMITTER",
    "TYPED_KINDS",
    "VALIDATION_RULE",
    "AssertionContext",
    "AssertionType",
    "AssertionTypeProvider",
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
    "SecretBackend",
    "SqlClient",
    "TriggerEmitter",
    "ValidationContext",
    "ValidationRule",
]
