"""Built-in assertion types, registered through ``dlt_ops.assertion_rule`` entry points.

``min_rows_per_load`` and ``max_rows_per_load`` judge the batch (all rows one resource yields in
one run, after dlt's incremental filtering and validation); ``required_columns`` and
``unique_columns`` judge each row. They follow the protocol documented on
``dlt_ops_register_assertion_rules`` exactly as a third-party type would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeGuard

from dlt_ops import hookimpl
from dlt_ops.plugins import Register

if TYPE_CHECKING:
    from dlt_ops.plugin_api import AssertionTypeProvider

_ALLOWED = {"value"}


def _unknown(params: Mapping[str, Any]) -> list[str]:
    extra = sorted(set(params) - _ALLOWED)
    return [f"unknown parameter(s) {', '.join(extra)}; allowed: value"] if extra else []


def _int(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


@dataclass
class _Count:
    rows: int = 0


class _RowCount:
    """Shared by the two batch types: count rows, compare at finalize."""

    name: ClassVar[str]
    row_scoped: ClassVar[bool] = False
    minimum: ClassVar[int]

    def check_config(self, params: Mapping[str, Any], ctx: Any) -> list[str]:
        """``value`` is an integer >= ``minimum`` (booleans refused)."""
        value = params.get("value")
        problems = _unknown(params)
        if not _int(value) or value < self.minimum:
            problems.append(f"{self.name} must be an integer >= {self.minimum}, got {value!r}")
        return problems

    def start(self, params: Mapping[str, Any]) -> _Count:
        """A zero count."""
        return _Count()

    def observe(self, state: _Count, row: Any, params: Mapping[str, Any]) -> None:
        """Count the row; a batch type never judges single rows."""
        state.rows += 1


class MinRowsPerLoad(_RowCount):
    """Fails the batch when fewer than ``value`` rows would load."""

    name = "min_rows_per_load"
    minimum = 0

    def finalize(self, state: _Count, params: Mapping[str, Any]) -> str | None:
        """``row count N is below min_rows_per_load V``."""
        value = params["value"]
        if state.rows < value:
            return f"row count {state.rows} is below min_rows_per_load {value}"
        return None


class MaxRowsPerLoad(_RowCount):
    """Fails the batch when more than ``value`` rows would load."""

    name = "max_rows_per_load"
    minimum = 1

    def finalize(self, state: _Count, params: Mapping[str, Any]) -> str | None:
        """``row count N exceeds max_rows_per_load V``."""
        value = params["value"]
        if state.rows > value:
            return f"row count {state.rows} exceeds max_rows_per_load {value}"
        return None


class _Columns:
    """Shared config check: ``value`` is a non-empty list of non-empty column names."""

    name: ClassVar[str]
    row_scoped: ClassVar[bool] = True

    def check_config(self, params: Mapping[str, Any], ctx: Any) -> list[str]:
        """A non-empty list of names, each on the resource's model when it is known."""
        value = params.get("value")
        problems = _unknown(params)
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(c, str) and c for c in value)
        ):
            problems.append(f"{self.name} must be a non-empty list of column names, "
                            f"got {value!r}")  # fmt: skip
            return problems
        declared = getattr(ctx, "declared_columns", None)
        if declared is not None:
            missing = [c for c in value if c not in declared]
            if missing:
                problems.append(f"column(s) {', '.join(missing)} not declared on the resource's "
                                f"model (declared: {', '.join(declared)})")  # fmt: skip
        return problems

    def finalize(self, state: Any, params: Mapping[str, Any]) -> None:
        """Row types have no batch verdict."""
        return None


class RequiredColumns(_Columns):
    """A row fails when a listed key is absent (a key holding ``None`` is present)."""

    name = "required_columns"

    def start(self, params: Mapping[str, Any]) -> tuple[str, ...]:
        """The columns, as a tuple."""
        return tuple(params["value"])

    def observe(self, state: tuple[str, ...], row: Mapping[str, Any],
                params: Mapping[str, Any]) -> str | None:  # fmt: skip
        """``missing required column(s): a, b``."""
        missing = [c for c in state if c not in row]
        return f"missing required column(s): {', '.join(missing)}" if missing else None


@dataclass
class _Seen:
    columns: tuple[str, ...]
    digests: Any


class UniqueColumns(_Columns):
    """A row fails when its key tuple was already seen in this batch (the first one passes).

    Keys are kept as 10-byte digests in a :class:`dlt_ops.assertions.digests.DigestSet`.
    """

    name = "unique_columns"

    def start(self, params: Mapping[str, Any]) -> _Seen:
        """An empty digest set."""
        from dlt_ops.assertions.digests import DigestSet

        return _Seen(tuple(params["value"]), DigestSet())

    def observe(self, state: _Seen, row: Mapping[str, Any],
                params: Mapping[str, Any]) -> str | None:  # fmt: skip
        """``duplicate key id=6, kind='a'``."""
        from dlt_ops.assertions.digests import key_digest

        values = [row.get(c) for c in state.columns]
        if state.digests.add(key_digest(values)):
            return None
        shown = ", ".join(f"{c}={v!r}" for c, v in zip(state.columns, values, strict=True))
        return f"duplicate key {shown}"


BUILTIN_TYPES = (MinRowsPerLoad, MaxRowsPerLoad, RequiredColumns, UniqueColumns)


@hookimpl
def dlt_ops_register_assertion_rules(register: Register[AssertionTypeProvider]) -> None:
    """Register the four built-in types (classes; the engine instantiates them)."""
    for cls in BUILTIN_TYPES:
        register(cls, name=cls.name)
