"""Shared fixtures for the BigQuery adapter tests: targets on the emulator or real BigQuery."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from dlt_ops.adapters import ConnectionTarget
from dlt_ops.config.credentials import resolve_credentials


def emulator_target(emulator: Any, dataset: str, root: Path, **options: object) -> ConnectionTarget:
    """A connection target on the session's emulator (anonymous, short timeouts)."""
    return ConnectionTarget(
        "bigquery",
        dataset,
        root,
        credentials={"project_id": emulator.project},
        connect_timeout_s=10.0,
        options={**emulator.connection_options(), "query_timeout_s": 60.0, **options},
    )


def live_target(dataset: str, root: Path) -> ConnectionTarget | None:
    """A target on real BigQuery, or ``None`` when the live lane is not configured.

    Needs ``DLTOPS_TEST_BIGQUERY_PROJECT`` and credentials, either dlt's
    ``DESTINATION__BIGQUERY__CREDENTIALS__*`` variables or ``GOOGLE_APPLICATION_CREDENTIALS``;
    ``DLTOPS_TEST_BIGQUERY_LOCATION`` picks the location (default: BigQuery's).
    """
    project = os.environ.get("DLTOPS_TEST_BIGQUERY_PROJECT")
    credentials = resolve_credentials(root, "bigquery")
    has_key = isinstance(credentials, str) or (
        isinstance(credentials, dict) and bool(credentials.get("private_key"))
    )
    if not project or not (has_key or os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")):
        return None
    options: dict[str, object] = {"project": project, "query_timeout_s": 120.0}
    if os.environ.get("DLTOPS_TEST_BIGQUERY_LOCATION"):
        options["location"] = os.environ["DLTOPS_TEST_BIGQUERY_LOCATION"]
    return ConnectionTarget(
        "bigquery", dataset, root, credentials=credentials, connect_timeout_s=30.0, options=options
    )


@pytest.fixture(params=["emulator", pytest.param("live", marks=pytest.mark.live)])
def bigquery_target_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """``factory(dataset) -> ConnectionTarget`` on the emulator or, in the live lane, BigQuery."""
    if request.param == "live":
        if live_target("probe", tmp_path) is None:
            pytest.skip("live BigQuery lane: set DLTOPS_TEST_BIGQUERY_PROJECT and credentials")
        return lambda dataset: live_target(dataset, tmp_path)
    emulator = request.getfixturevalue("bigquery_emulator")
    return lambda dataset: emulator_target(emulator, dataset, tmp_path)


@pytest.fixture(autouse=True)
def _no_ambient_google_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    """Real ``google.auth.default()`` probes a metadata server off this machine: forbid it.

    The live lane with ``GOOGLE_APPLICATION_CREDENTIALS`` reads that file instead, which is
    safe, so it is let through there.
    """
    import google.auth

    real_default = google.auth.default

    def guarded(*args: Any, **kwargs: Any) -> Any:
        if os.environ.get("GOOGLE_APPLICATION_CREDENTIALS"):
            return real_default(*args, **kwargs)
        raise AssertionError("google.auth.default() called in a test without credentials")

    monkeypatch.setattr(google.auth, "default", guarded)
