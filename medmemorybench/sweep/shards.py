"""A (cell, patient shard) unit of a sweep, and what a worker does with it.

A shard is a contiguous slice of a cell's patients in persona-id order (the order a run streams them in), so the
driver rebuilds a one-process run's samples by putting each checkpoint's shards back in shard order
(`merge_samples`). A worker runs the shard as an ordinary run into a scratch folder of its own (the memories'
working folders, per patient, stay there), returns the records and removes the folder; it never writes the
cell's files: only the driver does.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.parquet as pq

from medmemorybench.errors import InputError, RunFailedError
from medmemorybench.harness.config import RunConfig
from medmemorybench.harness.results import RUN_HEADER, SAMPLES, read_samples
from medmemorybench.harness.stream import first_patients

if TYPE_CHECKING:
    from medmemorybench.harness.runner import Runner


@dataclass(frozen=True)
class ShardTask:
    """One unit of work: patients of one cell."""

    cell: str
    """The cell's name (its folder)."""
    index: int
    """0-based position among the cell's shards."""
    config: RunConfig
    """The cell's run options (the worker narrows them to `patients`)."""
    patients: tuple[str, ...]
    threads: int = 1
    """Threads torch may use in the worker (its share of the machine)."""


@dataclass(frozen=True)
class ShardResult:
    """What a worker sends back: the shard's samples in the order its run wrote them, the questions it had to
    answer per task, its run header, and whether a backbone answered."""

    cell: str
    index: int
    samples: list[dict]
    expected: dict[str, int]
    header: dict
    answered: bool


def cell_patients(runner: Runner, limit: int | None) -> list[str]:
    """The persona ids a run evaluates (its first `limit` by id, `first_patients`), read from the id column of its
    task's first split alone (`runner`: the cell's, checked)."""
    task = runner.tasks[0]
    path = runner.folder / task.dataset_name / f"{runner.splits[task.task][0]}.parquet"
    try:
        ids = pq.read_table(path, columns=["persona_id"]).column("persona_id").to_pylist()
    except Exception as exc:  # noqa: BLE001 (pyarrow raises many kinds for a damaged file)
        raise InputError(f"{path}: cannot read its persona ids ({str(exc).splitlines()[0]})") from None
    return [row["persona_id"] for row in first_patients([{"persona_id": i} for i in set(ids)], limit)]


def split_patients(patients: list[str], shard_size: int) -> list[tuple[str, ...]]:
    """`patients` (in persona-id order) in contiguous slices of at most `shard_size`."""
    ordered = sorted(patients)
    return [tuple(ordered[i:i + shard_size]) for i in range(0, len(ordered), shard_size)]


def _limit_threads(threads: int) -> None:
    """A worker's torch uses its task's share of the machine: Ray and the process pool reuse workers, and torch
    reads OMP_NUM_THREADS once, at import (ray.md, pitfall 3)."""
    os.environ["OMP_NUM_THREADS"] = str(threads)
    if "torch" in sys.modules:
        import torch

        torch.set_num_threads(threads)


def run_shard(task: ShardTask) -> ShardResult:
    """Run one shard into a scratch folder and return its records (the folder is removed afterwards).

    A shard's answers failing is not the shard's to judge: the driver checks errors over the whole cell, so the
    shard runs with no error limit and returns what it wrote.
    """
    from medmemorybench.harness.runner import Runner

    _limit_threads(task.threads)
    scratch = Path(tempfile.mkdtemp(prefix=f"medmemorybench-{task.cell[:40]}-{task.index}-"))
    try:
        config = replace(task.config, output_path=scratch / "run", patients=list(task.patients), resume=False,
                         max_error_rate=1.0)
        runner = Runner(config)
        with contextlib.suppress(RunFailedError):  # (all answers failed, a count is off: the driver judges the cell)
            runner.run()
        samples = read_samples(config.output_path / SAMPLES)
        header = json.loads((config.output_path / RUN_HEADER).read_text(encoding="utf-8"))
        return ShardResult(task.cell, task.index, samples, dict(runner.expected), header,
                           runner.backbone is not None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


MEASURED = ("latency_ms", "cache_hit")
"""Sample fields that measure this machine (wall time) or this cache's state, not the run: they differ between two
runs of the same cell on one machine as well."""
MEASURED_COST = ("ingest_s", "retrieve_s", "cache_hits")


def machine_independent(sample: dict) -> dict:
    """A sample without what measures the machine or the cache (`MEASURED`): what a sharded run and a one-process
    run of the same cell must agree on, line by line."""
    out = {k: v for k, v in sample.items() if k not in MEASURED}
    if isinstance(out.get("memory_cost"), dict):
        out["memory_cost"] = {k: v for k, v in out["memory_cost"].items() if k not in MEASURED_COST}
    return out


def merge_samples(shards: list[list[dict]]) -> list[dict]:
    """The samples of a cell's shards (given in shard order) in the order a one-process run writes them: checkpoint
    by checkpoint, and within one, patient by patient (the shards are contiguous slices of the patients)."""
    return sorted((sample for shard in shards for sample in shard), key=lambda sample: sample["checkpoint"])
