"""``dlt-ops plugins new KIND NAME``: for every kind, the scaffold pip-installs into a throwaway
virtualenv and its own tests pass there; ``examples/plugins/`` is exactly what it writes."""

from __future__ import annotations

import fcntl
import os
import subprocess
from pathlib import Path

import pytest

from dlt_ops.scaffold import render, write_plugin
from dlt_ops.scaffold.templates import TEMPLATES
from dlt_ops.testing._tool_venv import ensure_tool_venv, run_step, tool_venv_dir, uv

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "plugins"
#: The name of each kind's worked example in examples/plugins/.
EXAMPLE_NAMES = {
    "destination": "litefile",
    "ledger_sink": "acme_ledger",
    "assertion_rule": "not_negative",
    "trigger_emitter": "acme_script",
    "validation_rule": "acme",
    "secret_backend": "acme_vault",
    "alert_sink": "acme_alerts",
    "command": "hello",
    "config_key": "owner",
    "lifecycle": "acme_runlog",
}


class ScaffoldVenvUnavailable(Exception):
    """The throwaway virtualenv could not be built (no uv, no index)."""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    """One cached virtualenv (dltops-core editable, pytest) with a fresh scaffold of every kind
    installed editable: ``(python, {kind: plugin root})``. The scaffolds are uninstalled again
    afterwards (and before, in case a previous session was killed)."""
    try:
        venv = ensure_tool_venv(tool_venv_dir("plugin-scaffolds"), "pytest",
                                ScaffoldVenvUnavailable, packages=("dltops-core",))  # fmt: skip
    except ScaffoldVenvUnavailable as exc:
        if os.environ.get("CI"):  # CI reaches the package registries: a failure is real
            raise
        pytest.skip(f"cannot build the scaffold virtualenv: {exc}")
    python = venv / "bin" / "python"
    where = tmp_path_factory.mktemp("scaffolds")
    roots = {kind: write_plugin(kind, f"kit_{kind}", where).root for kind in TEMPLATES}
    dists = [f"dltops-kit-{kind.replace('_', '-')}" for kind in TEMPLATES]
    lock = open(venv.parent / f"{venv.name}.use.lock", "w")  # noqa: SIM115 - held for the module
    fcntl.flock(lock, fcntl.LOCK_EX)  # another session's scaffolds must not meet these
    uninstall = [*uv(), "pip", "uninstall", "-q", "--python", str(python), *dists]
    subprocess.run(uninstall, capture_output=True, check=False)
    editables = [a for root in roots.values() for a in ("-e", str(root))]
    run_step([*uv(), "pip", "install", "-q", "--python", str(python),
              "-c", str(venv / "constraints.txt"), *editables],
             ScaffoldVenvUnavailable)  # fmt: skip
    yield python, roots
    subprocess.run(uninstall, capture_output=True, check=False)
    fcntl.flock(lock, fcntl.LOCK_UN)
    lock.close()


@pytest.mark.parametrize("kind", list(TEMPLATES))
def test_the_scaffold_installs_and_its_tests_pass(
    installed: tuple[Path, dict[str, Path]], kind: str
) -> None:
    python, roots = installed
    root = roots[kind]
    done = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore"],
        cwd=root, capture_output=True, text=True, timeout=600,
        env={"PATH": str(python.parent) + ":/usr/bin:/bin", "RUNTIME__DLTHUB_TELEMETRY": "false",
             "HOME": str(root)},
    )  # fmt: skip
    tail = done.stdout[-4000:] + done.stderr[-2000:]
    assert done.returncode == 0, tail
    assert " passed" in done.stdout and " failed" not in done.stdout, tail


def test_doctor_sees_every_scaffold_ok(installed: tuple[Path, dict[str, Path]]) -> None:
    python, roots = installed
    done = subprocess.run(
        [str(python.parent / "dlt-ops"), "plugins", "list", "--json"], cwd=roots["command"],
        capture_output=True, text=True, timeout=300,
        env={"PATH": str(python.parent) + ":/usr/bin:/bin", "HOME": str(roots["command"])},
    )  # fmt: skip
    import json

    assert done.returncode == 0, done.stderr[-3000:]
    rows = {(r["kind"], r["name"]): r for r in json.loads(done.stdout)}
    for kind in TEMPLATES:
        row = rows[(kind, f"kit_{kind}")]
        assert row["distribution"] == f"dltops-kit-{kind.replace('_', '-')}"
        assert row["status"] == "ok", row


@pytest.mark.parametrize("kind", list(TEMPLATES))
def test_examples_are_what_plugins_new_writes(kind: str) -> None:
    name = EXAMPLE_NAMES[kind]
    example = EXAMPLES / f"dltops-{name.replace('_', '-')}"
    expected = render(kind, name)
    on_disk = {
        p.relative_to(example).as_posix(): p.read_text(encoding="utf-8")
        for p in example.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and ".egg-info" not in str(p)
    }
    regenerate = f"dlt-ops plugins new {kind} {name} --dir examples/plugins"
    assert on_disk == expected, f"examples/plugins is stale: remove it and run {regenerate}"


def test_the_cli_writes_a_plugin_and_refuses_to_overwrite(tmp_path: Path, cli) -> None:  # noqa: ANN001
    made = cli("plugins", "new", "alert_sink", "acme", "--dir", str(tmp_path), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    root = tmp_path / "dltops-acme"
    assert (
        '[project.entry-points."dlt_ops.alert_sink"]\nacme = "dltops_acme.plugin"'
        in (root / "pyproject.toml").read_text()
    )
    test_module = (root / "tests" / "test_dltops_acme.py").read_text()
    assert "class TestAcmeAlertSink(AlertSinkSuite)" in test_module
    again = cli("plugins", "new", "alert_sink", "acme", "--dir", str(tmp_path), cwd=tmp_path)
    assert again.returncode == 2 and "already exists" in again.stderr
    bad = cli("plugins", "new", "alert_sinks", "acme", "--dir", str(tmp_path), cwd=tmp_path)
    assert bad.returncode == 2 and "unknown plugin kind 'alert_sinks'" in bad.stderr
