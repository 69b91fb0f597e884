"""Every hook is documented, in code and in docs/hooks.md."""

from __future__ import annotations

import collections.abc
import importlib
import inspect
import re
import types
import typing
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


def _render(contract: object) -> str:
    """``Callable[[A], B]`` as ``(A) -> B``; a union as ``A | type[A]``; a class by name."""
    origin, args = typing.get_origin(contract), typing.get_args(contract)
    if origin is collections.abc.Callable:
        params, result = args
        return f"({', '.join(_render(p) for p in params)}) -> {_render(result)}"
    if origin in (types.UnionType, typing.Union):
        return " | ".join(_render(a) for a in args)
    if origin is type:
        return f"type[{_render(args[0])}]"
    return str(getattr(contract, "__name__", contract))


def _documented_registrations() -> dict[str, str]:
    """``{hook: the code span after 'factory'/'type'}`` from the registration table."""
    rows = {}
    for line in DOCS.read_text().splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        hook = re.match(r"`(dlt_ops_register_\w+)\(register\)`", cells[0]) if cells else None
        if hook:
            found = re.search(r"(?:factory|type) `([^`]+)`", cells[2])
            assert found, f"{hook.group(1)}: no factory/type signature in docs/hooks.md"
            rows[hook.group(1)] = found.group(1).replace("\\|", "|")
    return rows


def test_documented_registrations_match_the_protocols() -> None:
    from dlt_ops.plugin_api import TYPED_KINDS

    documented = _documented_registrations()
    assert set(documented) == set(KIND_HOOKS.values())
    assert set(TYPED_KINDS) == set(KIND_HOOKS), "every kind with a hook has a typed key"
    for kind, typed in TYPED_KINDS.items():
        assert documented[KIND_HOOKS[kind]] == _render(typed.contract), kind


def test_hookspecs_type_register_with_the_kind_contract() -> None:
    from dlt_ops.plugin_api import TYPED_KINDS

    for kind, typed in TYPED_KINDS.items():
        spec = getattr(hookspecs, KIND_HOOKS[kind])
        annotation = inspect.signature(spec).parameters["register"].annotation
        alias = next(
            name
            for name, value in vars(importlib.import_module("dlt_ops.plugin_api")).items()
            if value is typed.contract
        )
        assert annotation == f"Register[{alias}]", kind


def test_every_type_a_hook_receives_or_returns_is_in_plugin_api() -> None:
    from dlt_ops import plugin_api

    exported = set(plugin_api.__all__)
    for name in HOOKS:
        fn = getattr(hookspecs, name)
        # resolvable from plugin_api's namespace alone, and each name in its __all__
        typing.get_type_hints(fn, globalns=vars(plugin_api))
        named = {
            word
            for annotation in fn.__annotations__.values()
            for word in re.findall(r"[A-Za-z_]\w*", str(annotation))
        } - {"None"}
        assert named <= exported, f"{name}: {sorted(named - exported)} not in plugin_api"


def test_plugin_api_version_is_exported_and_documented() -> None:
    from dlt_ops import plugin_api

    major, minor = plugin_api.PLUGIN_API_VERSION.split(".")
    assert major.isdigit() and minor.isdigit()
    assert "PLUGIN_API_VERSION" in plugin_api.__all__
    assert f'PLUGIN_API_VERSION` (`"{plugin_api.PLUGIN_API_VERSION}"`)' in DOCS.read_text()


def test_the_module_docstring_and_plugins_md_name_every_group() -> None:
    from dlt_ops.plugins import KINDS

    plugins_md = (DOCS.parent / "plugins.md").read_text()
    for kind in KINDS:
        assert f"``dlt_ops.{kind}``" in (hookspecs.__doc__ or ""), kind
        assert f"`dlt_ops.{kind}`" in plugins_md, kind
