"""The published shape works: wheels built from the workspace install into a clean venv.

``uv build --all-packages --no-sources`` builds every distribution as users get it (no
workspace paths), ``dltops-core`` and ``dltops-postgres`` go into a fresh virtualenv from those
wheels (their dependencies from the package index), and the installed CLI sees exactly the
adapters that were installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _uv() -> list[str]:
    found = shutil.which("uv")
    if found:
        return [found]
    for python in ("python3", sys.executable):
        probe = subprocess.run([python, "-m", "uv", "--version"], capture_output=True)
        if probe.returncode == 0:
            return [python, "-m", "uv"]
    pytest.fail("uv is required to build the wheels: `pip install uv`", pytrace=False)


def _run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kwargs)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}"
    return done


def test_core_and_postgres_wheels_install_and_list_only_postgres(tmp_path: Path) -> None:
    uv = _uv()
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "RUNTIME__DLTHUB_TELEMETRY": "false"}
    env.pop("VIRTUAL_ENV", None)
    wheels = tmp_path / "wheels"
    _run([*uv, "build", "--all-packages", "--no-sources", "--wheel", "-o", str(wheels)],
         cwd=REPO, env=env)  # fmt: skip
    built = sorted(p.name.split("-")[0] for p in wheels.glob("*.whl"))
    assert built == ["dltops_bigquery", "dltops_core", "dltops_duckdb", "dltops_postgres"]

    venv = tmp_path / "venv"
    _run([*uv, "venv", "-q", "-p", "3.11", str(venv)], cwd=tmp_path, env=env)
    python = venv / "bin" / "python"
    exclude_newer = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["uv"][
        "exclude-newer"
    ]
    _run(
        [*uv, "pip", "install", "-q", "-p", str(python), "--find-links", str(wheels),
         "--exclude-newer", exclude_newer,
         *(str(w) for w in wheels.glob("dltops_core-*.whl")),
         *(str(w) for w in wheels.glob("dltops_postgres-*.whl"))],
        cwd=tmp_path, env=env,
    )  # fmt: skip

    # Installed from the wheels, not from the workspace.
    where = _run([str(python), "-c", "import dlt_ops, dltops_postgres; print(dlt_ops.__file__)"],
                 cwd=tmp_path, env=env)  # fmt: skip
    assert where.stdout.strip().startswith(str(venv))

    listed = _run([str(venv / "bin" / "dlt-ops"), "plugins", "list", "--json"],
                  cwd=tmp_path, env=env)  # fmt: skip
    rows = json.loads(listed.stdout)
    destinations = {r["name"]: r for r in rows if r["kind"] == "destination"}
    assert "postgres" in destinations, rows
    assert destinations["postgres"]["distribution"] == "dltops-postgres"
    assert "bigquery" not in destinations and "duckdb" not in destinations, sorted(destinations)

    doctor = subprocess.run([str(venv / "bin" / "dlt-ops"), "plugins", "doctor"],
                            capture_output=True, text=True, cwd=tmp_path, env=env)  # fmt: skip
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
