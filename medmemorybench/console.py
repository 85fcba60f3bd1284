"""What the command line shows: the consoles, progress (a bar on a terminal, dated lines in a log), the build
summary and the report tables. Only the CLI layer (`cli.py`, `demo.py`) prints; the library reports through
callbacks and return values.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as Bar
from rich.table import Table

from medmemorybench.harness.progress import Progress

LOG_WIDTH = 200
"""Columns of tables written to a file or pipe (rich's 80 would fold a report's wide tables beyond reading)."""
HEARTBEAT_SHARE = 0.9
"""A stage with no news prints its "still ..." line after this share of `LINE_INTERVAL_S` without a line."""
LINE_INTERVAL_S = 10.0
"""In a log, the most seconds between two progress lines while a stage moves (a checkpoint done always prints)."""

console = Console(width=None if sys.stdout.isatty() else LOG_WIDTH)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else LOG_WIDTH)


def say(text: str, out: Console | None = None) -> None:
    """One plain line (no markup, no highlighting: paths and numbers print as they are)."""
    (out or console).print(text, markup=False, highlight=False, soft_wrap=True)


def clock(seconds: float) -> str:
    """1:02 or 1:02:03."""
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def rate(count: float, seconds: float) -> str:
    """count / seconds, to one decimal below 10 (a slow stage's 0.4/s does not read as 0)."""
    value = count / max(seconds, 1e-9)
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


class StageProgress:
    """Progress of one stage (a build, a run): a rich bar on a terminal; in a log, a dated line per checkpoint done
    and at most every `LINE_INTERVAL_S` between, with the stage, task, checkpoint, patient, rate and ETA, and where a
    step gives no news for that long (one slow batch, a phase with no count), a line saying what it is still doing.

    Use as a context manager; pass `run` to `run_evaluation` and `step` to `build_dataset`.
    """

    def __init__(self, stage: str, out: Console | None = None, *, interval_s: float = LINE_INTERVAL_S,
                 now: Callable[[], float] = time.monotonic) -> None:
        self.stage, self.out, self.interval_s, self.now = stage, out or err_console, interval_s, now
        self.is_terminal = self.out.is_terminal
        self.bar: Bar | None = None
        self.started = self.task_started = self.last_event = self.now()
        self.last_line = float("-inf")
        self.task = ""
        self.sessions = self.answers = 0
        self.phase, self.phase_started = "", self.started
        self.doing = "starting (loading data and models)"  # what the stage does now, for a silent step's line
        self._lock = threading.Lock()
        self._wall_start = self._quiet_since = time.monotonic()  # (the wall clock: `now` may be a test's)
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def __enter__(self) -> StageProgress:
        if self.is_terminal:
            self.bar = Bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                           console=self.out, transient=False)
            self.bar.start()
            self.bar_id = self.bar.add_task(self.stage, total=None)
        elif self.interval_s > 0:
            self._beat = threading.Thread(target=self._heartbeat, name=f"{self.stage}-progress", daemon=True)
            self._beat.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
        if self.bar is not None:
            self.bar.stop()

    def _heartbeat(self) -> None:
        """In a log, a line before `interval_s` passes without one while the stage still works (woken when it is due,
        at 90 % of the interval: the log's gaps stay under it whatever the printing costs)."""
        due = HEARTBEAT_SHARE * self.interval_s
        wait = due
        while not self._stop.wait(wait):
            with self._lock:
                quiet = time.monotonic() - self._quiet_since
                if quiet >= due:
                    # (the time since the stage began: a task's own lines give its elapsed time, from its start)
                    self._say(f"still {self.doing} · {clock(time.monotonic() - self._wall_start)} since the "
                              f"{self.stage} began")
                    quiet = 0.0
            wait = max(due - quiet, 0.05)

    def _say(self, text: str) -> None:
        say(f"[{time.strftime('%H:%M:%S')}] {self.stage}: {text}", self.out)
        self._quiet_since = time.monotonic()

    def note(self, text: str) -> None:
        """A line of news, always printed (a sweep's cell finished or failed)."""
        with self._lock:
            self._say(text)

    def _line(self, text: str, force: bool, doing: str) -> None:
        with self._lock:
            self.doing = doing
            now = self.now()
            if force or now - self.last_line >= self.interval_s:
                self.last_line = now
                self._say(text)

    def run(self, progress: Progress) -> None:
        """`run_evaluation`'s progress callback."""
        now = self.now()
        if progress.task != self.task:  # each task of a run has its own rate and ETA, from where the last one ended
            self.task, self.task_started, self.sessions, self.answers = progress.task, self.last_event, 0, 0
        self.last_event = now
        self.sessions += progress.sessions
        self.answers += progress.answers
        if self.bar is not None:
            self.bar.update(self.bar_id, description=f"{self.stage}: {progress.task} {progress.split}",
                            completed=progress.checkpoint - (progress.step != "answer"), total=progress.checkpoints)
            return
        elapsed = now - self.task_started
        where = f"{progress.task} {progress.split} ({progress.checkpoint}/{progress.checkpoints})"
        if progress.step == "ingest":
            where += f" · patient {progress.patients_done}/{progress.patients}"
        elif progress.step == "answering":
            where += f" · answering {progress.answered}/{progress.to_answer}"
        doing = where
        if progress.step == "answer":
            where += " done"
            doing = f"{progress.task}: on to the next checkpoint"
        rates = [f"{self.sessions} sessions ({rate(self.sessions, elapsed)}/s)"]
        if self.answers:  # (answered, or only retrieved for in a retrieval-only run)
            rates.append(f"{self.answers} questions ({rate(60 * self.answers, elapsed)}/min)")
        fraction = progress.fraction
        eta = f"ETA ~{clock(elapsed / fraction * (1 - fraction))}" if fraction > 0 else "ETA -"
        self._line(f"{where} · {', '.join(rates)} · elapsed {clock(elapsed)} · {eta}",
                   force=progress.step == "answer", doing=doing)

    def step(self, phase: str, done: int, total: int) -> None:
        """A step of a phase ("rendering patient", 3, 20): `build_dataset`'s `on_step`. A counted phase (total > 1)
        has its own rate and ETA; its first and last steps, and any phase of one step, always print."""
        if self.bar is not None:
            self.bar.update(self.bar_id, description=f"{self.stage}: {phase}", completed=done, total=total)
            return
        now = self.now()
        if phase != self.phase:
            self.phase, self.phase_started = phase, now
        elapsed, since_start = now - self.phase_started, clock(now - self.started)
        if total > 1:
            eta = clock(elapsed / done * (total - done)) if done else "-"
            pace = f" · {rate(60 * done, elapsed)}/min" if done and elapsed >= 1 else ""
            self._line(f"{phase} {done}/{total}{pace} · elapsed {since_start} · ETA ~{eta}",
                       force=done in (0, 1, total), doing=f"{phase} {min(done + 1, total)}/{total}")
        else:
            self._line(f"{phase}{' done' if done else ''} · elapsed {since_start}", force=True, doing=phase)


def build_with_progress(out: Path, options: Any, overwrite: bool, backbone: Any = None,
                        allow_audit_failures: bool = False, register: bool = True,
                        sealed_gold: Path | None = None) -> Path:
    """Build and export with progress (refusing an invalid dataset, and one failing the audit unless allowed), print
    the summary, and register the build under the bare name; returns the dataset folder (with `sealed_gold`: the
    public half of a hidden-gold release)."""
    from medmemorybench.dataset.pipeline import build_and_export

    with StageProgress("build") as progress:
        folder, built = build_and_export(out, options, overwrite=overwrite, backbone=backbone,
                                         allow_audit_failures=allow_audit_failures, on_step=progress.step,
                                         sealed_gold=sealed_gold)
    if sealed_gold is not None:
        say(f"hidden-gold release: publish {folder} (no gold, no seed); the gold is sealed in {sealed_gold}: keep it "
            "private, and score submissions with `medmemorybench leaderboard --results RESULTS --html BOARD --gold "
            f"{sealed_gold} --dataset_path {folder}`")
    for failure in built.stats["audit_failures"]:
        say(f"audit: FAIL {failure} (see the card's audit table)", err_console)
    print_build_summary(folder, built)
    if register:
        register_with_message(folder)
    return folder


def register_with_message(folder: Path) -> None:
    """Register a build under the bare name (`dataset/register.py`) and say so."""
    from medmemorybench.dataset.register import register_build

    registration = register_build(folder)
    replaced = f"; replaced {len(registration.replaced)} other copies" if registration.replaced else ""
    say(f"registered: load_dataset('medmemorybench', 'mixed') loads this build offline from any folder but a "
        f"MedMemoryBench checkout (revision {registration.revision}, in {registration.cache}{replaced})")
    previous = registration.previous
    if previous:  # (one name, one build: never replace another's registration without saying how to go back)
        back = f"`medmemorybench register {previous['folder']}`" if Path(previous["folder"]).exists() else \
            f"its folder {previous['folder']} is gone"
        say(f"registered: this replaced the registration of build {previous['fingerprint'][:12]} from "
            f"{previous['folder']}; to point the name back: {back} (`medmemorybench ls registration` shows the "
            "active one; `build --no-register` leaves it alone)")


def run_with_progress(config: Any, stage: str) -> Path:
    """`run_evaluation` with its progress shown; prints where its answers came from; returns the summary path."""
    from medmemorybench.harness.runner import run_evaluation

    with StageProgress(stage) as progress:
        summary = run_evaluation(config, progress.run)
    report_cache_use(summary, config)
    return summary


def sweep_with_progress(cells: list[Any], options: Any) -> list[Path]:
    """`run_sweep` with its progress shown (shards done, rate, ETA from the shards left, a line per cell finished);
    returns the finished cells' folders."""
    from medmemorybench.sweep.driver import SweepEvents, run_sweep

    with StageProgress("sweep") as progress:
        return run_sweep(cells, options, SweepEvents(on_step=progress.step, on_note=progress.note))


def print_plan(plans: list[Any], slots: int, executor: str) -> None:
    """The plan table (`sweep/plan.py`): a row per cell and the totals, then the wall time on `slots` at once."""
    def count(value: float) -> str:
        return f"{value:,.0f}"

    table = Table("cell", "patients", "sessions", "questions", "memory LLM calls", "answer calls", "judge calls",
                  "prompt tokens", "completion tokens", "machine time",
                  title="plan (nothing has run)")
    for plan in plans:
        table.add_row(plan.name, count(plan.patients), count(plan.sessions), count(plan.questions),
                      count(plan.memory_calls) + ("" if plan.measured else " (not measured)"),
                      count(plan.answer_calls), count(plan.judge_calls), count(plan.prompt_tokens),
                      count(plan.completion_tokens), clock(plan.seconds))
    seconds = sum(p.seconds for p in plans)
    table.add_row("all", count(sum(p.patients for p in plans)), count(sum(p.sessions for p in plans)),
                  count(sum(p.questions for p in plans)), count(sum(p.memory_calls for p in plans)),
                  count(sum(p.answer_calls for p in plans)), count(sum(p.judge_calls for p in plans)),
                  count(sum(p.prompt_tokens for p in plans)), count(sum(p.completion_tokens for p in plans)),
                  clock(seconds))
    console.print(table)
    say(f"wall time: about {clock(seconds / max(slots, 1))} with {slots} shard{'s' if slots != 1 else ''} at once "
        f"on the {executor} executor (machine time from per-session and per-answer costs measured with SmolLM2-135M "
        "on 2 CPU cores, medmemorybench/sweep/costs.yaml; a served model's time is its server's)")


def report_cache_use(summary: Path, config: Any) -> None:
    """How many answers the response cache gave (never silent: a cache answers as if the model had)."""
    from medmemorybench.files import loads_json
    from medmemorybench.harness.cache import default_cache_path

    data = loads_json(summary.read_text(encoding="utf-8"))
    answered = data["n_samples"]
    if config.model == "none" or not answered:
        return
    hits = data.get("n_cache_hits", 0)
    if not config.use_cache:
        say(f"answers: {answered} asked of the model (response cache off)")
        return
    where = config.cache_path or default_cache_path()
    again = "; --no_cache asks the model again" if hits else ""
    say(f"answers: {answered - hits} asked of the model, {hits} from the response cache {where}{again}")


def print_build_summary(folder: Path, built: Any) -> None:
    """Questions per type, sizes, the fingerprint and how to load the build."""
    stats = built.stats
    say(f"MedMemoryBench built: {folder}")
    table = Table("type", "questions")
    for code, count in stats["questions_by_type"].items():
        table.add_row(code, str(count))
    table.add_row("all", str(stats["questions"]))
    console.print(table)
    size_mb = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6
    streams = "; ".join(f"{config} {stats['sessions'][config]} sessions, {stats['turns'][config]} turns"
                        for config in stats["sessions"])
    say(f"patients {stats['personas']}; {streams}; {size_mb:.1f} MB on disk")
    say(f"fingerprint {built.fingerprint}")
    mixed = next(c for c in stats["sessions"] if c.startswith("mixed"))
    split = sorted(built.rows[mixed], key=lambda name: int(name.rpartition("_")[2]))[0]
    say(f"load it with: datasets.load_dataset('{folder}', '{mixed}', split='{split}')")


REPORT_TABLES = (("correct", "accuracy %"), ("selective", "selective score x100"), ("recall_at_k", "Recall@k %"),
                 ("mrr", "MRR x100"), ("hallucinated", "hallucination %"), ("trap_safe", "trap safety %"))
"""The per-type tables of a report (cells are 100 x mean, so the -1..1 selective score reads -100..100)."""


def print_report(runs: list[Path], plot: Path | None = None) -> Path | None:
    """Print runs side by side (the tables of `REPORT_TABLES`, cost, the paper's layout); write the saturation
    plot when `plot` is given and return its path. The ceiling (an `oracle` run) comes after the systems, set apart
    by a rule in the paper's layout."""
    from medmemorybench.report import (
        cost_table,
        cross_benchmark_table,
        is_ceiling,
        load_summary,
        metric_table,
        paper_table,
        run_label,
        saturation_plot,
        source_of,
    )
    from medmemorybench.report.benchmarks import rule_bound_notes, unscored_notes

    summaries = sorted((load_summary(r) for r in runs), key=is_ceiling)  # (stable: the systems in the order given)
    ceilings = {run_label(s) for s in summaries if is_ceiling(s)}
    tables = [(title, *metric_table(summaries, metric)) for metric, title in REPORT_TABLES]
    tables.append(("memory cost (accuracy beside it)", *cost_table(summaries)))
    ours = [s for s in summaries if source_of(s) is None]  # (the paper's layout is MedMemoryBench's alone)
    if ours:
        tables.append(("accuracy % in the paper's layout (type x mode, means), construction cost beside it",
                       *paper_table(ours)))
    tables.append(("across benchmarks: accuracy % as each benchmark scores it (MedMemoryBench: mean over types; "
                   "LoCoMo: its token F1; LongMemEval: its judge)", *cross_benchmark_table(summaries)))
    tables.append(("across benchmarks: Recall@k %", *cross_benchmark_table(summaries, "recall_at_k")))
    for title, header, rows in tables:
        if len(header) < 2:  # (no run has this metric)
            continue
        table = Table(*header, title=title)
        for index, row in enumerate(rows):
            if row[0] in ceilings and index and rows[index - 1][0] not in ceilings:
                table.add_section()  # (a rule between the systems and the ceiling below them)
            table.add_row(*row)
        console.print(table)
    for note in [*unscored_notes(summaries), *rule_bound_notes(summaries)]:
        say(note)
    return saturation_plot(summaries, plot) if plot is not None else None
