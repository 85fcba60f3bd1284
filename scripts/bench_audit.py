"""Benchmark of the questions: build the default dataset per seed (timed) and run the memory-less audit on it.

Run: .venv/bin/python scripts/bench_audit.py [--seeds 0 1 2] [--language en|zh|both]
Prints, per seed, the build time, the question counts by type and checkpoint, the evidence-age distribution,
and the audit table (its BM25 row: Recall@5 per type in both modes, through the harness's observed sessions), for
docs/benchmarks.md and docs/dataset.md.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import Counter
from pathlib import Path

from medmemorybench.dataset import BuildOptions, build_dataset, export_dataset
from medmemorybench.dataset.audit import age_distribution, audit_folder, format_table, six_type_count
from medmemorybench.dataset.schema import config_name
from medmemorybench.knowledge import default_knowledge
from medmemorybench.questions.spec import type_codes


def audit_seed(seed: int, work: Path, language: str) -> None:
    kb = default_knowledge()
    start = time.perf_counter()
    built = build_dataset(kb, None, BuildOptions(seed=seed, language=language))
    folder = export_dataset(built, work / f"seed{seed}")
    build_s = time.perf_counter() - start
    first = built.stats["languages"][0]
    questions = [q for split in built.rows[config_name("questions", first)].values() for q in split]
    by_type = Counter(q["query_type"] for q in questions)
    print(f"## seed {seed}: build {build_s:.1f} s; {len(questions)} questions, six paper types "
          f"{six_type_count(questions)}; " + ", ".join(f"{t} {by_type[t]}" for t in type_codes())
          + f"; cohort prior draws {built.stats['prior_draws']}")
    per = Counter((q["checkpoint"], q["query_type"]) for q in questions)
    checkpoints = sorted({q["checkpoint"] for q in questions})
    print("per checkpoint (" + "/".join(type_codes()) + "): " + "; ".join(
        f"{c}: {'/'.join(str(per[(c, t)]) for t in type_codes())}" for c in checkpoints))
    print(f"evidence age (sessions back to the oldest evidence, answerable): {age_distribution(questions)}")
    for lang in built.stats["languages"]:
        mine = [q for split in built.rows[config_name("questions", lang)].values() for q in split]
        print(f"### questions in '{lang}'")
        print(format_table(audit_folder(mine, folder, language=lang)))  # (the BM25 row: R@5 per type, both modes)
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--language", default="both", choices=["en", "zh", "both"])
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    with tempfile.TemporaryDirectory() as work:
        for seed in args.seeds:
            audit_seed(seed, Path(work), args.language)


if __name__ == "__main__":
    main()
