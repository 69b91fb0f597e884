"""The mutation-testing lane: mutmut over the modules that guard data, then the table.

``python scripts/mutation/lane.py [module ...]`` (through ``bash scripts/mutation.sh``): a
module is ``ledger/writer.py``, ``dlt_ops.ledger.writer`` or any mutmut name pattern; none
means every module in ``[tool.mutmut] only_mutate``. ``--table`` only re-renders docs/testing.md
from the last results. Configuration: ``[tool.mutmut]`` and ``[tool.dltops-mutation]`` in the
root pyproject.toml.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STAGE = ROOT / ".mutation"
HERE = Path(__file__).resolve().parent
# what the staging dir links to: mutmut reads its config from ./pyproject.toml and names
# mutants after the path under src/, so src/ must be the core package's src/
LINKS = {
    "pyproject.toml": "pyproject.toml",
    "conftest.py": "conftest.py",
    "src": "packages/dltops-core/src",
    "packages": "packages",
    "tests": "tests",
    "examples": "examples",
}


def stage() -> None:
    # exists before the interpreter starts: a PYTHONPATH entry missing at start-up is cached
    # as "nothing here", and the tests would then import the unmutated package
    (STAGE / "mutants" / "src").mkdir(parents=True, exist_ok=True)
    for name, target in LINKS.items():
        link = STAGE / name
        if not link.is_symlink():
            link.symlink_to(ROOT / target)


def forget_stale_stats() -> None:
    """mutmut re-collects its stats when its own test selection changes, not when
    ``[tool.dltops-mutation]`` (applied while collecting) does: drop them then."""
    table = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]
    digest = hashlib.sha256(
        json.dumps([table.get("dltops-mutation"), table["mutmut"]], sort_keys=True).encode()
    ).hexdigest()
    seen = STAGE / "config.sha256"
    if seen.exists() and seen.read_text() != digest:
        (STAGE / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    seen.write_text(digest)


def pattern(arg: str) -> str:
    """``ledger/writer.py`` or ``dlt_ops.ledger.writer`` -> ``dlt_ops.ledger.writer.*``."""
    if "*" in arg:
        return arg
    name = arg.removesuffix(".py").replace("/", ".")
    if not name.startswith("dlt_ops."):
        name = "dlt_ops." + name
    return name + ".*"


def main(argv: list[str]) -> int:
    from render_table import render

    if argv[:1] == ["--table"]:
        render(STAGE, ROOT / "docs" / "testing.md")
        return 0
    stage()
    forget_stale_stats()
    hits = tempfile.mkdtemp(prefix="dltops-mutation-hits-")
    env = {
        **os.environ,
        # the mutated copy wins over the editable install, in pytest and in CLI subprocesses
        "PYTHONPATH": os.pathsep.join([str(STAGE / "mutants" / "src"), str(HERE)]),
        "DLTOPS_MUTATION_HITS": hits,
        "RUNTIME__DLTHUB_TELEMETRY": "false",
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # compile the copies once, not in every subprocess
    workers = os.environ.get("MUTATION_WORKERS", "2")
    mutmut = [str(Path(sys.executable).with_name("mutmut")), "run", "--max-children", workers]
    started = time.monotonic()
    code = subprocess.call([*mutmut, *map(pattern, argv)], cwd=STAGE, env=env)
    print(f"mutation lane: mutmut exited {code} after {time.monotonic() - started:.0f} s")
    render(STAGE, ROOT / "docs" / "testing.md")
    return code


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    raise SystemExit(main(sys.argv[1:]))
