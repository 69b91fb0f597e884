"""The DuckDB quickstart run by README command 1.

Scaffolds the example project in a scratch directory and walks it the way a new user would:
`init demo --example` → `pipeline validate` → `pipeline run -s demo_events -y` →
`pipeline status`. Every step is the real CLI; the script stops at the first failure.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

SCRATCH = Path(__file__).resolve().parents[1] / ".quickstart"


def step(title: str, *args: str, cwd: Path) -> None:
    print(f"\n$ dlt-ops {' '.join(args)}    # {title}", flush=True)
    done = subprocess.run(["dlt-ops", *args], cwd=cwd, check=False)
    if done.returncode != 0:
        print(f"quickstart: `dlt-ops {' '.join(args)}` exited {done.returncode}", file=sys.stderr)
        raise SystemExit(done.returncode)


def main() -> None:
    shutil.rmtree(SCRATCH, ignore_errors=True)
    SCRATCH.mkdir()
    demo = SCRATCH / "demo"
    step("scaffold a project with the runnable example", "init", "demo", "--example", cwd=SCRATCH)
    step("check it statically", "pipeline", "validate", cwd=demo)
    step(
        "load the six example rows into DuckDB",
        "pipeline",
        "run",
        "-s",
        "demo_events",
        "-y",
        cwd=demo,
    )
    step("read the runs ledger back", "pipeline", "status", cwd=demo)
    print(f"\nquickstart: done. The project is in {demo}; try `cd {demo}` and explore.")


if __name__ == "__main__":
    main()
