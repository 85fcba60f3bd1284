"""Benchmark of the evaluation harness.

1. Retrieval-only evaluation of the full mixed mode (20 patients, 10 checkpoints) with bm25 and with
   dense (cold embedding cache): wall time, peak memory, chunks embedded per second.
2. The batched runner against a one-request-at-a-time loop, through the same `openai` backbone and a
   real local OpenAI-compatible server (`medmemorybench serve`, the embedded SmolLM2 on CPU).

Run: .venv/bin/python scripts/bench_harness.py [--requests 24] [--skip-dense]
Prints markdown for docs/benchmarks.md. Each evaluation runs as its own process (`/usr/bin/time`-free:
peak RSS comes from getrusage of the children).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

CLI = [sys.executable, "-m", "medmemorybench.cli"]


def _run(args: list[str], env: dict | None = None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of a CLI command run as a child process."""
    start = time.perf_counter()
    proc = subprocess.run([*CLI, *args], env={**os.environ, **(env or {})}, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"command failed: {' '.join(args)}\n{proc.stderr[-2000:]}")
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return elapsed, peak_mb


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for(url: str, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            time.sleep(1)
    raise SystemExit(f"server at {url} did not come up")


def _requests(dataset: Path, n: int):  # noqa: ANN202
    """Real prompts: the first questions of the mixed split checkpoint_10, with bm25 retrieval."""
    import pyarrow.parquet as pq

    from medmemorybench.harness.observed import ObservedStream, retrieval_query
    from medmemorybench.harness.prompting import PromptBuilder
    from medmemorybench.harness.tasks import resolve_tasks
    from medmemorybench.memory import load_memory
    from medmemorybench.render.models import Session

    (task,) = resolve_tasks(["medmemorybench_mixed"])
    builder = PromptBuilder()
    out = []
    for row in pq.read_table(dataset / "mixed" / "checkpoint_10.parquet").to_pylist():
        memory = load_memory("bm25", {})
        stream = ObservedStream(row["persona_id"])
        sessions = [Session.model_validate(s) for s in row["sessions"]]
        memory.ingest(stream.observe(sessions))  # what the runner gives memories
        questions = row["questions"]
        retrievals = memory.retrieve([retrieval_query(q) for q in questions], 3)
        for question, retrieval in zip(questions, retrievals, strict=True):
            request = builder.build(task, question, stream.to_real(retrieval).items, stream.dates, stream.latest)
            out.append(request.model_copy(update={"max_tokens": 32}))
            if len(out) == n:
                return out
    return out


def bench_batching(dataset: Path, n: int) -> list[str]:
    from medmemorybench.models.openai_compatible import OpenAIBackbone

    port = _free_port()
    server = subprocess.Popen([*CLI, "serve", "--model", "hf", "--port", str(port), "--max-batch", "8"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(f"http://127.0.0.1:{port}/v1/models")
        requests = _requests(dataset, n)
        url = f"http://127.0.0.1:{port}/v1"
        OpenAIBackbone(model="smollm2", base_url=url, concurrency=1).generate(requests[:2])  # warm-up
        start = time.perf_counter()
        sequential = [OpenAIBackbone(model="smollm2", base_url=url, concurrency=1, timeout_s=600).generate([r])[0]
                      for r in requests]
        sequential_s = time.perf_counter() - start
        start = time.perf_counter()
        batched = OpenAIBackbone(model="smollm2", base_url=url, concurrency=8, timeout_s=600).generate(requests)
        batched_s = time.perf_counter() - start
    finally:
        server.terminate()
        server.wait(timeout=30)
    errors = sum(1 for c in sequential + batched if c.error)
    return [
        f"| one request at a time ({n} requests) | {sequential_s:.1f} s | {n / sequential_s:.2f} req/s |",
        f"| batched (concurrency 8, server batches <= 8) | {batched_s:.1f} s | {n / batched_s:.2f} req/s |",
        f"| **speed-up** | **{sequential_s / batched_s:.2f}x** | errors: {errors} |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=24)
    parser.add_argument("--skip-dense", action="store_true")
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
          f"load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        elapsed, _ = _run(["build", "--seed", "0", "--out", str(tmp / "out")])
        dataset = tmp / "out" / "medmemorybench"
        print(f"\nbuild (20 patients, both modes): {elapsed:.1f} s\n")
        print("| retrieval-only, full mixed mode (20 patients x 10 checkpoints) | wall time | peak RSS |")
        print("|---|---|---|")
        base = ["run", "--tasks", "medmemorybench_mixed", "--dataset_path", str(dataset)]
        elapsed, peak = _run([*base, "--memory", "bm25", "--output_path", str(tmp / "bm25")])
        print(f"| bm25 (turn windows) | {elapsed:.1f} s | {peak:.0f} MB |")
        if not args.skip_dense:
            cache = tmp / "cache"
            elapsed, peak = _run([*base, "--memory", "dense", "--output_path", str(tmp / "dense")],
                                 env={"MEDMEMORYBENCH_CACHE": str(cache)})
            db = sqlite3.connect(cache / "embeddings" / "embeddings.sqlite3")
            chunks = db.execute("SELECT COUNT(*) FROM embedding").fetchone()[0]
            db.close()
            print(f"| dense (all-MiniLM-L6-v2, cold cache; {chunks} chunks embedded) | {elapsed:.1f} s "
                  f"| {peak:.0f} MB |")
            print(f"\ndense throughput: {chunks / elapsed:.0f} chunks (sentences) embedded per second, end to end")
            summary = json.loads((tmp / "dense" / "summary.json").read_text())
            print(f"dense samples: {summary['n_samples']}")
        print("\n| SmolLM2-135M via `medmemorybench serve` + `openai` backbone | wall time | throughput |")
        print("|---|---|---|")
        for line in bench_batching(dataset, args.requests):
            print(line)


if __name__ == "__main__":
    main()
