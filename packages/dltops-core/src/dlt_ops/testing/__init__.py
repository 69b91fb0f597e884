"""Testing support for dlt-ops and its plugins.

* :class:`DestinationAdapterSuite`: the adapter conformance kit. Subclass it in your adapter
  package, set ``__test__ = True`` and provide ``adapter`` and ``target`` fixtures.
* :class:`LedgerSinkSuite`, :class:`AssertionTypeSuite`, :class:`AlertSinkSuite`: the same for
  ledger sinks, assertion types and alert sinks (subclass, provide what the plugin registers).
* ``pytest_plugins = ["dlt_ops.testing.fixtures"]``: fixtures for registries with inline
  plugins (and live database servers).

Importing this package imports pytest; it is meant for test suites only: install
``dltops-core[testing]``.
"""

from dlt_ops.testing.alert_sinks import AlertSinkSuite
from dlt_ops.testing.assertion_types import AssertionCase, AssertionTypeSuite
from dlt_ops.testing.conformance import DestinationAdapterSuite
from dlt_ops.testing.ledger_sinks import LedgerSinkSuite

__all__ = [
    "AlertSinkSuite",
    "AssertionCase",
    "AssertionTypeSuite",
    "DestinationAdapterSuite",
    "LedgerSinkSuite",
]
