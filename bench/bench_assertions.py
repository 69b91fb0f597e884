"""Benchmark: assertion gate costs (SPEC §12: unique_columns <= 200 MB extra per 10 M keys).

Part 1 measures the gate engine directly (no dlt load): N rows, all keys distinct, fed through
``ResourceEngine.observe`` with ``unique_columns`` vs a loop doing nothing but building the
rows. Each case runs in its own process; the extra memory is the difference in peak RSS.
``reference-style`` is the 0.1 reference's approach (16-byte sha256 prefixes of repr in a
Python set), for comparison.

Part 2 measures a real dlt pipeline (extract + normalize + load into DuckDB) of M rows with
and without the gate (required_columns + unique_columns + min_rows_per_load).

Run: .venv/bin/python bench/bench_assertions.py [--keys 10000000] [--rows 1000000] [--skip-ref]
(compile bytecode first for realistic import times: UV_COMPILE_BYTECODE=1 uv sync).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time


def _rows(n: int):  # noqa: ANN202
    for i in range(n):
        yield {"id": i, "kind": "k"}


def _engine(kind: str):  # noqa: ANN202
    from dlt_ops.assertions.engine import Entry, ResourceEngine
    from dlt_ops.assertions.model import parse_assertions
    from dlt_ops.builtin.assertions import RequiredColumns, UniqueColumns

    types = {"unique_columns": UniqueColumns(), "required_columns": RequiredColumns()}
    table = {"unique_columns": ["id"]}
    if kind == "gate":
        table["required_columns"] = ["id", "kind"]
    parsed = parse_assertions({"r": table}, "s")
    entries = [Entry(s, atype=types[s.type_name]) for s in parsed.for_resource("r").specs]
    return ResourceEngine("s", "r", entries)


def child_engine(case: str, n: int) -> dict[str, float]:
    """One case in this process: returns seconds and peak RSS in MB."""
    import hashlib

    if case == "unique_columns":
        observe = _engine("unique").observe
    elif case == "reference-style":
        seen: set[bytes] = set()

        def observe(row: dict) -> bool:
            digest = hashlib.sha256(repr((("id", row["id"]),)).encode()).digest()[:16]
            if digest in seen:
                return False
            seen.add(digest)
            return True
    else:

        def observe(row: dict) -> bool:
            return True

    start = time.perf_counter()
    kept = sum(1 for row in _rows(n) if observe(row))
    elapsed = time.perf_counter() - start
    assert kept == n
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": elapsed, "peak_mb": peak}


def child_pipeline(case: str, n: int) -> dict[str, float]:
    """A dlt run of ``n`` rows into a throwaway DuckDB, with or without the gate."""
    import dlt

    from dlt_ops.assertions.gate import AssertionStep

    @dlt.resource(name="events", write_disposition="append")
    def events():  # noqa: ANN202
        batch = []
        for row in _rows(n):
            batch.append(row)
            if len(batch) == 10_000:
                yield batch
                batch = []
        if batch:
            yield batch

    work = tempfile.mkdtemp(prefix="bench-assert-")
    pipe = dlt.pipeline("bench", destination=dlt.destinations.duckdb(f"{work}/b.duckdb"),
                        dataset_name="ds", pipelines_dir=work)  # fmt: skip
    res = events()
    if case == "gate":
        res.add_step(AssertionStep(_engine("gate")))
    start = time.perf_counter()
    pipe.extract(res)
    extracted = time.perf_counter()
    pipe.normalize()
    pipe.load()
    done = time.perf_counter()
    shutil.rmtree(work, ignore_errors=True)
    return {"extract_s": extracted - start, "total_s": done - start}


def _spawn(mode: str, case: str, n: int) -> dict[str, float]:
    env = {**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"}
    out = subprocess.run([sys.executable, __file__, "--child", mode, case, str(n)],
                         capture_output=True, text=True, check=True, env=env)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, default=10_000_000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--skip-ref", action="store_true", help="skip the reference-style case")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, case, n = args.child
        fn = child_engine if mode == "engine" else child_pipeline
        print(json.dumps(fn(case, int(n))))
        return

    cases = ["none", "unique_columns"] + ([] if args.skip_ref else ["reference-style"])
    results = {c: _spawn("engine", c, args.keys) for c in cases}
    base = results["none"]
    print(f"Part 1: gate engine, {args.keys:,} distinct keys (target: <= 200 MB extra)")
    print(f"{'case':<18}{'seconds':>10}{'peak MB':>10}{'extra MB':>10}{'B/key':>8}")
    for case, r in results.items():
        extra = r["peak_mb"] - base["peak_mb"]
        per_key = extra * 1024 * 1024 / args.keys
        print(f"{case:<18}{r['seconds']:>10.2f}{r['peak_mb']:>10.1f}{extra:>10.1f}{per_key:>8.1f}")

    print(f"\nPart 2: dlt extract+normalize+load into DuckDB, {args.rows:,} rows")
    print(f"{'case':<18}{'extract s':>10}{'total s':>10}{'overhead':>10}")
    plain = _spawn("pipeline", "none", args.rows)
    gated = _spawn("pipeline", "gate", args.rows)
    for case, r in (("no gate", plain), ("gate (3 types)", gated)):
        ratio = r["total_s"] / plain["total_s"]
        print(f"{case:<18}{r['extract_s']:>10.2f}{r['total_s']:>10.2f}{ratio:>9.2f}x")


if __name__ == "__main__":
    main()
