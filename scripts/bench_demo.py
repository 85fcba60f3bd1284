"""Time `medmemorybench demo` cold, with its output going to a log, as `make demo > demo.log 2>&1` runs it.

Cold: empty model, embedding, response and `datasets` caches (the GGUF conversion, every embedding and every
answer are computed), in a fresh working folder. Records wall time and peak memory from `/usr/bin/time -v`, the
machine's load before, during (sampled every 15 s) and after, each demo step's time from the demo's own summary
line, how many progress lines the log got, and the longest time the log went without a line (each line's arrival
is timed as it comes). Writes a JSON report and prints it.

    .venv/bin/python scripts/bench_demo.py --work /tmp/bench-demo
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / ".venv" / "bin" / "medmemorybench"


def load_average() -> float:
    return os.getloadavg()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="An empty folder for caches, output and the log.")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    env = {**os.environ, "MEDMEMORYBENCH_CACHE": str(args.work / "cache"), "HF_HOME": str(args.work / "hf"),
           "HF_DATASETS_CACHE": str(args.work / "hf" / "datasets"), "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "200"}
    env.pop("MEDMEMORYBENCH_DATA", None)
    loads: list[float] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(15):
            loads.append(round(load_average(), 2))

    threading.Thread(target=sample, daemon=True).start()
    before = round(load_average(), 2)
    started = time.monotonic()
    log = args.work / "demo.log"
    arrivals: list[float] = []  # when each line reached the log: the longest silence is measured, not assumed
    with log.open("w") as handle:
        process = subprocess.Popen(["/usr/bin/time", "-v", str(CLI), "demo", "--output_path", str(args.work / "demo")],
                                   cwd=args.work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in process.stdout:  # type: ignore[union-attr]
            arrivals.append(time.monotonic())
            handle.write(line)
            handle.flush()
        returncode = process.wait()
    wall_s = time.monotonic() - started
    gaps = [b - a for a, b in zip([started, *arrivals], arrivals, strict=False)]
    done.set()
    text = log.read_text(encoding="utf-8", errors="replace")
    peak_kb = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    steps = re.search(r"^demo done in (\S+) \((.*)\)$", text, re.MULTILINE)
    report = {
        "exit_code": returncode, "wall_s": round(wall_s, 1),
        "longest_quiet_s": round(max(gaps, default=wall_s), 1), "lines": len(arrivals),
        "wall": f"{int(wall_s // 60)} min {wall_s % 60:.0f} s",
        "peak_rss_gb": round(int(peak_kb.group(1)) / 1e6, 2) if peak_kb else None,
        "steps": dict(part.rsplit(" ", 1) for part in steps.group(2).split(", ")) if steps else None,
        "progress_lines": len(re.findall(r"^\[\d\d:\d\d:\d\d\] ", text, re.MULTILINE)),
        "load_before": before, "load_during": loads, "load_after": round(load_average(), 2),
        "cpus": os.cpu_count(), "log": str(log),
    }
    (args.work / "bench_demo.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))
    sys.exit(returncode)


if __name__ == "__main__":
    main()
