"""The sweep driver: splits every cell of a grid into (cell, patient shard) tasks, hands them to an executor, and
alone writes each cell's files.

On disk, under the sweep's output folder:
- `sweep.json`: the cells (their run options) and each cell's shards (its patients), fixed at the start, so a
  resume runs the same shards whatever executor or worker count it is given;
- `<cell>/shards/NNNNN.json`: each finished shard's records, written atomically as it comes back;
- `<cell>/samples.jsonl`, `run.json`, `summary.json`: written when the cell's last shard is in, in the order and
  with the header a one-process `run` of the cell writes (`shards.merge_samples`), then `shards/` is removed.

A killed driver loses only the shards running at that moment: `--resume` reads `sweep.json`, keeps every shard
file and every finished cell, and runs the rest. A cell whose answers fail past `max_error_rate` keeps its files
(as a failed run does) and drops the shards with errors, so a resume asks those again.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medmemorybench.errors import InputError, OutputError, RunFailedError
from medmemorybench.files import loads_json, write_atomic
from medmemorybench.harness.header import config_record
from medmemorybench.harness.results import RUN_HEADER, SAMPLES, SUMMARY
from medmemorybench.harness.runner import Runner, check_complete
from medmemorybench.harness.summary import write_summary
from medmemorybench.harness.tasks import resolve_tasks
from medmemorybench.sweep.executors import SHARD_RETRIES, Resources, end_left_behind, make_executor
from medmemorybench.sweep.grid import Cell
from medmemorybench.sweep.shards import ShardResult, ShardTask, cell_patients, merge_samples, split_patients

SWEEP_FILE = "sweep.json"
CELL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
"""What `grid.make_cells` names a cell's folder."""
SHARDS = "shards"
SHARDS_PER_SLOT = 2
"""Default shards per cell: about this many per slot that can run at once (small enough to balance the load and
bound the work a dead worker loses; large enough that each shard's model loading is paid rarely)."""


@dataclass
class SweepOptions:
    """How a sweep runs (what it runs is its cells)."""

    output_path: Path
    executor: str = "local"
    workers: int | None = None
    """Local: processes (default: one per CPU per task). Ray `local`: the CPUs of the cluster it starts."""
    resources: Resources = field(default_factory=Resources)
    ray_address: str = "local"
    shard_size: int | None = None
    """Patients per shard; None: the cell's patients spread over `SHARDS_PER_SLOT` shards per slot."""
    resume: bool = False


@dataclass
class SweepEvents:
    """Callbacks through which the driver reports (the CLI prints them)."""

    on_step: Callable[[str, int, int], None] = lambda _phase, _done, _total: None
    """("shards", shards done, shards in all) as each shard comes back."""
    on_note: Callable[[str], None] = lambda _text: None
    """A line worth a user's eye: a cell finished or failed, a shard retried."""


def _sweep_record(cells: list[Cell], shards: dict[str, list[tuple[str, ...]]]) -> dict[str, Any]:
    return {"cells": [{"name": c.name, "config": config_record(c.config)} for c in cells],
            "shards": {name: [list(s) for s in plan] for name, plan in shards.items()}}


def _read_sweep_file(path: Path) -> dict[str, Any]:
    """A sweep's record, checked: its cells' names are plain folder names (a hostile record cannot point outside)."""
    try:
        record = loads_json(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        raise InputError(f"{path}: damaged (not JSON); start the sweep in another --output_path") from None
    if not isinstance(record, dict) or not isinstance(record.get("shards"), dict) \
            or not isinstance(record.get("cells"), list):
        raise InputError(f"{path}: not a sweep's record")
    for cell in record["cells"]:
        name = cell.get("name") if isinstance(cell, dict) else None
        if not isinstance(name, str) or not CELL_NAME.fullmatch(name):
            raise InputError(f"{path}: cell name {str(name)[:80]!r} is not a plain folder name")
    return record


def expand_sweeps(paths: list[Path]) -> list[Path]:
    """Run folders, where a sweep's folder stands for its finished cells in grid order (for `report`)."""
    out: list[Path] = []
    for path in paths:
        record = path / SWEEP_FILE
        if not record.is_file():
            out.append(path)
            continue
        cells = [path / c["name"] for c in _read_sweep_file(record)["cells"]]
        finished = [cell for cell in cells if _cell_done(cell)]
        if not finished:
            raise InputError(f"{path}: a sweep with no finished cell yet (`medmemorybench sweep ... --resume` goes on)")
        out.extend(finished)
    return out


def _cell_done(folder: Path) -> bool:
    return (folder / SUMMARY).is_file() and not (folder / SHARDS).exists()


def _shard_file(folder: Path, index: int) -> Path:
    return folder / SHARDS / f"{index:05d}.json"


class SweepDriver:
    """Runs cells' shards on an executor and writes each cell when its last shard is in."""

    def __init__(self, cells: list[Cell], options: SweepOptions, events: SweepEvents | None = None) -> None:
        self.cells, self.options = cells, options
        self.events = events or SweepEvents()
        if options.shard_size is not None and (isinstance(options.shard_size, bool) or options.shard_size < 1):
            raise InputError(f"--shard_size: {options.shard_size} is not a number of patients (at least 1)")
        # Every cell checked (options, dataset, tasks, memory, answer mode) before anything starts.
        self.runners = {cell.name: Runner(cell.config) for cell in cells}
        self.failed: dict[str, str] = {}

    def _plan_shards(self, slots: int) -> dict[str, list[tuple[str, ...]]]:
        plan = {}
        for cell in self.cells:
            patients = cell_patients(self.runners[cell.name], cell.config.limit)
            size = self.options.shard_size or max(1, -(-len(patients) // (SHARDS_PER_SLOT * slots)))
            plan[cell.name] = split_patients(patients, size)
        return plan

    def _start_folder(self, slots: int) -> dict[str, list[tuple[str, ...]]]:
        """The shards of every cell: planned now, or read back on a resume (and checked to be the same grid)."""
        out, path = self.options.output_path, self.options.output_path / SWEEP_FILE
        if path.exists():
            if not self.options.resume:
                raise InputError(f"--output_path: {out} holds a sweep already; pass --resume to continue it or choose "
                                 "another folder")
            record = _read_sweep_file(path)
            if [(c["name"], c.get("config")) for c in record["cells"]] != \
                    [(c.name, config_record(c.config)) for c in self.cells]:
                raise InputError(f"--resume: {path} was written for another grid or other options; resume with the "
                                 "same ones or choose another --output_path")
            if self.options.shard_size is not None:
                self.events.on_note("--shard_size is ignored on a resume: the shards were fixed when the sweep began")
            return {name: [tuple(s) for s in plan] for name, plan in record["shards"].items()}
        try:
            if out.exists() and any(out.iterdir()):
                raise InputError(f"--output_path: {out} is not empty and holds no sweep; choose an empty or new folder")
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"--output_path: cannot use {exc.filename or out} ({exc.strerror or exc})") from None
        plan = self._plan_shards(slots)
        write_atomic(path, json.dumps(_sweep_record(self.cells, plan), indent=1) + "\n")
        return plan

    def run(self) -> list[Path]:
        """Run every unfinished shard; returns the folders of the cells that finished. Raises `RunFailedError`
        naming the cells that did not (everything written is kept)."""
        if self.options.resume:
            ended = end_left_behind(self.options.output_path)
            if ended:
                self.events.on_note(f"ended {ended} processes of the Ray cluster the killed driver had started")
        executor = make_executor(self.options.executor, self.options.workers, self.options.resources,
                                 self.options.ray_address)
        try:
            plan = self._start_folder(executor.slots)
            executor.record_processes(self.options.output_path)
            self._run_shards(executor, plan)
        except BaseException:
            executor.close(cancel=True)
            raise
        executor.close()
        finished = [self.options.output_path / c.name for c in self.cells if c.name not in self.failed]
        if self.failed:
            lines = "; ".join(f"{name}: {why}" for name, why in self.failed.items())
            raise RunFailedError(f"{len(self.failed)} of {len(self.cells)} cells failed ({lines}); the rest are "
                                 f"in {self.options.output_path}; rerun with --resume")
        return finished

    def _run_shards(self, executor: Any, plan: dict[str, list[tuple[str, ...]]]) -> None:
        threads = max(1, int(self.options.resources.cpus))
        todo: list[ShardTask] = []
        total = 0
        for cell in self.cells:
            folder = self.options.output_path / cell.name
            total += len(plan[cell.name])
            if _cell_done(folder):
                continue
            for index, patients in enumerate(plan[cell.name]):
                if not _shard_file(folder, index).exists():
                    todo.append(ShardTask(cell.name, index, cell.config, patients, threads))
        done = total - len(todo)
        self.events.on_step("shards", done, total)
        left = Counter(task.cell for task in todo)  # shards still to come back, per cell
        for cell in self.cells:  # (a driver killed between a cell's last shard and its merge)
            if not left[cell.name] and not _cell_done(self.options.output_path / cell.name):
                self._merge(cell, len(plan[cell.name]))
        by_name = {cell.name: cell for cell in self.cells}
        attempts: dict[tuple[str, int], int] = {}
        running: dict[Future[ShardResult], ShardTask] = {executor.submit(task): task for task in todo}
        while running:
            finished, _ = wait(running, timeout=1.0, return_when=FIRST_COMPLETED)
            for future in finished:
                task = running.pop(future)
                try:
                    result = future.result()
                except Exception as exc:  # noqa: BLE001 (a shard's failure is the cell's, reported, not fatal)
                    key = (task.cell, task.index)
                    attempts[key] = attempts.get(key, 1) + 1
                    if executor.died(exc) and attempts[key] <= SHARD_RETRIES + 1:
                        self.events.on_note(f"{task.cell}: shard {task.index + 1} lost its worker; running it again "
                                            f"(attempt {attempts[key]})")
                        running[executor.submit(task)] = task
                        continue
                    reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
                    self.failed.setdefault(task.cell, f"shard {task.index + 1}: {reason[:300]}")
                    self.events.on_note(f"{task.cell}: shard {task.index + 1} failed: {reason[:300]}")
                    left[task.cell] -= 1
                    continue
                folder = self.options.output_path / task.cell
                write_atomic(_shard_file(folder, task.index), json.dumps(
                    {"patients": list(task.patients), "expected": result.expected, "answered": result.answered,
                     "header": result.header, "samples": result.samples}, ensure_ascii=False) + "\n")
                done += 1
                left[task.cell] -= 1
                self.events.on_step("shards", done, total)
                if left[task.cell] == 0 and task.cell not in self.failed:
                    self._merge(by_name[task.cell], len(plan[task.cell]))

    def _merge(self, cell: Cell, shards: int) -> None:
        """Write the cell's samples, header and summary from its shard files, as a one-process run would."""
        folder = self.options.output_path / cell.name
        parts = []
        for index in range(shards):
            path = _shard_file(folder, index)
            try:
                parts.append(loads_json(path.read_text(encoding="utf-8")))
            except (OSError, json.JSONDecodeError) as exc:
                raise OutputError(f"{path}: cannot read a finished shard ({exc}); remove it and rerun with "
                                  "--resume") from None
        samples = merge_samples([part["samples"] for part in parts])
        header = {**parts[0]["header"], "config": config_record(cell.config)}
        expected: dict[str, int] = {}
        for part in parts:
            for task, count in part["expected"].items():
                expected[task] = expected.get(task, 0) + count
        write_atomic(folder / SAMPLES, "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples))
        write_atomic(folder / RUN_HEADER, json.dumps(header, indent=1, sort_keys=True, default=str) + "\n")
        tasks = resolve_tasks(cell.config.tasks)
        summary = write_summary(folder, header, tasks, samples)
        try:
            check_complete(tasks, expected, samples, any(part["answered"] for part in parts),
                           cell.config.max_error_rate, summary)
        except RunFailedError as exc:
            for index, part in enumerate(parts):  # (a resume asks the failed answers again, shard by shard)
                if any(s["status"] == "error" for s in part["samples"]):
                    _shard_file(folder, index).unlink()
            self.failed[cell.name] = str(exc)
            self.events.on_note(f"{cell.name}: failed: {exc}")
            return
        shutil.rmtree(folder / SHARDS)
        self.events.on_note(f"{cell.name}: done, {len(samples)} samples")


def run_sweep(cells: list[Cell], options: SweepOptions, events: SweepEvents | None = None) -> list[Path]:
    """Run a grid's cells (see the module's docstring); returns the finished cells' folders."""
    started = time.monotonic()
    finished = SweepDriver(cells, options, events).run()
    (events or SweepEvents()).on_note(f"sweep finished in {time.monotonic() - started:.0f} s")
    return finished
