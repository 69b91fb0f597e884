"""Testing support for dlt-ops and its plugins.

* :class:`DestinationAdapterSuite`: the adapter conformance kit. Subclass it in your adapter
  package, set ``__test__ = True`` and provide ``adapter`` and ``connection`` fixtures.
* ``pytest_plugins = ["dlt_ops.testing.fixtures"]``: fixtures for registries with inline
  plugins (and live database servers).

Importing this package imports pytest; it is meant for test suites only.
"""

from dlt_ops.testing.conformance import DestinationAdapterSuite

__all__ = ["DestinationAdapterSuite"]
