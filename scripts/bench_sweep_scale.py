"""A retrieval-only sweep over a large build, on the local process pool and on a local Ray cluster, one after the
other on the same machine: wall time, shards, peak memory of the whole process tree, and whether the two wrote the
same samples (`machine_independent`).

Each executor runs `medmemorybench sweep` as a user would (a fresh interpreter, a log on stderr); the peak memory is
sampled every 0.5 s over the driver and every process below it (Ray's own processes included).

    .venv/bin/python scripts/bench_sweep_scale.py --dataset /tmp/b1000/medmemorybench --work /tmp/scale \\
        --memories bm25 --tasks medmemorybench_efficient,medmemorybench_mixed
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from medmemorybench.harness.results import SAMPLES  # noqa: E402
from medmemorybench.sweep.executors import descendants  # noqa: E402
from medmemorybench.sweep.shards import machine_independent  # noqa: E402


def tree_rss_mib(root: int) -> float:
    """Resident memory of `root` and every process below it (Linux `/proc`)."""
    total = 0
    for pid in [root, *descendants(root)]:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def run(command: list[str], log: Path, env: dict[str, str]) -> dict:
    """Run `command`, sampling the process tree's memory; its wall time, peak memory and exit code."""
    started = time.perf_counter()
    with log.open("w") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env)
        peak = 0.0
        stop = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not stop.wait(0.5):
                peak = max(peak, tree_rss_mib(process.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        code = process.wait()
        stop.set()
        sampler.join()
    return {"exit": code, "wall_s": round(time.perf_counter() - started, 1), "peak_tree_rss_mib": round(peak)}


def samples_of(folder: Path) -> dict[str, tuple[int, str]]:
    """Per cell: its samples and a digest of them in order, without what measures the machine."""
    out = {}
    for cell in sorted(p for p in folder.iterdir() if (p / SAMPLES).exists()):
        digest, count = hashlib.sha256(), 0
        with (cell / SAMPLES).open(encoding="utf-8") as handle:
            for line in handle:
                digest.update(json.dumps(machine_independent(json.loads(line)), sort_keys=True).encode())
                count += 1
        out[cell.name] = (count, digest.hexdigest())
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--memories", default="bm25")
    parser.add_argument("--tasks", default="medmemorybench_efficient,medmemorybench_mixed")
    parser.add_argument("--checkpoints", default=None)
    parser.add_argument("--limit", default=None, help="the first N patients")
    parser.add_argument("--workers", default="2")
    parser.add_argument("--executors", default="local,ray")
    parser.add_argument("--cache", type=Path, default=None,
                        help="a fresh embedding cache folder per executor under this one (a cold dense run each)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    command = Path(sys.executable).with_name("medmemorybench")
    results = {}
    for executor in args.executors.split(","):
        out = args.work / executor
        sweep = [str(command), "sweep", "--memories", args.memories, "--tasks", args.tasks, "--dataset_path",
                 args.dataset, "--output_path", str(out), "--executor", executor, "--workers", args.workers,
                 *(["--checkpoints", args.checkpoints] if args.checkpoints else []),
                 *(["--limit", args.limit] if args.limit else []),
                 *(["--resume"] if out.exists() else [])]
        print(f"{executor}: {' '.join(sweep)}", flush=True)
        env = {**os.environ, **({"MEDMEMORYBENCH_CACHE": str(args.cache / executor)} if args.cache else {})}
        results[executor] = run(sweep, args.work / f"{executor}.log", env)
        plan = json.loads((out / "sweep.json").read_text())["shards"]
        results[executor]["shards"] = sum(len(s) for s in plan.values())
        results[executor]["samples"] = sum(count for count, _ in samples_of(out).values())
        print(f"{executor}: {results[executor]}", flush=True)
    executors = list(results)
    if len(executors) == 2:
        first, second = (samples_of(args.work / e) for e in executors)
        results["same_samples"] = first == second
    results["machine"] = {"cpus": os.cpu_count(), "load_at_end": [round(x, 2) for x in os.getloadavg()]}
    (args.work / "scale.json").write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))
    return 0 if all(r["exit"] == 0 for r in results.values() if isinstance(r, dict) and "exit" in r) else 1


if __name__ == "__main__":
    sys.exit(main())
