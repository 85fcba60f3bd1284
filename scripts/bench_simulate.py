"""Benchmark of the simulator: 20 and 1,000 patients (wall time, size, memory), and the cohort's clinical figures.

Run: .venv/bin/python scripts/bench_simulate.py [--large 1000]
Prints markdown tables for docs/benchmarks.md: timings, then over the 1,000 patients the facts the invariant
tests check, how often a persona had to be drawn again for six biting traps, and the skeleton measure.
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

from medmemorybench.errors import SimulationError
from medmemorybench.knowledge import default_knowledge
from medmemorybench.simulate import iter_cohort, simulate_patient
from medmemorybench.simulate.persona import (
    applicable_advice,
    baseline_egfr,
    make_demographics,
    persona_id_for,
    starting_bmi,
)
from medmemorybench.simulate.rng import rng_for
from medmemorybench.simulate.safety import Patient
from medmemorybench.simulate.store import care_year_json, write_cohort
from medmemorybench.simulate.summary import skeleton_share
from medmemorybench.simulate.traps import choose_traps


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


def cohort_figures(n: int, seed: int) -> None:
    """What the invariant tests read in a cohort of `n` (seed-major, like the tests), and the skeleton measure."""
    kb = default_knowledge()
    years = [simulate_patient(kb, s, i) for s in range(seed, seed + n // 20) for i in range(20)]
    facts = [f for y in years for e in y.events for f in e.facts]
    count = {kind: sum(1 for f in facts if f.type == kind) for kind in ("medication", "lab", "avoided", "caution")}
    redrawn = 0
    for y in years:
        index = int(y.persona.persona_id[1:]) - 1
        rng = rng_for(y.seed, persona_id_for(index), "demographics")
        condition = kb.conditions[y.persona.condition]
        who = make_demographics(kb, condition, rng)
        advice = applicable_advice(kb, condition.lifestyle_advice, who.body.smoker, starting_bmi(condition, who.body))
        try:  # (the first attempt of `cohort.simulate_patient`, replayed)
            choose_traps(kb, condition, Patient(who.age, who.sex, condition.key,
                                                egfr=baseline_egfr(kb, condition, who.age, rng)),
                         rng_for(y.seed, persona_id_for(index), "traps"), advice)
        except SimulationError:
            redrawn += 1
    worst = skeleton_share(years[:200])
    print(f"\ncohort of {len(years)} patients (seeds {seed}-{seed + n // 20 - 1} x 20 conditions):")
    print("| figure | value |")
    print("|---|---|")
    print(f"| encounters | {sum(len(y.events) for y in years)} |")
    print(f"| medication facts checked against every rule | {count['medication']} |")
    print(f"| lab measurements checked for kinetics and interval | {count['lab']} |")
    print(f"| drugs passed over, each naming its rules / cautions given | {count['avoided']} / {count['caution']} |")
    print(f"| personas drawn again for six biting traps | {redrawn} ({100 * redrawn / len(years):.1f} %) |")
    print(f"| skeleton measure over the first 200 (largest share of one kind at one index) | "
          f"{worst.share:.0%} (session {worst.index}, {worst.kind}) |")


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
    cohort_figures(args.large, args.seed)


if __name__ == "__main__":
    main()
