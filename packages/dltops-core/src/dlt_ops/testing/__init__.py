"""Testing support for dlt-ops and its plugins.

* :class:`DestinationAdapterSuite`: the adapter conformance kit. Subclass it in your adapter
  package, set ``__test__ = True`` and provide ``adapter`` and ``target`` fixtures.
* :class:`LedgerSinkSuite`, :class:`AssertionTypeSuite`, :class:`AlertSinkSuite`,
  :class:`ValidationRuleSuite`, :class:`TriggerEmitterSuite`, :class:`SecretBackendSuite` and
  :class:`LifecycleObserverSuite`: the same for every other kind (subclass, provide what the
  plugin registers). :func:`validation_context` builds a rule's ``ValidationContext`` for a
  project written with :func:`write_project`.
* ``pytest_plugins = ["dlt_ops.testing.fixtures"]``: fixtures for registries with inline
  plugins (and live database servers).

Importing this package imports pytest; it is meant for test suites only: install
``dltops-core[testing]``.
"""

from dlt_ops.testing.alert_sinks import AlertSinkSuite
from dlt_ops.testing.assertion_types import AssertionCase, AssertionTypeSuite
from dlt_ops.testing.conformance import DestinationAdapterSuite
from dlt_ops.testing.ledger_sinks import LedgerSinkSuite
from dlt_ops.testing.lifecycle import LifecycleObserverSuite
from dlt_ops.testing.secret_backends import SecretBackendSuite
from dlt_ops.testing.trigger_emitters import TriggerEmitterSuite
from dlt_ops.testing.validation_rules import (
    ValidationRuleSuite,
    validation_context,
    write_project,
)

__all__ = [
    "AlertSinkSuite",
    "AssertionCase",
    "AssertionTypeSuite",
    "DestinationAdapterSuite",
    "LedgerSinkSuite",
    "LifecycleObserverSuite",
    "SecretBackendSuite",
    "TriggerEmitterSuite",
    "ValidationRuleSuite",
    "validation_context",
    "write_project",
]
