"""Progress where nobody watches a terminal: dated lines in a log, with the stage, checkpoint, patient, rate and ETA."""

from __future__ import annotations

import io
import re

from rich.console import Console

from medmemorybench.console import StageProgress, clock
from medmemorybench.harness.progress import Progress
from tests.cli.test_simulate_cli import run_cli


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def log_console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=False, width=200), buffer


def test_lines_name_stage_task_checkpoint_patient_rate_and_eta():
    out, buffer = log_console()
    now = Clock()
    with StageProgress("dense", out, interval_s=10, now=now) as progress:
        now.now = 30
        progress.run(Progress("medmemorybench_mixed", "ingest", "checkpoint_10", 1, 10, 1, 20, sessions=30))
        now.now = 35  # within the interval: no line
        progress.run(Progress("medmemorybench_mixed", "ingest", "checkpoint_10", 1, 10, 2, 20, sessions=30))
        now.now = 60  # a checkpoint done always prints
        progress.run(Progress("medmemorybench_mixed", "answer", "checkpoint_10", 1, 10, 20, 20, answers=12))
    lines = buffer.getvalue().splitlines()
    assert len(lines) == 2
    assert re.search(r"^\[\d\d:\d\d:\d\d\] dense: medmemorybench_mixed checkpoint_10 \(1/10\) · patient 1/20 · "
                     r"30 sessions \(1.0/s\) · elapsed 0:30 · ETA ~", lines[0])
    # one checkpoint of ten took a minute: nine more to go
    assert ("checkpoint_10 (1/10) done · 60 sessions (1.0/s), 12 questions (12/min) · elapsed 1:00 · "
            "ETA ~9:00") in lines[1]


def test_a_new_task_restarts_its_rate_and_eta():
    out, buffer = log_console()
    now = Clock()
    with StageProgress("bm25", out, interval_s=0, now=now) as progress:
        now.now = 100
        progress.run(Progress("medmemorybench_efficient", "answer", "checkpoint_100", 10, 10, 20, 20, sessions=200))
        now.now = 110
        progress.run(Progress("medmemorybench_mixed", "answer", "checkpoint_10", 1, 10, 20, 20, sessions=100))
    last = buffer.getvalue().splitlines()[-1]
    assert "100 sessions (10/s)" in last and "elapsed 0:10" in last and "ETA ~1:30" in last


def test_build_lines_count_patients():
    out, buffer = log_console()
    now = Clock()
    with StageProgress("build", out, interval_s=5, now=now) as progress:
        for done in range(1, 5):
            now.now = 2.0 * done
            progress.patient(done, 4)
    lines = buffer.getvalue().splitlines()
    assert len(lines) == 2 and "patient 1/4" in lines[0] and "ETA ~0:06" in lines[0]
    assert "patient 4/4 · 30 patients/min · elapsed 0:08 · ETA ~0:00" in lines[1]


def test_clock():
    assert (clock(0), clock(61.4), clock(3725)) == ("0:00", "1:01", "1:02:05")


def test_a_run_writing_to_a_log_prints_progress_lines(tmp_path):
    out = tmp_path / "out"
    assert run_cli("build", "--seed", "0", "--output_path", str(out), "--personas", "2", "--health_sessions", "5",
                   "--family_sessions", "5", "--no-register").returncode == 0
    result = run_cli("run", "--tasks", "medmemorybench_efficient", "--memory", "bm25", "--checkpoints", "10,20",
                     "--dataset_path", str(out / "medmemorybench"), "--output_path", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    assert re.search(r"run: medmemorybench_efficient checkpoint_20 \(2/2\) done · \d+ sessions .* ETA ~0:00",
                     result.stderr)
