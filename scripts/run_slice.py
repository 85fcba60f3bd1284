"""Run the paper's 13 memory systems on one slice and report them side by side (the paper's table layout, with
construction cost beside it).

Each system is one `medmemorybench run` into OUT/<system>; a system whose run already has a summary.json is
skipped, so a killed slice goes on where it stopped. Progress goes to stdout one line per system, with times, so
a log shows it. Afterwards `medmemorybench report` prints every table over the finished runs.

    .venv/bin/python scripts/run_slice.py --dataset_path out/medmemorybench --out runs/slice \
        --limit 1 --checkpoints 10 --tasks medmemorybench_efficient,medmemorybench_mixed
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

PAPER_SYSTEMS = ("long_context", "bm25", "dense", "graphrag", "hipporag", "remem", "mem0", "amem", "memos", "memrl",
                 "lightmem", "letta", "mirix")
"""The rows of the paper's table, in its order."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset_path", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--systems", default=",".join(PAPER_SYSTEMS), help="comma-separated (default: all 13)")
    parser.add_argument("--tasks", default="medmemorybench_efficient,medmemorybench_mixed")
    parser.add_argument("--model", default="hf")
    parser.add_argument("--model_args", default="")
    parser.add_argument("--limit", default="1")
    parser.add_argument("--checkpoints", default="10")
    args = parser.parse_args()
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    command = Path(sys.executable).with_name("medmemorybench")
    finished = []
    for number, system in enumerate(systems, start=1):
        folder = args.out / system
        if (folder / "summary.json").exists():
            print(f"[{number}/{len(systems)}] {system}: done before, kept", flush=True)
            finished.append(folder)
            continue
        started = time.perf_counter()
        print(f"[{number}/{len(systems)}] {system}: running ({time.strftime('%H:%M:%S')})", flush=True)
        run = [str(command), "run", "--tasks", args.tasks, "--memory", system, "--model", args.model,
               "--limit", args.limit, "--checkpoints", args.checkpoints, "--dataset_path", args.dataset_path,
               "--output_path", str(folder), "--no_cache", *(["--model_args", args.model_args] if args.model_args
                                                            else []),
               *(["--resume"] if folder.exists() else [])]
        folder.parent.mkdir(parents=True, exist_ok=True)
        with (args.out / f"{system}.log").open("w") as log:
            code = subprocess.call(run, stdout=log, stderr=subprocess.STDOUT)
        seconds = time.perf_counter() - started
        state = "finished" if code == 0 else f"FAILED (exit {code}; see {args.out / (system + '.log')})"
        print(f"[{number}/{len(systems)}] {system}: {state} in {seconds / 60:.1f} min", flush=True)
        if code == 0:
            finished.append(folder)
    if finished:
        subprocess.call([str(command), "report", *map(str, finished), "--plot", str(args.out / "saturation.png")])
    return 0 if len(finished) == len(systems) else 1


if __name__ == "__main__":
    sys.exit(main())
