"""Progress where nobody watches a terminal: dated lines in a log, with the stage, checkpoint, patient, rate and ETA."""

from __future__ import annotations

import io
import re
import time

from rich.console import Console

from medmemorybench.console import StageProgress, clock
from medmemorybench.harness.progress import Progress
from tests.helpers import run_cli


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


def last_line(stage: str, steps: list[tuple[float, Progress]]) -> str:
    """The last log line of a stage given each progress step at its (fake) time, every step printed."""
    out, buffer = log_console()
    now = Clock()
    with StageProgress(stage, out, interval_s=0, now=now) as progress:
        for at, step in steps:
            now.now = at
            progress.run(step)
    return buffer.getvalue().splitlines()[-1]


def test_a_new_task_restarts_its_rate_and_eta():
    last = last_line("bm25", [
        (100, Progress("medmemorybench_efficient", "answer", "checkpoint_100", 10, 10, 20, 20, sessions=200)),
        (110, Progress("medmemorybench_mixed", "answer", "checkpoint_10", 1, 10, 20, 20, sessions=100))])
    assert "100 sessions (10/s)" in last and "elapsed 0:10" in last and "ETA ~1:30" in last


def test_build_lines_count_each_phase_with_its_own_rate():
    out, buffer = log_console()
    now = Clock()
    with StageProgress("build", out, interval_s=5, now=now) as progress:
        progress.step("rendering patient", 0, 4)
        for done in range(1, 5):
            now.now = 2.0 * done
            progress.step("rendering patient", done, 4)
        progress.step("asking questions, patient", 0, 4)
        now.now = 20.0
        progress.step("asking questions, patient", 1, 4)
        progress.step("writing the dataset", 0, 1)
    lines = buffer.getvalue().splitlines()
    assert len(lines) == 6, lines
    assert "rendering patient 0/4 · elapsed 0:00 · ETA ~-" in lines[0]
    assert "rendering patient 1/4 · 30/min · elapsed 0:02 · ETA ~0:06" in lines[1]
    assert "rendering patient 4/4 · 30/min · elapsed 0:08 · ETA ~0:00" in lines[2]
    # the next phase's rate and ETA start where it began (12 s per patient), not at the build's start
    assert "asking questions, patient 1/4 · 5.0/min · elapsed 0:20 · ETA ~0:36" in lines[4]
    assert lines[5].endswith("build: writing the dataset · elapsed 0:20")


def test_a_step_with_no_news_for_the_interval_gets_a_line_saying_what_it_still_does():
    out, buffer = log_console()
    with StageProgress("run", out, interval_s=0.2) as progress:
        progress.run(Progress("medmemorybench_efficient", "answering", "checkpoint_10", 1, 10, 20, 20, answered=3,
                              to_answer=40))
        time.sleep(0.7)  # one slow batch: nothing reports
    lines = buffer.getvalue().splitlines()
    assert "answering 3/40" in lines[0]
    doing = "still medmemorybench_efficient checkpoint_10 (1/10) · answering 3/40"
    still = [line for line in lines[1:] if doing in line]
    assert len(still) >= 2 and len(still) == len(lines) - 1, lines
    # the heartbeat ends with the stage
    count = len(buffer.getvalue().splitlines())
    time.sleep(0.3)
    assert len(buffer.getvalue().splitlines()) == count


def test_answers_coming_back_move_the_line_and_the_eta():
    last = last_line("smollm2", [
        (50, Progress("medmemorybench_efficient", "ingest", "checkpoint_10", 1, 1, 1, 1, sessions=10)),
        (100, Progress("medmemorybench_efficient", "answering", "checkpoint_10", 1, 1, 1, 1, answered=10,
                       to_answer=20))])
    # half the reading (1 of 2 parts) and half the answers: 3/4 done in 100 s
    assert "checkpoint_10 (1/1) · answering 10/20 · 10 sessions (0.1/s) · elapsed 1:40 · ETA ~0:33" in last


def test_clock():
    assert (clock(0), clock(61.4), clock(3725)) == ("0:00", "1:01", "1:02:05")


def test_a_run_writing_to_a_log_prints_progress_lines(tmp_path):
    out = tmp_path / "out"
    built = run_cli("build", "--seed", "0", "--output_path", str(out), "--personas", "2", "--health_sessions", "5",
                    "--family_sessions", "5", "--no-register", "--language", "en")
    assert built.returncode == 0, built.stderr
    # every phase of a build says when it starts, not only the rendering (minutes passed unannounced after it)
    for phase in ("simulating patient 0/2", "simulating patient 2/2",
                  "estimating what a year gives away without memory (the cohort prior)",
                  "rendering patient 0/2", "rendering patient 2/2", "asking questions, patient 2/2",
                  "measuring variety and auditing, language done", "validating the rows",
                  "writing the dataset done"):
        assert f"build: {phase}" in built.stderr, (phase, built.stderr)
    result = run_cli("run", "--tasks", "medmemorybench_efficient", "--memory", "bm25", "--checkpoints", "10,20",
                     "--dataset_path", str(out / "medmemorybench"), "--output_path", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    assert re.search(r"run: medmemorybench_efficient checkpoint_20 \(2/2\) done · \d+ sessions .* ETA ~0:00",
                     result.stderr)


def test_a_stage_says_it_is_starting_before_its_first_news():
    out, buffer = log_console()
    with StageProgress("smollm2", out, interval_s=0.2):
        time.sleep(0.45)  # (loading a model: no progress yet)
    lines = buffer.getvalue().splitlines()
    assert lines and all("smollm2: still starting (loading data and models)" in line for line in lines)


def test_progress_bars_of_libraries_are_off_when_the_command_writes_to_a_log():
    import os
    import subprocess
    import sys

    names = ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS")
    code = f"import os, medmemorybench.cli; print(*(os.environ.get(n) for n in {names!r}))"
    env = {k: v for k, v in os.environ.items() if k not in names}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)  # (stderr: a pipe)
    assert result.stdout.split() == ["1", "1"], result.stderr
