"""Construction throughput of an LLM-built memory: the same patients' first checkpoint ingested one patient at a
time, then `--memory_concurrency N` at once (their calls share micro-batches), on the embedded SmolLM2 (`hf`, in
process) with JSON-schema decoding. Retrieval only (`--model none`), so the time is the memory's construction.

Run: .venv/bin/python scripts/bench_memory.py [--patients 4] [--concurrency 4] [--memory memos]
     [--memory_args max_items=2]
Prints, per setting: wall seconds, construction calls, completion tokens, calls per second, the speed-up, and
whether the stored memories give the same samples (batched greedy decoding may differ in the last digits of
the logits, so a token can change; the scripted-backbone test shows the runner itself changes nothing).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from medmemorybench.harness.config import RunConfig  # noqa: E402
from medmemorybench.harness.results import read_samples  # noqa: E402
from medmemorybench.harness.runner import Runner  # noqa: E402
from medmemorybench.models import parse_model_args  # noqa: E402
from tests.helpers import export_small_dataset  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--patients", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--memory", default="memos")
    parser.add_argument("--memory_args", default="max_items=2")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = export_small_dataset(work / "data", personas=args.patients)
        results = {}
        for concurrency in (1, args.concurrency):
            config = RunConfig(tasks=["medmemorybench_efficient_eem"], output_path=work / f"run{concurrency}",
                               memory=args.memory, memory_args=parse_model_args(args.memory_args),
                               memory_model="hf", dataset_path=str(data), checkpoints=[10], use_cache=False,
                               memory_concurrency=concurrency)
            started = time.perf_counter()
            Runner(config).run()
            took = time.perf_counter() - started
            samples = read_samples(config.output_path / "samples.jsonl")
            costs = {s["persona_id"]: s["memory_cost"] for s in samples}
            calls = sum(c["llm_calls"] for c in costs.values())
            tokens = sum(c["completion_tokens"] for c in costs.values())
            stored = [(s["query_id"], [i["session_ids"] for i in s["retrieved"]]) for s in samples]
            results[concurrency] = (took, calls, stored)
            print(f"concurrency {concurrency}: {took:.1f} s, {calls} construction calls, {tokens} completion tokens, "
                  f"{calls / took:.2f} calls/s, items {sum(c['items'] for c in costs.values())}")
        (one, _, first), (many, _, second) = results[1], results[args.concurrency]
        print(f"speed-up at concurrency {args.concurrency}: {one / many:.2f}x; same retrievals: {first == second} "
              f"({sum(a == b for a, b in zip(first, second, strict=True))} of {len(first)} questions)")
        print(json.dumps({"patients": args.patients, "concurrency": args.concurrency, "sequential_s": round(one, 1),
                          "concurrent_s": round(many, 1)}))


if __name__ == "__main__":
    main()
