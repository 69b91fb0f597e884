"""Fault figures: what one scenario of a fault family did, summed over its trials.

The ``figures`` fixture (``tests/faults/conftest.py``) hands each test a :class:`Figures` and puts
it into the test's report; the root ``conftest.py`` collects the reports and prints the lines in
the terminal summary. Going through reports keeps the figures when pytest-xdist runs the tests in
worker processes (the controller never loads ``tests/faults/conftest.py``).

``FAULTS_FIGURES_JSON=<file>`` also writes them, with the commit and seed they were measured
at, as JSON. ``docs/fault-figures.json`` is that file from the last full run, and the figures
table in docs/reliability.md is rendered from it (``python -m tests.faults.figures``);
``tests/test_fault_figures_gate.py`` fails when the two disagree or when the fault tests now
declare other trials than that run counted. To regenerate (slow: the whole fault suite)::

    FAULTS_FIGURES_JSON=docs/fault-figures.json .venv/bin/python -m pytest \
        tests/faults tests/backfill/test_sigkill.py
    .venv/bin/python -m tests.faults.figures docs/fault-figures.json docs/reliability.md
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: The ``user_properties`` key a test's figures travel under.
FIGURES_PROPERTY = "fault_figures"
#: Every scenario's figures, in the order their tests ended (filled in the controller).
FIGURES: list[Figures] = []
#: A family split into one test file per engine keeps one name (see :func:`family_of`).
ENGINE_SUFFIXES = ("_duckdb", "_postgres")


def family_of(path: str | Path) -> str:
    """The fault family a test file's scenarios belong to: the file's name without ``test_``
    (``backfill_`` in front under ``tests/backfill``). A family split into one file per engine
    (``test_sigkill_duckdb.py`` and ``test_sigkill_postgres.py``, so ``--dist loadfile`` runs
    the halves on two workers) is still one family."""
    path = Path(path)
    family = path.stem.removeprefix("test_")
    for suffix in ENGINE_SUFFIXES:
        family = family.removesuffix(suffix)
    return f"backfill_{family}" if path.parent.name == "backfill" else family


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
    measured_at()  # the commit the run started from, not the one it ends at
    for name, value in user_properties:
        if name == FIGURES_PROPERTY:
            FIGURES.append(Figures(**value))


def summary_lines() -> list[str]:
    """The summary's lines; also written as JSON to ``$FAULTS_FIGURES_JSON`` when set."""
    out = os.environ.get("FAULTS_FIGURES_JSON")
    if out and FIGURES:
        Path(out).write_text(json.dumps(document(FIGURES), indent=2) + "\n")
    return [fig.line() for fig in FIGURES]


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], capture_output=True, text=True, timeout=10)
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


@functools.cache
def measured_at() -> tuple[str | None, bool]:
    """The commit the run measures (asked once, when its first figures arrive) and whether
    tracked files differed from it."""
    dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
    return _git("rev-parse", "--short", "HEAD") or None, dirty


def document(figures: list[Figures]) -> dict[str, Any]:
    """What a run measured, and where: the commit (and whether tracked files differed from
    it), the seed, and every scenario's figures in a stable order (xdist finishes at random)."""
    commit, dirty = measured_at()
    return {
        "commit": commit,
        "dirty": dirty,
        "seed": int(os.environ.get("FAULTS_SEED", "20261130")),  # tests/faults/conftest.py
        "figures": sorted((asdict(f) for f in figures), key=lambda f: (f["family"], f["scenario"])),
    }


#: How the doc names each scenario (anything else shows as ``family · scenario``).
LABELS = {
    ("sigkill", "sigkill_then_rerun[duckdb-plain]"): "sigkill · DuckDB · plain",
    ("sigkill", "sigkill_then_rerun[duckdb-checkpointed]"): "sigkill · DuckDB · checkpointed",
    ("sigkill", "sigkill_then_rerun[postgres-plain]"): "sigkill · PostgreSQL · plain",
    ("sigkill", "sigkill_then_rerun[postgres-checkpointed]"): "sigkill · PostgreSQL · checkpointed",
    ("backfill_sigkill", "sigkill_trials[duckdb]"): "backfill SIGKILL · DuckDB",
    ("backfill_sigkill", "sigkill_trials[postgres]"): "backfill SIGKILL · PostgreSQL",
    ("destination_outage", "destination_goes_away_mid_run[stopped]"): "outage · stopped",
    ("destination_outage", "destination_goes_away_mid_run[frozen]"): "outage · frozen",
    ("full_disk", "full_disk_after_commit[duckdb]"): "full disk after a commit · DuckDB",
    ("full_disk", "full_disk_after_commit[postgres]"): "full disk after a commit · PostgreSQL",
    ("hostile_input", "hostile_values_never_reach_sql[duckdb-28]"): "hostile input · DuckDB",
    ("hostile_input", "hostile_values_never_reach_sql[postgres-14]"): "hostile input · PostgreSQL",
    ("planted_secrets", "planted_secrets_appear_nowhere"): "planted secrets",
    ("readonly_project", "read_only_project[duckdb]"): "read-only project · DuckDB",
    ("readonly_project", "read_only_project[postgres]"): "read-only project · PostgreSQL",
}
BEGIN = "<!-- fault-figures: rendered from docs/fault-figures.json; do not edit by hand -->"
END = "<!-- /fault-figures -->"


def render(doc: dict[str, Any]) -> str:
    """The figures block of docs/reliability.md, from a :func:`document`."""
    state = " (with uncommitted changes)" if doc["dirty"] else ""
    lines = [
        BEGIN,
        f"Measured at commit `{doc['commit']}`{state}, seed `{doc['seed']}`.",
        "",
        "| family / scenario | trials | rows expected | loaded | lost | duplicated | leaked |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for f in doc["figures"]:
        rows = f["expected"] or f["loaded"]
        counts = [
            f"{f[k]:,}" if rows else "–" for k in ("expected", "loaded", "lost", "duplicated")
        ]
        label = LABELS.get((f["family"], f["scenario"]), f"{f['family']} · {f['scenario']}")
        lines.append(f"| {label} | {f['trials']} | " + " | ".join(counts) + f" | {f['leaked']} |")
    return "\n".join([*lines, END])


def block_of(text: str) -> str:
    """The rendered figures block inside a document's text ("" when there is none)."""
    start, end = text.find(BEGIN), text.find(END)
    return text[start : end + len(END)] if 0 <= start < end else ""


def main(argv: list[str]) -> int:
    """``python -m tests.faults.figures FIGURES_JSON DOC``: render the JSON into DOC."""
    source, target = Path(argv[0]), Path(argv[1])
    text = target.read_text()
    old = block_of(text)
    if not old:
        sys.stderr.write(f"{target} has no {BEGIN!r} ... {END!r} block\n")
        return 1
    target.write_text(text.replace(old, render(json.loads(source.read_text()))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
