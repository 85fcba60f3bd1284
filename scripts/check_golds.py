"""Every gold answer of a build scores correct under its own scorer: the scorer must accept the answer the dataset
itself calls right (a gold it rejects is a scorer bug or a gold that states less than its facts).

Run: .venv/bin/python scripts/check_golds.py /tmp/b21/medmemorybench [/tmp/b5/medmemorybench ...]
Prints, per build and language, how many golds scored correct, then each one that did not with the scorer's reason;
exits 1 when any gold fails.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from medmemorybench.dataset.load import read_rows
from medmemorybench.dataset.schema import LANGUAGES, config_name
from medmemorybench.scoring import score_answer


def failed_golds(build: Path) -> tuple[dict[str, int], list[tuple[str, dict, str]]]:
    """How many golds each language has, and each gold (language, row, reason) its own scorer rejects."""
    rows = read_rows(build)
    counts: dict[str, int] = {}
    failed = []
    for language in LANGUAGES:
        for split in rows.get(config_name("questions", language), {}).values():
            for row in split:
                counts[language] = counts.get(language, 0) + 1
                correct = score_answer(row, row["answer"])["correct"]
                if correct.value != 1.0:
                    failed.append((language, row, correct.explanation))
    return counts, failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("builds", type=Path, nargs="+", help="dataset folders (<out>/medmemorybench)")
    args = parser.parse_args()
    any_failed = False
    for build in args.builds:
        start = time.perf_counter()
        counts, failed = failed_golds(build)
        print(f"{build}: " + ", ".join(f"{lang} {n - sum(f[0] == lang for f in failed)} of {n} golds correct"
                                       for lang, n in counts.items())
              + f" ({time.perf_counter() - start:.0f} s)")
        for language, row, why in failed:
            print(f"- {row['query_id']} [{row['query_type']} {language}] gold: {row['answer']!r}\n  scorer: {why}")
        any_failed |= bool(failed)
    return 1 if any_failed else 0


if __name__ == "__main__":
    sys.exit(main())
