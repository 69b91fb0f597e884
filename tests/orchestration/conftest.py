"""Airflow for the orchestration tests: its own cached venv and a throwaway metadata DB."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def airflow_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """An ``AirflowHome`` (see ``dlt_ops.testing.airflow``); skipped when Airflow cannot be
    installed here, except with ``CI=true``, where that fails the tests that need it."""
    from dlt_ops.testing.airflow import AirflowHome, AirflowUnavailableError

    try:
        yield AirflowHome.create(Path(tmp_path_factory.mktemp("airflow-home")))
    except AirflowUnavailableError as exc:
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(f"Airflow is required in CI and unavailable: {exc}", pytrace=False)
        pytest.skip(f"Airflow unavailable: {exc}")


@pytest.fixture(scope="session")
def dagster_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A ``DagsterEnv`` (see ``dlt_ops.testing.dagster``); skipped when Dagster cannot be
    installed here, except with ``CI=true``, where that fails the tests that need it."""
    from dlt_ops.testing.dagster import DagsterEnv, DagsterUnavailableError

    try:
        yield DagsterEnv.create(Path(tmp_path_factory.mktemp("dagster-home")))
    except DagsterUnavailableError as exc:
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(f"Dagster is required in CI and unavailable: {exc}", pytrace=False)
        pytest.skip(f"Dagster unavailable: {exc}")
