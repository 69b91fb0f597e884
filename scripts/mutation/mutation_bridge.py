"""pytest plugin of the mutation lane (loaded with ``-p mutation_bridge`` from [tool.mutmut]).

While mutmut collects stats it (1) adds the hits that CLI subprocesses recorded (see
``sitecustomize``) and (2) keeps, for each module listed in ``[tool.dltops-mutation.tests]``,
only the tests in that module's files: a mutant then runs the tests that guard its module and
reach its function, not every end-to-end test that happens to pass through it.
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from pathlib import Path

import pytest


def _module_tests() -> dict[str, list[str]]:
    data = tomllib.loads(Path("pyproject.toml").read_text("utf-8"))
    return data.get("tool", {}).get("dltops-mutation", {}).get("tests", {})


def _allowed(test: str, files: list[str]) -> bool:
    path = test.split("::", 1)[0]
    return any(
        path == f or path.startswith(f.rstrip("/") + "/") or fnmatch.fnmatch(path, f) for f in files
    )


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    from mutmut.mutation.trampoline import get_mutant_under_test
    from mutmut.state import state

    if get_mutant_under_test() != "stats":
        return
    tests_by_function = state().tests_by_mangled_function_name
    hits = os.environ.get("DLTOPS_MUTATION_HITS")
    if hits:
        for tsv in Path(hits).glob("*.tsv"):
            for line in tsv.read_text("utf-8").splitlines():
                test, _, function = line.partition("\t")
                tests_by_function[function].add(test)
            tsv.unlink()
    mapping = _module_tests()
    for function, tests in tests_by_function.items():
        module = function.rsplit(".", 1)[0]
        if module in mapping:
            tests_by_function[function] = {t for t in tests if _allowed(t, mapping[module])}
