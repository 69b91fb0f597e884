"""Benchmark: `dlt-ops pipeline validate` on the example project (target: <= 0.15 × reference).

Each side gets its own ``init demo --example`` project in a temp dir and runs with compiled
bytecode, dlt telemetry off and dlt's data dir under the temp dir. Timings are interleaved
(ours cold, ours warm, reference, ...) after one untimed warm-up, median of ``--runs``.

* ours cold: the Phase-2 facts cache (``.dlt-ops/validate-facts.json``) is deleted before the
  run, so sources are imported and instantiated (the sandbox verdict stays cached);
* ours warm: nothing changed since the last validate, so no dlt and no project code is imported.

Run: .venv/bin/python bench/bench_validate.py [--runs 5] [--reference /tmp/ref/bin/dlt-ops]
(compile bytecode first: .venv/bin/python -m compileall -q .venv/lib/python3.11/site-packages
packages, and the same for the reference venv's site-packages).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OURS = REPO / ".venv" / "bin" / "dlt-ops"
FACTS = Path(".dlt-ops") / "validate-facts.json"


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("DLT_PROJECT_DIR", None)
    env["RUNTIME__DLTHUB_TELEMETRY"] = "false"
    env["DLT_DATA_DIR"] = str(tmp / "dlt-data")
    return env


def _project(exe: str, parent: Path, env: dict[str, str]) -> Path:
    parent.mkdir(parents=True)
    subprocess.run([exe, "init", "demo", "--example"], cwd=parent, env=env,
                   capture_output=True, check=True)  # fmt: skip
    return parent / "demo"


def _timer(
    exe: str, root: Path, env: dict[str, str], before: Callable[[], None]
) -> Callable[[], tuple[float, float]]:
    """A run: ``(wall seconds, CPU seconds of the process)``."""

    def run() -> tuple[float, float]:
        before()
        start = time.perf_counter()
        proc = subprocess.Popen([exe, "pipeline", "validate"], cwd=root, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        _, _, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0
        return time.perf_counter() - start, usage.ru_utime + usage.ru_stime

    return run


def _baseline_env(env: dict[str, str], checkout: Path) -> dict[str, str]:
    """Run this venv's CLI on another checkout's sources (shadowing the editable installs)."""
    srcs = [str(p) for p in sorted((checkout / "packages").glob("*/src"))]
    return {**env, "PYTHONPATH": os.pathsep.join(srcs)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--reference", default="/tmp/ref/bin/dlt-ops")
    parser.add_argument("--baseline", type=Path,
                        help="a checkout of this repo (e.g. a git worktree of an older commit) "
                             "to time side by side, with this venv")  # fmt: skip
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-validate-"))
    try:
        env = _env(tmp)
        ours = _project(str(OURS), tmp / "ours", env)
        cases: dict[str, Callable[[], tuple[float, float]]] = {
            "dlt-ops cold (facts cache deleted)": _timer(
                str(OURS), ours, env, lambda: (ours / FACTS).unlink(missing_ok=True)
            ),
            "dlt-ops warm (nothing changed)": _timer(str(OURS), ours, env, lambda: None),
        }
        if args.baseline is not None:
            base_env = _baseline_env(env, args.baseline)
            base = _project(str(OURS), tmp / "baseline", base_env)
            cases["baseline checkout"] = _timer(str(OURS), base, base_env, lambda: None)
        if Path(args.reference).exists():
            ref = _project(args.reference, tmp / "ref", env)
            cases["reference 0.1"] = _timer(args.reference, ref, env, lambda: None)
        samples: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
        for run in cases.values():
            run()  # warm-up: OS file cache, sandbox verdicts
        for _ in range(args.runs):
            for label, run in cases.items():
                samples[label].append(run())
        ref = samples.get("reference 0.1")
        ref_wall = statistics.median(w for w, _ in ref) if ref else None
        ref_cpu = statistics.median(c for _, c in ref) if ref else None
        print(f"{'case (median of ' + str(args.runs) + ')':<38}{'wall s':>8}{'min':>7}{'max':>7}"
              f"{'× ref':>7}{'cpu s':>8}{'× ref':>7}")  # fmt: skip
        for label, values in samples.items():
            wall = [w for w, _ in values]
            cpu = statistics.median(c for _, c in values)
            med = statistics.median(wall)
            r_wall = f"{med / ref_wall:>7.2f}" if ref_wall else f"{'-':>7}"
            r_cpu = f"{cpu / ref_cpu:>7.2f}" if ref_cpu else f"{'-':>7}"
            print(f"{label:<38}{med:>8.3f}{min(wall):>7.3f}{max(wall):>7.3f}{r_wall}"
                  f"{cpu:>8.3f}{r_cpu}")  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
