"""Benchmark: `dlt-ops --help` cold-start wall time (target: median <= 0.15 s, issue 18).

Run: .venv/bin/python bench/bench_cli_startup.py [--runs N] [--reference PATH_TO_OTHER_DLT_OPS]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import time
from pathlib import Path


def _time(cmd: list[str], runs: int) -> list[float]:
    subprocess.run(cmd, capture_output=True, check=True)  # warm the OS file cache once
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        samples.append(time.perf_counter() - start)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--reference", help="path to another dlt-ops executable to compare")
    args = parser.parse_args()
    ours = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "dlt-ops"
    rows = [("dlt-ops (this repo)", str(ours if ours.exists() else shutil.which("dlt-ops")))]
    if args.reference:
        rows.append(("reference", args.reference))
    print(f"{'command':<24}{'median s':>10}{'min s':>10}{'max s':>10}  target")
    for label, exe in rows:
        samples = _time([exe, "--help"], args.runs)
        print(
            f"{label:<24}{statistics.median(samples):>10.3f}{min(samples):>10.3f}"
            f"{max(samples):>10.3f}  <= 0.150"
        )


if __name__ == "__main__":
    main()
