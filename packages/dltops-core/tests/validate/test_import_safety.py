"""Acceptance: a module with import-time side effects is reported and never imported by the
validating process; the same project without the violation validates clean."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

VIOLATION = """
import os
import socket
try:
    socket.create_connection(("127.0.0.1", 9), timeout=0.2)
except OSError:
    pass
with open(os.path.join(os.path.dirname(__file__), "side_effect.txt"), "w") as fh:
    fh.write(str(os.getpid()))
"""


def _project(make_project, h, violating: bool) -> Path:
    from dlt_ops.project.scaffold import init_project

    root = make_project({})
    (root / ".dlt/config.toml").unlink()
    init_project(root, example=True)
    if violating:
        module = root / "my_pipeline/source/demo_events.py"
        module.write_text(module.read_text() + VIOLATION)
    return root


@pytest.mark.parametrize("strategy", ["fork", "spawn"])
def test_violation_is_reported_and_never_imported_here(
    make_project, run_validate, h, monkeypatch, strategy
) -> None:
    from dlt_ops.project.loader import namespace

    monkeypatch.setenv("DLT_OPS_SANDBOX", strategy)
    root = _project(make_project, h, violating=True)
    report = run_validate(root)
    kinds = sorted(f.message.split(" at ")[0] for f in h.by_rule(report, "import_safety"))
    assert kinds == ["disk-write", "network", "network"]
    fields = {f.field for f in report.errors}
    assert {"import", "import_safety", "validation_coverage"} <= fields
    assert not any(f.rule == "orphan_config_sections" for f in report.findings)
    # the side effect happened once, in another process, and the module is not loaded here
    pid = int((root / "my_pipeline/source/side_effect.txt").read_text())
    assert pid != os.getpid()
    assert not [m for m in sys.modules if m.startswith(namespace(root))]


def test_import_safety_cannot_be_exempted(make_project, run_validate, h) -> None:
    root = _project(make_project, h, violating=True)
    with (root / ".dlt/config.toml").open("a") as fh:
        fh.write('\n[sources.demo_events.dlt_ops.rule_exemptions]\nimport_safety = "please"\n')
    report = run_validate(root)
    assert h.by_rule(report, "import_safety")
    assert any(f.field == "rule_exemptions.import_safety" for f in report.errors)


def test_verdict_is_cached_by_content(make_project, h) -> None:
    from dlt_ops.config import load_project_config
    from dlt_ops.project import discover
    from dlt_ops.project.introspect import introspect

    root = _project(make_project, h, violating=True)
    first = introspect(discover(root), load_project_config(root))["demo_events"].verdict
    again = introspect(discover(root), load_project_config(root))["demo_events"].verdict
    assert not first.cached and again.cached and again.violations == first.violations
    (root / "my_pipeline/source/side_effect.txt").unlink()
    module = root / "my_pipeline/source/demo_events.py"
    module.write_text(module.read_text().replace(VIOLATION, ""))
    fixed = introspect(discover(root), load_project_config(root))["demo_events"]
    assert not fixed.verdict.cached and fixed.verdict.clean and fixed.source is not None
    assert not (root / "my_pipeline/source/side_effect.txt").exists()


def test_sandbox_timeout_is_reported(make_project, h) -> None:
    from dlt_ops.config import load_project_config
    from dlt_ops.project import discover
    from dlt_ops.project.introspect import introspect

    src = h.good_source("alpha") + "\nimport time\ntime.sleep(30)\n"
    root = make_project({"p/source/alpha.py": src}, h.section("alpha"))
    result = introspect(discover(root), load_project_config(root), timeout=1)["alpha"]
    assert "timed out after 1s" in result.import_error


def test_load_source_raises_typed_errors(make_project, h) -> None:
    from dlt_ops.config import load_project_config
    from dlt_ops.errors import ImportSafetyError, SourceImportError
    from dlt_ops.project import discover
    from dlt_ops.project.introspect import load_source

    root = _project(make_project, h, violating=True)
    with pytest.raises(ImportSafetyError, match="import_safety = false"):
        load_source(discover(root), load_project_config(root), "demo_events")
    broken = make_project({"p/source/alpha.py": "import dlt\nraise KeyError('x')\n@dlt.source\n"
                           "def alpha_source():\n    return []\n"}, h.section("alpha"),
                          root=root.parent / "broken")  # fmt: skip
    with pytest.raises(SourceImportError, match="KeyError"):
        load_source(discover(broken), load_project_config(broken), "alpha")


def _dlt_ops(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("dlt-ops")
    return subprocess.run([str(exe), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)  # fmt: skip


def test_acceptance_cli(tmp_path: Path) -> None:
    """`dlt-ops init demo --example && cd demo && dlt-ops pipeline validate`, also from a
    subdirectory; then a violation makes it exit 1, and removing it makes it clean again."""
    assert _dlt_ops("init", "demo", "--example", cwd=tmp_path).returncode == 0
    root = tmp_path / "demo"
    for cwd in (root, root / "my_pipeline" / "source"):
        result = _dlt_ops("pipeline", "validate", cwd=cwd)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "✓ All sources validated successfully" in result.stdout
    module = root / "my_pipeline/source/demo_events.py"
    clean_text = module.read_text()
    module.write_text(clean_text + VIOLATION)
    result = _dlt_ops("pipeline", "validate", "--json", cwd=root)
    assert result.returncode == 1
    assert "import_safety" in result.stdout
    module.write_text(clean_text)
    assert _dlt_ops("pipeline", "validate", cwd=root).returncode == 0
