"""Run the paper's 13 memory systems on one slice and report them side by side (the paper's table layout, with
construction cost beside it).

A thin shell over `medmemorybench sweep`: the systems × one model × the tasks, each cell a run folder under OUT,
one shard at a time by default (an LLM-built memory on CPU wants the cores to itself; `--workers` for more). A
second call resumes: finished cells are kept. Afterwards `medmemorybench report` prints every table over them.

    .venv/bin/python scripts/run_slice.py --dataset_path out/medmemorybench --out runs/slice \\
        --limit 1 --checkpoints 10 --tasks medmemorybench_efficient,medmemorybench_mixed
"""

from __future__ import annotations

import argparse
import subprocess
import sys
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
    parser.add_argument("--workers", default="1")
    args = parser.parse_args()
    command = Path(sys.executable).with_name("medmemorybench")
    sweep = [str(command), "sweep", "--memories", args.systems, "--models", args.model, "--tasks", args.tasks,
             "--limit", args.limit, "--checkpoints", args.checkpoints, "--dataset_path", args.dataset_path,
             "--output_path", str(args.out), "--no_cache", "--workers", args.workers,
             *(["--model_args", args.model_args] if args.model_args else []),
             *(["--resume"] if (args.out / "sweep.json").exists() else [])]
    code = subprocess.call(sweep)
    finished = sorted(p for p in args.out.glob("*") if (p / "summary.json").exists() and not (p / "shards").exists())
    if finished:
        subprocess.call([str(command), "report", *map(str, finished), "--plot", str(args.out / "saturation.png")])
    return code


if __name__ == "__main__":
    sys.exit(main())
