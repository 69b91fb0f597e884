"""Every hook is documented, in code and in docs/hooks.md."""

from __future__ import annotations

import inspect
from pathlib import Path

from dlt_ops import hookspecs
from dlt_ops.plugins import KIND_HOOKS

HOOKS = [
    name
    for name, obj in vars(hookspecs).items()
    if name.startswith("dlt_ops_") and inspect.isfunction(obj)
]
DOCS = Path(__file__).resolve().parents[3] / "docs" / "hooks.md"


def test_there_are_hooks() -> None:
    assert {
        "dlt_ops_register_destinations",
        "dlt_ops_register_ledger_sinks",
        "dlt_ops_register_assertion_rules",
        "dlt_ops_register_trigger_emitters",
    } <= set(HOOKS)


def test_every_hook_has_a_full_docstring() -> None:
    for name in HOOKS:
        doc = inspect.getdoc(getattr(hookspecs, name)) or ""
        assert len(doc.splitlines()) >= 3, f"{name} lacks a full docstring"
        assert "Called" in doc, f"{name}: say when it is called"
        assert "Returns" in doc, f"{name}: say what it returns"


def test_every_hook_is_marked_as_a_spec() -> None:
    for name in HOOKS:
        assert hasattr(getattr(hookspecs, name), "dlt_ops_spec"), name


def test_every_kind_maps_to_a_real_hook() -> None:
    assert set(KIND_HOOKS.values()) <= set(HOOKS)


def test_every_hook_is_documented_in_docs() -> None:
    text = DOCS.read_text()
    for name in HOOKS:
        assert f"`{name}" in text, f"{name} missing from docs/hooks.md"
