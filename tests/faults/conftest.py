"""The fault-injection suite: real faults against real servers, each family printing its figures.

Every test here is marked ``faults`` (run the suite alone with ``pytest -m faults tests/faults``)
and is part of README command 2. A family records one :class:`Figures` line per scenario —
trials, rows expected, loaded, lost, duplicated, leaked — asserts the bad ones are zero, and the
lines are printed in the terminal summary (the table in docs/reliability.md is copied from it).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pytest

FIGURES: list[Figures] = []
FIGURES_PROPERTY = "fault_figures"
#: Fixed seed so CI runs the same trials every time; override to explore (FAULTS_SEED=...).
SEED = int(os.environ.get("FAULTS_SEED", "20261130"))


@dataclass
class Figures:
    """What one scenario of a fault family did, summed over its trials."""

    family: str
    scenario: str
    trials: int = 0
    expected: int = 0
    loaded: int = 0
    lost: int = 0
    duplicated: int = 0
    leaked: int = 0
    notes: list[str] = field(default_factory=list)

    def add(self, *, expected: int = 0, loaded: int = 0, distinct: int | None = None) -> None:
        """Count one trial: ``loaded`` rows in the table, ``distinct`` of them distinct ids."""
        distinct = loaded if distinct is None else distinct
        self.trials += 1
        self.expected += expected
        self.loaded += loaded
        self.lost += max(expected - distinct, 0)
        self.duplicated += loaded - distinct

    def check(self) -> None:
        """Nothing lost, duplicated or leaked, and at least one trial ran."""
        assert self.trials > 0, f"{self.family}/{self.scenario}: no trial ran"
        assert (self.lost, self.duplicated, self.leaked) == (0, 0, 0), self.line()

    def line(self) -> str:
        return (
            f"{self.family:<22} {self.scenario:<34} trials={self.trials:<3} "
            f"expected={self.expected:<7} loaded={self.loaded:<7} lost={self.lost} "
            f"duplicated={self.duplicated} leaked={self.leaked}"
            + (f"  ({'; '.join(self.notes)})" if self.notes else "")
        )


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Iterator[Figures]:
    """A fresh :class:`Figures` for the calling test, reported at the end of the session."""
    family = Path(str(request.node.fspath)).stem.removeprefix("test_")
    fig = Figures(family=family, scenario=request.node.name.removeprefix("test_"))
    yield fig
    # through the test's report, so the figures reach the summary from pytest-xdist workers too
    request.node.user_properties.append((FIGURES_PROPERTY, asdict(fig)))


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> random.Random:
    """A random generator seeded per test, so a failing trial can be replayed."""
    return random.Random(f"{SEED}:{request.node.nodeid}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.faults)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "teardown":
        return
    for name, value in report.user_properties:
        if name == FIGURES_PROPERTY:
            FIGURES.append(Figures(**value))


def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001
    if not FIGURES:
        return
    terminalreporter.section("fault-injection figures")
    for fig in FIGURES:
        terminalreporter.write_line(fig.line())
    out = os.environ.get("FAULTS_FIGURES_JSON")
    if out:
        Path(out).write_text(json.dumps([asdict(f) for f in FIGURES], indent=2))
