"""The fault figures in docs/reliability.md are the fault suite's own output, and still what
its tests run.

``docs/fault-figures.json`` is what the last full fault run wrote (``FAULTS_FIGURES_JSON``, with
the commit and seed it ran at); the doc's figures block is rendered from it. This check is fast:
it never runs the fault suite, it collects it (which scenarios exist) and reads the trial
counts the tests declare. Regenerate both files as ``tests/faults/figures.py`` says.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults import figures as fault_figures
from tests.faults.conftest import SEED

ROOT = Path(__file__).resolve().parents[1]
FIGURES_JSON = ROOT / "docs" / "fault-figures.json"
RELIABILITY = ROOT / "docs" / "reliability.md"
FAULT_TESTS = ("tests/faults", "tests/backfill/test_sigkill.py")
REGENERATE = "regenerate docs/fault-figures.json and the doc as tests/faults/figures.py says"


@pytest.fixture(scope="module")
def last_run() -> dict:
    return json.loads(FIGURES_JSON.read_text())


def _collected() -> set[tuple[str, str]]:
    """(family, scenario) of every fault test, as the ``figures`` fixture names them."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         *FAULT_TESTS],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    found = set()
    for line in proc.stdout.splitlines():
        if "::" not in line:
            continue
        path, name = line.split("::", 1)
        found.add((fault_figures.family_of(path), name.removeprefix("test_")))
    return found


def _declared_trials(family: str, scenario: str) -> int:
    """How many trials a scenario's test runs, from the constants it runs them by."""
    from tests.backfill import test_sigkill as backfill_sigkill
    from tests.faults import _sigkill as sigkill
    from tests.faults import (
        test_destination_outage,
        test_full_disk,
        test_hostile_input,
        test_readonly_project,
    )

    param = scenario.partition("[")[2].rstrip("]")
    if family == "sigkill":
        return sigkill.TRIALS
    if family == "backfill_sigkill":
        return backfill_sigkill.TRIALS[param]
    if family == "destination_outage":
        return len(test_destination_outage.SCENARIOS)
    if family == "full_disk":
        return test_full_disk.TRIALS
    if family == "hostile_input":  # generated examples, then 8 fixed payloads through 2 flags
        return int(param.split("-")[1]) + 2 * len(test_hostile_input.FIXED[:8])
    if family == "readonly_project":
        return len(test_readonly_project.READS) + len(test_readonly_project.WRITES)
    if family == "planted_secrets":
        return 1
    raise AssertionError(f"no trial count known for {family}/{scenario}: add it here")


def test_the_doc_shows_the_last_runs_figures(last_run: dict) -> None:
    block = fault_figures.block_of(RELIABILITY.read_text())
    assert block, f"docs/reliability.md has no {fault_figures.BEGIN!r} block"
    assert block == fault_figures.render(last_run), (
        f"the doc's figures are not the last run's: {REGENERATE}"
    )


def test_the_last_run_is_of_every_fault_test(last_run: dict) -> None:
    assert last_run["commit"], "the figures do not say which commit they were measured at"
    assert last_run["seed"] == SEED, "the figures were measured on another seed than CI runs"
    ran = {(f["family"], f["scenario"]) for f in last_run["figures"]}
    collected = _collected()
    assert ran == collected, (
        f"never run: {sorted(collected - ran)}; no longer a test: {sorted(ran - collected)}; "
        + REGENERATE
    )


def test_the_last_run_counted_the_trials_the_tests_declare(last_run: dict) -> None:
    for f in last_run["figures"]:
        declared = _declared_trials(f["family"], f["scenario"])
        assert f["trials"] == declared, (
            f"{f['family']}/{f['scenario']}: the last run counted {f['trials']} trials, the "
            f"test now runs {declared}; {REGENERATE}"
        )
        assert (f["lost"], f["duplicated"], f["leaked"]) == (0, 0, 0), f
