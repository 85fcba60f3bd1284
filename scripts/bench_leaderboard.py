"""Measure the leaderboard: verifying and re-scoring a run, and reading and rendering boards of N runs (the run's
bundle copied under N system names); optionally screenshot a results folder's page in headless Chromium.

    .venv/bin/python scripts/bench_leaderboard.py --run runs/bm25 --dataset_path out/medmemorybench
    .venv/bin/python scripts/bench_leaderboard.py --results demo_output/results --screenshot docs/leaderboard.png
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from medmemorybench.leaderboard import (  # noqa: E402
    load_board,
    prepare_submission,
    relative_link,
    render_page,
    verify_run,
    write_site,
    write_to_folder,
)
from medmemorybench.leaderboard.bundle import slug  # noqa: E402


def timed(label: str, fn):  # noqa: ANN001, ANN201
    started = time.perf_counter()
    value = fn()
    print(f"{label}: {time.perf_counter() - started:.2f} s", flush=True)
    return value


def bench(run: Path, dataset: Path, counts: list[int], verify_counts: list[int]) -> None:
    samples = sum(1 for line in (run / "samples.jsonl").open() if line.strip())
    print(f"run {run}: {samples} samples, {(run / 'samples.jsonl').stat().st_size / 1e6:.1f} MB", flush=True)
    timed("verify_run, cold (reads and fingerprints the release)", lambda: verify_run(run, dataset))
    timed("verify_run, warm (release already read)", lambda: verify_run(run, dataset))
    submission = timed("prepare_submission (verify + bundle)", lambda: prepare_submission(run, dataset_path=dataset,
                                                                                           allow_partial=True))
    work = Path(tempfile.mkdtemp(prefix="bench-board-"))
    try:
        results = work / "results"
        first = write_to_folder(submission, results)
        for count in counts:
            for index in range(len(list((results / "submissions").glob("*/*/*"))), count):
                target = results / "submissions" / slug(f"system {index}") / first.parent.name / first.name
                shutil.copytree(first, target)
            board = timed(f"load_board, {count} runs", lambda: load_board(results))
            page = timed(f"render_page, {count} runs", lambda b=board: render_page(b, "results"))
            print(f"page size, {count} runs: {len(page.encode()) / 1e3:.0f} kB", flush=True)
            if count in verify_counts:
                timed(f"load_board --verify, {count} runs", lambda: load_board(results, verify_with=dataset))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def screenshot(results: Path, out: Path) -> None:
    from tests.leaderboard.browser import Browser

    html = Path(tempfile.mkdtemp(prefix="board-"))
    try:
        page = write_site(load_board(results, samples_link=relative_link(results, html)), html, str(results))
        with Browser(width=1660, height=900) as browser:
            browser.open(page.resolve().as_uri())
            browser.screenshot(out)
        print(f"screenshot: {out} ({out.stat().st_size / 1e3:.0f} kB)")
    finally:
        shutil.rmtree(html, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", type=Path, help="a finished run folder")
    parser.add_argument("--dataset_path", type=Path, help="the release it ran on")
    parser.add_argument("--counts", default="1,10,50", help="board sizes to read and render")
    parser.add_argument("--verify-counts", default="10", help="board sizes to also read with --verify")
    parser.add_argument("--results", type=Path, help="with --screenshot: the results folder to show")
    parser.add_argument("--screenshot", type=Path, help="write a PNG of the page of --results")
    args = parser.parse_args()
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    if args.run:
        bench(args.run, args.dataset_path, [int(c) for c in args.counts.split(",")],
              [int(c) for c in args.verify_counts.split(",") if c])
    if args.screenshot:
        screenshot(args.results, args.screenshot)


if __name__ == "__main__":
    main()
