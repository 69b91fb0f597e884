"""The fault-injection suite: real faults against real servers, each family printing its figures.

Every test here is marked ``faults`` (run the suite alone with ``pytest -m faults tests/faults``)
and is part of README command 2. A family records one :class:`Figures` line per scenario —
trials, rows expected, loaded, lost, duplicated, leaked — asserts the bad ones are zero, and the
lines are printed in the terminal summary (the table in docs/reliability.md is copied from it).
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from tests.faults.figures import FIGURES_PROPERTY, Figures, family_of

#: Fixed seed so CI runs the same trials every time; override to explore (FAULTS_SEED=...).
SEED = int(os.environ.get("FAULTS_SEED", "20261130"))


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Iterator[Figures]:
    """A fresh :class:`Figures` for the calling test, reported at the end of the session."""
    fig = Figures(
        family=family_of(request.node.fspath), scenario=request.node.name.removeprefix("test_")
    )
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
