"""Whole years for a physician to read: the `show` timeline and every consultation, one text file per patient.

The standing physician review (docs/simulation.md) reads five whole years of a fresh seed after every change to
clinical content; this writes what the reviewers read, from a build and the years it was simulated from.

    medmemorybench simulate --seed 13 --out /tmp/s13
    medmemorybench build --seed 13 --output_path /tmp/b13 --no-register
    python scripts/year_reading.py --years /tmp/s13 --build /tmp/b13/medmemorybench \\
        --persona P0004 P0007 P0009 P0014 P0015 --out /tmp/review13
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path
from typing import NoReturn

import pandas as pd
from rich.console import Console

from medmemorybench.knowledge import default_knowledge
from medmemorybench.simulate.show import render_timeline
from medmemorybench.simulate.store import read_care_year

WIDTH = 250
"""Console width of the timeline (wide enough that a reader sees each event on few lines)."""


def fail(message: str) -> NoReturn:
    """One line naming the file at fault, exit 2 (bad input), as the CLI does."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def consultations(build: Path, persona: str, config: str) -> list[dict]:
    """Every regular session of `persona` in `config`, in date order (each checkpoint split holds its own window)."""
    files = sorted((build / config).glob("checkpoint_*.parquet"))
    if not files:
        fail(f"{build / config}: no checkpoint_*.parquet; give the build's medmemorybench folder")
    sessions = {}
    for file in files:
        rows = pd.read_parquet(file)
        for _, row in rows[rows.persona_id == persona].iterrows():
            sessions.update({s["session_id"]: s for s in row["sessions"] if s["kind"] == "regular"})
    return sorted(sessions.values(), key=lambda s: (s["date"], s["session_id"]))


def reading(years: Path, build: Path, persona: str, config: str) -> str:
    year_file = years / f"{persona}.json"
    if not year_file.is_file():
        fail(f"{year_file}: no such year; simulate the build's seed into --years")
    buffer = io.StringIO()
    render_timeline(default_knowledge(), read_care_year(year_file), Console(file=buffer, width=WIDTH))
    lines = [buffer.getvalue(), f"\n================ CONSULTATIONS ({config}, in date order) ================\n"]
    for session in consultations(build, persona, config):
        lines.append(f"\n--- {session['session_id']} {session['date']} ---")
        lines += [f"{turn['role'].upper()}: {turn['text']}" for turn in session["turns"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--years", type=Path, required=True, help="folder `simulate` wrote (one JSON per patient)")
    parser.add_argument("--build", type=Path, required=True, help="the build's medmemorybench folder")
    parser.add_argument("--persona", nargs="+", required=True, help="persona ids (P0004 ...)")
    parser.add_argument("--config", default="efficient", choices=["efficient", "efficient_zh"])
    parser.add_argument("--out", type=Path, required=True, help="folder for <persona>.txt")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for persona in args.persona:
        text = reading(args.years, args.build, persona, args.config)
        (args.out / f"{persona}.txt").write_text(text, encoding="utf-8")
        print(f"{persona}: {len(text):,} characters -> {args.out / f'{persona}.txt'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
