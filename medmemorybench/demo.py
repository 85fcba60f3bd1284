"""`medmemorybench demo`: the main job on the embedded defaults, offline, as a list of steps.

It prints its plan first, each step's progress as it goes (`console.StageProgress`: dated lines with an ETA when
the output is a log), and last a summary: how long each step took and where everything is. A step is a name, a
line for the plan and a function of the shared `DemoContext`; adding one to the demo is appending to `DEMO_STEPS`.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from medmemorybench.console import build_with_progress, clock, print_report, run_with_progress, say

CHUNKING = {"chunking": "turns", "window": 4, "stride": 4}
"""bm25 and dense index the same chunks: windows of 4 turns, one every 4 turns (half the chunks of bm25's default
stride 2). Run labels show it."""
RETRIEVAL_PATIENTS = 8
"""Patients bm25 and dense read: the first eight by id (P0001-P0008, the roster's first eight conditions), the same
for both. Embedding is the demo's cost: all 20 patients' windows, about 12,000 MiniLM passes, were 22 of the demo's
25 minutes on two loaded cores, and ten patients 5-8 minutes of a cold demo of 10 min 14 s on quiet ones
(docs/benchmarks.md); the target is under 10."""
QA_CHECKPOINTS = [20, 100]
"""Where SmolLM2 answers: near the start and at the end of the year (about 11 questions each). A third checkpoint
took the cold demo to 10 min 49 s on two quiet cores (docs/benchmarks.md); the target is under 10."""


@dataclass
class DemoContext:
    """What the steps share: the options, and what earlier steps made."""

    output_path: Path
    seed: int = 0
    qa_patients: int = 1
    dataset: Path | None = None
    """The build (set by the build step)."""
    runs: dict[str, Path] = field(default_factory=dict)
    """Run folders by step name."""
    outputs: list[str] = field(default_factory=list)
    """Lines for the final summary: where things are."""

    @property
    def runs_folder(self) -> Path:
        return self.output_path / "runs"


@dataclass(frozen=True)
class DemoStep:
    """One step: `what` is its line in the plan."""

    name: str
    what: str
    run: Callable[[DemoContext], None]


def _build(ctx: DemoContext) -> None:
    from medmemorybench.dataset import BuildOptions

    ctx.dataset = build_with_progress(ctx.output_path, BuildOptions(seed=ctx.seed), overwrite=True)
    shutil.rmtree(ctx.runs_folder, ignore_errors=True)  # (runs of an older build would not match it)
    ctx.outputs.append(f"dataset: {ctx.dataset} (also load_dataset('medmemorybench', 'mixed') from any folder)")


def _evaluate(name: str, patients: Callable[[DemoContext], int], **options: object) -> Callable[[DemoContext], None]:
    """A step running one evaluation of the build into `runs/<name>`, over the first `patients(ctx)` patients."""
    def step(ctx: DemoContext) -> None:
        from medmemorybench.harness.config import RunConfig

        folder = ctx.runs_folder / name
        config = RunConfig(output_path=folder, dataset_path=str(ctx.dataset), limit=patients(ctx),
                           **options)  # type: ignore[arg-type]
        summary = run_with_progress(config, name)
        ctx.runs[name] = folder
        ctx.outputs.append(f"{name}: {summary}")
    return step


def _report(ctx: DemoContext) -> None:
    plot = print_report(list(ctx.runs.values()), ctx.runs_folder / "saturation.png")
    ctx.outputs.append(f"saturation plot: {plot}")
    ctx.outputs.append(f"compare again: medmemorybench report {' '.join(str(p) for p in ctx.runs.values())}")


def _leaderboard(ctx: DemoContext) -> None:
    """Submit the runs to a local results folder (each re-scored; the QA run is a slice) and write the board."""
    from medmemorybench.leaderboard import load_board, prepare_submission, relative_link, write_site, write_to_folder

    results, html = ctx.output_path / "results", ctx.output_path / "leaderboard"
    shutil.rmtree(results, ignore_errors=True)
    for run in ctx.runs.values():
        write_to_folder(prepare_submission(run, dataset_path=ctx.dataset, allow_partial=True), results)
    board = load_board(results, samples_link=relative_link(results, html),
                       on_left_out=lambda reason: say(f"left out: {reason}"))
    page = write_site(board, html, str(results))
    ctx.outputs.append(f"leaderboard (the demo's runs beside the paper's reference rows): open {page.resolve()}")


DEMO_STEPS: list[DemoStep] = [
    DemoStep("build", "build the dataset (20 patients, seed 0, both modes), validate, audit, register it",
             _build),
    DemoStep("bm25", f"BM25 retrieval over {RETRIEVAL_PATIENTS} patients, both modes, every checkpoint: Recall@5 "
             "and MRR (4-turn windows, stride 4)",
             _evaluate("bm25", lambda _ctx: RETRIEVAL_PATIENTS, tasks=["medmemorybench"], memory="bm25",
                       memory_args=dict(CHUNKING))),
    DemoStep("dense", "dense retrieval (all-MiniLM-L6-v2 on CPU), the same patients, chunks and measures as bm25",
             _evaluate("dense", lambda _ctx: RETRIEVAL_PATIENTS, tasks=["medmemorybench"], memory="dense",
                       memory_args=dict(CHUNKING))),
    DemoStep("smollm2_bm25", f"SmolLM2-135M answers over bm25 (default chunking), efficient mode, checkpoints "
             f"{', '.join(map(str, QA_CHECKPOINTS))}, the first --qa_patients patients",
             _evaluate("smollm2_bm25", lambda ctx: ctx.qa_patients, tasks=["medmemorybench_efficient"],
                       memory="bm25", model="hf", checkpoints=QA_CHECKPOINTS)),
    DemoStep("report", "tables of every run and the saturation plot (efficient-mixed gap with 95 % intervals)",
             _report),
    DemoStep("leaderboard", "submit the runs to a local results folder (re-scored) and write the leaderboard page",
             _leaderboard),
]


def run_demo(ctx: DemoContext, steps: list[DemoStep] | None = None) -> None:
    """Print the plan, run the steps in order, print the summary."""
    steps = DEMO_STEPS if steps is None else steps
    say(f"MedMemoryBench demo: {len(steps)} steps, everything under {ctx.output_path}/ (offline, CPU)")
    for number, step in enumerate(steps, start=1):
        say(f"  {number}. {step.name}: {step.what}")
    timings = []
    started = time.monotonic()
    for number, step in enumerate(steps, start=1):
        say(f"[{number}/{len(steps)}] {step.name} ...")
        step_started = time.monotonic()
        step.run(ctx)
        timings.append((step.name, time.monotonic() - step_started))
        say(f"[{number}/{len(steps)}] {step.name}: done in {clock(timings[-1][1])}")
    say(f"demo done in {clock(time.monotonic() - started)} "
        f"({', '.join(f'{name} {clock(seconds)}' for name, seconds in timings)})")
    for line in ctx.outputs:
        say(f"  {line}")
