"""Every seed builds: `build` (simulate, render both languages, ask, validate, audit, export) for seeds 0-9, each in a
process of its own, with what failed and the question counts.

Run: .venv/bin/python scripts/bench_seeds.py [--seeds 0 1 2 ...] [--jobs 2]
Exit status 1 when any seed fails to build. About a minute per seed on one core; outside `make test` (slow).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def build(seed: int, work: Path) -> tuple[int, bool, float, str]:
    out = work / f"seed{seed}"
    start = time.perf_counter()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "medmemorybench.cli", "build", "--seed", str(seed), "--output_path",
                           str(out), "--no_register"], capture_output=True, text=True, env=env)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        return seed, False, took, (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
    meta = json.loads((out / "medmemorybench" / "medmemorybench.json").read_text(encoding="utf-8"))
    counts = meta["stats"]["questions_by_type"]
    six = sum(n for t, n in counts.items() if t != "ABS")
    return seed, True, took, f"{sum(counts.values())} questions, six types {six}: " + ", ".join(
        f"{t} {n}" for t, n in counts.items())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; seeds {args.seeds}, {args.jobs} at a time",
          flush=True)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.jobs) as pool:
        for seed, ok, took, detail in pool.map(lambda s: build(s, Path(tmp)), args.seeds):
            failed += not ok
            print(f"seed {seed}: {'built' if ok else 'FAILED'} in {took:.0f} s: {detail}", flush=True)
    print(f"{len(args.seeds) - failed} of {len(args.seeds)} seeds built")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
