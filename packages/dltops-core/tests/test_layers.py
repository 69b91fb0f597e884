"""The import graph of ``dlt_ops`` keeps the layers of docs/architecture.md.

Every ``import`` counts, including the ones inside functions and under ``TYPE_CHECKING``: a lazy
import still ties two packages together. The check is on the source text, so nothing is run.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import dlt_ops

PACKAGE_ROOT = Path(dlt_ops.__file__).parent

#: docs/architecture.md's table, ground first; a package may import its own layer or below.
LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(names.split())
    for names in (
        "errors redact log clock cron liveness jsonl atomic_file tables working_state fast_exit"
        " names",
        "plugins",
        "config adapters dlt_schema",
        "destinations secrets alerts triggers isolation _preload",
        "project doctor scaffold",
        "target",
        "validate",
        "ledger",
        "runner",
        "receipts assertions checkpoints backfill reconcile clean scheduler lineage",
        "orchestration airflow dagster report metrics compat migrate pydantic_fields",
        "builtin hookspecs plugin_api",
        "cli testing",
    )
)


def _unit_of(path: Path) -> str:
    return path.relative_to(PACKAGE_ROOT).parts[0].removesuffix(".py")


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _package_of(path: Path) -> str:
    module = _module_of(path)
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _imported_modules(path: Path, package: str | None = None) -> set[str]:
    """Every ``dlt_ops`` module ``path`` names in an import, relative imports resolved."""
    package = package or _package_of(path)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in found if name.startswith("dlt_ops.")}


def _source_files() -> list[Path]:
    return sorted(PACKAGE_ROOT.rglob("*.py"))


def _known_modules() -> dict[str, Path]:
    return {_module_of(path): path for path in _source_files()}


def _unit_edges() -> dict[tuple[str, str], list[str]]:
    """``(from unit, to unit)`` -> the files that make that arrow."""
    units = {_unit_of(path) for path in _source_files()} - {"__init__"}
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in _source_files():
        source = _unit_of(path)
        for module in _imported_modules(path):
            target = module.split(".")[1]
            if target in units and target != source and source != "__init__":
                edges[(source, target)].append(str(path.relative_to(PACKAGE_ROOT)))
    return edges


def _layer_of(unit: str) -> int:
    for rank, names in enumerate(LAYERS):
        if unit in names:
            return rank
    raise AssertionError(f"dlt_ops.{unit} is in no layer: add it to LAYERS and to the docs table")


def test_every_package_has_a_layer() -> None:
    for path in _source_files():
        if path.name != "__init__.py" or path.parent != PACKAGE_ROOT:
            _layer_of(_unit_of(path))


def test_no_import_runs_back_up_the_layers() -> None:
    upward = [
        f"{source} (layer {_layer_of(source)}) -> {target} (layer {_layer_of(target)}) in {files}"
        for (source, target), files in sorted(_unit_edges().items())
        if _layer_of(target) > _layer_of(source)
    ]
    assert upward == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative enough here)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_cycle_of_packages() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for source, target in _unit_edges():
        graph[source].add(target)
    assert _cycles(graph) == []


def test_no_cycle_of_files() -> None:
    known = _known_modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in known.items():
        for name in _imported_modules(path):
            # ``from pkg import name`` names a module only when such a file exists
            if name in known and name != module and known[name].name != "__init__.py":
                graph[module].add(name)
    assert _cycles(graph) == []


def test_the_check_sees_a_planted_upward_import(tmp_path: Path) -> None:
    planted = tmp_path / "probe.py"
    planted.write_text(
        "def f():\n    from dlt_ops.cli.app import app\n    from ..report import html\n"
    )
    found = _imported_modules(planted, package="dlt_ops.runner")
    assert {"dlt_ops.cli.app", "dlt_ops.report.html"} <= found
