"""Benchmark of how the consultations read: build the default dataset and measure its variety per language.

Run: .venv/bin/python scripts/bench_variety.py [--seed 0] [--personas 20] [--language en|zh|both]
Prints, per language and mode, the share of duplicate turns, distinct-1/-2 (English words; Chinese characters
and jieba words), the most repeated turn, and the share of the patient's turns that are stock filler, each
against the targets of issue 12 (`medmemorybench/dataset/variety.py`), for docs/benchmarks.md and the card.
"""

from __future__ import annotations

import argparse
import os
import time

from medmemorybench.dataset import BuildOptions, build_dataset
from medmemorybench.dataset.variety import TARGETS
from medmemorybench.knowledge import default_knowledge


def verdicts(stats: dict) -> list[str]:
    """Each target, met or not, from a build's statistics."""
    out = []
    for config, units in stats["variety"].items():
        for unit, scopes in units.items():
            for scope, v in scopes.items():
                if scope == "all":
                    key = "distinct_2_efficient" if config.startswith("efficient") else "distinct_2_mixed"
                    out.append(f"{config}/{unit}: distinct-2 {v['distinct_2']:.3f} (target >= {TARGETS[key]}) "
                               f"{'met' if v['distinct_2'] >= TARGETS[key] else 'NOT met'}")
                    met = v["max_repeat"] <= TARGETS["max_repeat"]
                    out.append(f"{config}/{unit}: most repeated turn {v['max_repeat']}x (target <= "
                               f"{TARGETS['max_repeat']}) {'met' if met else 'NOT met'}")
                else:
                    ok = v["duplicate_share"] <= TARGETS["duplicate_share"]
                    out.append(f"{config}/{unit}/{scope}: duplicate turns {v['duplicate_share']:.1%} (target <= "
                               f"{TARGETS['duplicate_share']:.0%}) {'met' if ok else 'NOT met'}")
    for language, share in stats["filler_share"].items():
        ok = share <= TARGETS["filler_share"]
        out.append(f"{language}: stock-filler patient turns {share:.1%} (target <= {TARGETS['filler_share']:.0%}) "
                   f"{'met' if ok else 'NOT met'}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--personas", type=int, default=20)
    parser.add_argument("--language", default="en", choices=["en", "zh", "both"])
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    languages = ["en", "zh"] if args.language == "both" else [args.language]
    for language in languages:
        start = time.perf_counter()
        built = build_dataset(default_knowledge(), None, BuildOptions(seed=args.seed, personas=args.personas,
                                                                      language=language))
        print(f"## {language}: seed {args.seed}, {args.personas} patients, build {time.perf_counter() - start:.1f} s")
        print(built.stats["variety_table"][language])
        print()
        print("\n".join(verdicts(built.stats)))
        print()


if __name__ == "__main__":
    main()
