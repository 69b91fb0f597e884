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


@pytest.fixture(scope="session")
def airflow_deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A running ``AirflowDeployment`` (see ``dlt_ops.testing.airflow``: scheduler,
    dag-processor, api-server, LocalExecutor), one per session: starting it costs about a
    minute, so tests share it, each with DAG files of its own. Skipped when Airflow cannot be
    installed or started here, except with ``CI=true``, where that fails the tests."""
    from dlt_ops.testing.airflow import (
        AirflowDeployment,
        AirflowUnavailableError,
        ensure_airflow_venv,
    )

    work = Path(tmp_path_factory.mktemp("airflow-deployment"))
    deployment = None
    try:
        env = {**os.environ, "DLT_DATA_DIR": str(work / "dlt-data")}
        deployment = AirflowDeployment(ensure_airflow_venv(), work, env)
        deployment.start()
    except AirflowUnavailableError as exc:
        if deployment is not None:
            deployment.stop()
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(f"an Airflow deployment is required in CI: {exc}", pytrace=False)
        pytest.skip(f"no Airflow deployment: {exc}")
    try:
        yield deployment
    finally:
        deployment.stop()
