"""Fault figures: what one scenario of a fault family did, summed over its trials.

The ``figures`` fixture (``tests/faults/conftest.py``) hands each test a :class:`Figures` and puts
it into the test's report; the root ``conftest.py`` collects the reports and prints the lines in
the terminal summary. Going through reports keeps the figures when pytest-xdist runs the tests in
worker processes (the controller never loads ``tests/faults/conftest.py``).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: The ``user_properties`` key a test's figures travel under.
FIGURES_PROPERTY = "fault_figures"
#: Every scenario's figures, in the order their tests ended (filled in the controller).
FIGURES: list[Figures] = []


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


def collect(user_properties: list[tuple[str, Any]]) -> None:
    """Keep the figures a finished test's report carries."""
    for name, value in user_properties:
        if name == FIGURES_PROPERTY:
            FIGURES.append(Figures(**value))


def summary_lines() -> list[str]:
    """The summary's lines; also written as JSON to ``$FAULTS_FIGURES_JSON`` when set."""
    out = os.environ.get("FAULTS_FIGURES_JSON")
    if out and FIGURES:
        Path(out).write_text(json.dumps([asdict(f) for f in FIGURES], indent=2))
    return [fig.line() for fig in FIGURES]
