"""Pre-load assertions: config parser, gate engine, quarantine (``_dlt_rejected``).

Importing this package is cheap (no dlt); :mod:`dlt_ops.assertions.gate` imports dlt and is
loaded only by a run that has assertions.
"""

from dlt_ops.assertions.model import (
    AssertionContext,
    AssertionSpec,
    AssertionType,
    OnFailure,
    ParsedAssertions,
    Threshold,
    parse_assertions,
)

__all__ = [
    "AssertionContext",
    "AssertionSpec",
    "AssertionType",
    "OnFailure",
    "ParsedAssertions",
    "Threshold",
    "parse_assertions",
]
