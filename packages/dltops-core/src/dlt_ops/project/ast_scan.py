"""Phase 1: read a module's AST and record the facts discovery and the rules need.

Never imports the module. Import aliases are followed (``import dlt as d``,
``from dlt import source``, ``from dlt.sources import incremental``), so detection does not
depend on the module spelling ``dlt.source`` literally (a reference weak spot).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from dlt_ops.project.model import (
    CallSite,
    ColumnsRef,
    ContractDecl,
    IncrementalDecl,
    ModuleFacts,
    ResourceDef,
    SourceDecl,
)

_SOURCE = {"dlt.source"}
_RESOURCE = {"dlt.resource", "dlt.transformer"}
_INCREMENTAL = {
    "dlt.sources.incremental",
    "dlt.extract.incremental.Incremental",
    "dlt.extract.Incremental",
}
#: dlt names its per-destination table-hint helpers ``<destination>_adapter``; rules of a
#: destination's plugin pick their own helper's calls by name
_HINT_HELPER_SUFFIX = "_adapter"
NON_LITERAL = "<non-literal>"


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name → canonical dotted name, from every import statement in the module."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    top = a.name.split(".")[0]
                    out[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _canon(node: ast.AST, aliases: dict[str, str]) -> str | None:
    if isinstance(node, ast.Name):
        return aliases.get(node.id, node.id)
    if isinstance(node, ast.Attribute):
        base = _canon(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Subscript):  # incremental[datetime](...)
        return _canon(node.value, aliases)
    if isinstance(node, ast.Call):
        return _canon(node.func, aliases)
    return None


def _terminal(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    args = node.args
    return tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))


def _kw(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _literal(node: ast.expr | None) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return NON_LITERAL


def _str_literal(node: ast.expr | None) -> str | None:
    value = _literal(node)
    return value if isinstance(value, str) and value != NON_LITERAL else None


def _columns_ref(node: ast.expr | None) -> ColumnsRef | None:
    if node is None:
        return None
    if isinstance(node, ast.Name):
        return ColumnsRef("name", node.id)
    if isinstance(node, ast.Attribute):
        return ColumnsRef("attribute", ast.unparse(node))
    return ColumnsRef("other", ast.unparse(node)[:80])


class _Scanner(ast.NodeVisitor):
    def __init__(self, path: Path, text: str, tree: ast.Module) -> None:
        self.path = path
        self.lines = text.splitlines()
        self.aliases = _aliases(tree)
        self.sources: list[SourceDecl] = []
        self.resources: list[ResourceDef] = []
        self.contracts: list[ContractDecl] = []
        self.incrementals: list[IncrementalDecl] = []
        self.calls: list[CallSite] = []
        self.uses_checkpoints = False
        self._top: str | None = None
        self._decorators: set[int] = set()

    def _is(self, node: ast.AST, names: set[str]) -> bool:
        return _canon(node, self.aliases) in names

    def _contract(self, call: ast.Call, owner: str | None) -> Any:
        node = _kw(call, "schema_contract")
        if node is None:
            return None
        value = _literal(node)
        self.contracts.append(ContractDecl(self.path, call.lineno, value, owner))
        return value

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, top_level: bool) -> None:
        for dec in node.decorator_list:
            self._decorators.add(id(dec))
            if _terminal(dec) == "with_checkpoints":
                self.uses_checkpoints = True
            call = dec if isinstance(dec, ast.Call) else None
            if top_level and self._is(dec, _SOURCE):
                name_node = _kw(call, "name") if call else None
                self.sources.append(
                    SourceDecl(
                        function_name=node.name,
                        explicit_name=_str_literal(name_node),
                        has_name_kwarg=name_node is not None,
                        lineno=node.lineno,
                        secret_defaults=self._secret_defaults(node),
                        params=_params(node),
                    )
                )
                if call:
                    self._contract(call, node.name)
            elif self._is(dec, _RESOURCE):
                name_node = _kw(call, "name") if call else None
                contract = self._contract(call, self._top or node.name) if call else None
                self.resources.append(
                    ResourceDef(
                        name=_str_literal(name_node) or node.name,
                        function_name=node.name,
                        file=self.path,
                        lineno=node.lineno,
                        has_name_kwarg=name_node is not None,
                        columns=_columns_ref(_kw(call, "columns")) if call else None,
                        schema_contract=contract,
                    )
                )

    def _secret_defaults(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
        return any((_canon(d, self.aliases) or "").startswith("dlt.secrets") for d in defaults)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:  # noqa: N802 - ast API
        top_level = self._top is None
        self._function(node, top_level)
        if top_level:
            self._top = node.name
            self.generic_visit(node)
            self._top = None
        else:
            self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]  # noqa: N815

    def visit_Call(self, node: ast.Call) -> None:  # noqa: N802 - ast API
        if _terminal(node.func) == "rest_api_checkpoints":  # the declarative checkpoint helper
            self.uses_checkpoints = True
        if id(node) not in self._decorators:
            canon = _canon(node.func, self.aliases)
            if canon in _RESOURCE and node.args:  # dlt.resource(data, name=...)
                data = node.args[0]
                name = _str_literal(_kw(node, "name"))
                if name is None and isinstance(data, ast.Name):
                    name = data.id
                self.resources.append(
                    ResourceDef(
                        name=name or f"<line {node.lineno}>",
                        function_name=None,
                        file=self.path,
                        lineno=node.lineno,
                        has_name_kwarg=_kw(node, "name") is not None,
                        columns=_columns_ref(_kw(node, "columns")),
                        schema_contract=self._contract(node, self._top),
                    )
                )
            elif canon in _INCREMENTAL or (canon or "").endswith(".apply_hints"):
                if canon in _INCREMENTAL:
                    first = node.args[0] if node.args else _kw(node, "cursor_path")
                    self.incrementals.append(
                        IncrementalDecl(self.path, node.lineno, _str_literal(first))
                    )
                else:
                    self._contract(node, self._top)
            elif (_terminal(node) or "").endswith(_HINT_HELPER_SUFFIX):
                above = tuple(
                    self.lines[i].strip()
                    for i in (node.lineno - 3, node.lineno - 2)
                    if 0 <= i < len(self.lines) and self.lines[i].strip().startswith("#")
                )
                self.calls.append(
                    CallSite(
                        self.path,
                        node.lineno,
                        frozenset(k.arg for k in node.keywords if k.arg),
                        above,
                        name=_terminal(node) or "",
                    )
                )
        self.generic_visit(node)


def scan_text(path: Path, text: str) -> ModuleFacts:
    """Facts about one module's source text (``error`` set when it does not parse)."""
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        return ModuleFacts(
            path, error=f"module could not be parsed: SyntaxError: {exc.msg} (line {exc.lineno})"
        )
    except ValueError as exc:  # null bytes
        return ModuleFacts(path, error=f"module could not be parsed: {exc}")
    scanner = _Scanner(path, text, tree)
    scanner.visit(tree)
    return ModuleFacts(
        path=path,
        sources=tuple(scanner.sources),
        resources=tuple(scanner.resources),
        contracts=tuple(scanner.contracts),
        incrementals=tuple(scanner.incrementals),
        calls=tuple(scanner.calls),
        uses_checkpoints=scanner.uses_checkpoints,
    )


def scan_file(path: Path) -> ModuleFacts:
    """Read and scan ``path``; unreadable or undecodable files yield ``error``."""
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return ModuleFacts(path, error=f"module could not be read: {exc}")
    return scan_text(path, text)
