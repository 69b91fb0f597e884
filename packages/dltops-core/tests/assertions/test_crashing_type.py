"""An assertion type that raises, in any phase: the run fails (exit 1), the error names the type
and its plugin, and nothing of that run ever loads — the next run loads only its own rows."""

from __future__ import annotations

from types import ModuleType

import pytest

from dlt_ops import hookimpl

from .conftest import rows


def _crashing(phase: str, row_scoped: bool) -> type:
    class Crashing:
        name = "crashing"

        def _maybe(self, here: str) -> None:
            if here == phase:
                raise ZeroDivisionError(f"bug in crashing.{here}")

        def check_config(self, params, ctx):  # noqa: ANN001, ANN201
            self._maybe("check_config")
            return []

        def start(self, params):  # noqa: ANN001, ANN201
            self._maybe("start")
            return None

        def observe(self, state, row, params):  # noqa: ANN001, ANN201
            self._maybe("observe")
            return None

        def finalize(self, state, params):  # noqa: ANN001, ANN201
            self._maybe("finalize")
            return None

    Crashing.row_scoped = row_scoped  # finalize is a batch type's verdict
    return Crashing


def _registry(phase: str, row_scoped: bool):  # noqa: ANN202
    from dlt_ops.plugins import PluginRegistry

    @hookimpl
    def dlt_ops_register_assertion_rules(register) -> None:  # noqa: ANN001
        register(_crashing(phase, row_scoped), name="crashing")

    plugin = ModuleType("acme_crashing_assertions")
    plugin.dlt_ops_register_assertion_rules = dlt_ops_register_assertion_rules  # type: ignore[attr-defined]
    registry = PluginRegistry()
    registry.add_plugin(plugin, name="acme_crashing", kind="assertion_rule")
    return registry


@pytest.mark.parametrize(
    ("phase", "row_scoped"),
    [("check_config", True), ("start", True), ("observe", True), ("start", False),
     ("finalize", False)],
)  # fmt: skip
def test_a_crashing_type_fails_the_run_and_loads_nothing(
    make_project, phase: str, row_scoped: bool
) -> None:
    from dlt_ops.errors import DltOpsError

    p = make_project().configure("""
        [sources.src.dlt_ops.assertions.events]
        crashing = { value = true, on_failure = "warn" }
    """)
    p.data(rows(1, 2, 3))
    try:
        outcome = p.run(registry=_registry(phase, row_scoped))
    except DltOpsError as exc:  # refused before the run started (a config check crashed)
        assert phase == "check_config", exc
        message = str(exc)
    else:
        assert outcome.error is not None and outcome.record.status == "failed"
        message = outcome.record.error_summary
    assert "crashing" in message and "acme_crashing" in message, message
    assert f"bug in crashing.{phase}" in message, message

    # the next run, without the broken type, loads its own rows and only those
    p.configure()
    p.data(rows(10, 11))
    again = p.run()
    assert again.ok, again.error
    assert p.duck("SELECT id FROM ds.events ORDER BY id") == [(10,), (11,)]
    assert again.record.records_loaded == 2
