"""Benchmark of the simulator: 20 patients and 1,000 patients, wall time and peak memory.

Run: .venv/bin/python scripts/bench_simulate.py [--large 1000]
Prints a markdown table row per measurement, for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from medmemorybench.knowledge import default_knowledge
from medmemorybench.simulate import iter_cohort, simulate_patient
from medmemorybench.simulate.store import care_year_json, write_cohort


def _simulate_range(args: tuple[int, int, int]) -> int:
    seed, start, stop = args
    kb = default_knowledge()
    return sum(len(care_year_json(simulate_patient(kb, seed, i))) for i in range(start, stop))


def time_serial(n: int, seed: int) -> tuple[float, int]:
    kb = default_knowledge()
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        paths = write_cohort(iter_cohort(kb, seed, n), Path(tmp) / "years")
        elapsed = time.perf_counter() - start
        size = sum(p.stat().st_size for p in paths)
    return elapsed, size


def time_parallel(n: int, seed: int, workers: int) -> float:
    chunks = [(seed, i, min(i + 50, n)) for i in range(0, n, 50)]
    start = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        list(pool.map(_simulate_range, chunks))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", type=int, default=20)
    parser.add_argument("--large", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    start = time.perf_counter()
    default_knowledge()
    load_s = time.perf_counter() - start
    cpu = platform.processor() or platform.machine()
    print(f"machine: {cpu}, {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    print(f"knowledge base load: {load_s:.2f} s")
    print("| patients | mode | wall time (s) | per patient (ms) | JSON size (MB) |")
    print("|---|---|---|---|---|")
    for n in (args.small, args.large):
        elapsed, size = time_serial(n, args.seed)
        print(f"| {n} | serial, written to disk | {elapsed:.2f} | {1000 * elapsed / n:.1f} | {size / 1e6:.1f} |")
    workers = os.cpu_count() or 1
    if workers > 1:
        elapsed = time_parallel(args.large, args.seed, workers)
        per_patient_ms = 1000 * elapsed / args.large
        print(f"| {args.large} | {workers} processes, in memory | {elapsed:.2f} | {per_patient_ms:.1f} | - |")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS (main process): {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
