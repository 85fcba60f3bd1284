"""summary.json: the run header plus aggregate tables per task and metric, from samples.jsonl.

None in a sample means "does not apply" (recall of an abstention question, trap safety of a question
without a trap) except for the answer scores `correct` and `selective`, where a failed generation (or
judge) counts as n_error, never as zero.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from medmemorybench.files import write_atomic
from medmemorybench.harness.results import SAMPLES, SUMMARY, read_samples
from medmemorybench.harness.tasks import TaskConfig
from medmemorybench.scoring import aggregate

ANSWER_SCORES = ("correct", "selective")
"""Metrics every answered question has: None there is an unscored answer (n_error), not "does not apply"."""
NOT_PROPORTIONS = ("selective",)
"""Metrics whose values are not 0/1 proportions even when a group's values happen to be 0 and 1 only (an
always-abstaining system's selective scores): they always get the normal interval."""


def rows_for(samples: list[dict], metric: str) -> list[dict]:
    """The samples a metric is computed over."""
    return [s for s in samples if s.get(metric) is not None or (metric in ANSWER_SCORES and s["status"] == "error")]


def summarize_metric(samples: list[dict], metric: str) -> dict[str, Any]:
    """Overall, mean-over-types, per type, per checkpoint and per type x checkpoint tables of one metric."""
    rows = rows_for(samples, metric)
    if not rows:
        return {}
    binary = False if metric in NOT_PROPORTIONS else None  # None: decided from the values
    by_type_checkpoint = aggregate(rows, metric, by=("query_type", "checkpoint"), binary=binary)
    by_type = aggregate(rows, metric, by=("query_type",), binary=binary)
    by_checkpoint = aggregate(rows, metric, by=("checkpoint",), binary=binary)
    return {
        "overall": [g.as_dict() for g in by_type.overall],
        "mean_over_types": [g.as_dict() for g in by_type.macro],
        "by_type": [g.as_dict() for g in by_type.groups],
        "by_checkpoint": [g.as_dict() for g in by_checkpoint.groups],
        "by_type_checkpoint": [g.as_dict() for g in by_type_checkpoint.groups],
    }


def write_summary(run_dir: Path, header: dict, tasks: list[TaskConfig]) -> Path:
    """Aggregate every task's samples into summary.json; returns its path."""
    samples = read_samples(run_dir / SAMPLES)
    out: dict[str, Any] = {"header": header, "n_samples": len(samples),
                           "n_errors": sum(1 for s in samples if s["status"] == "error"), "tasks": {}}
    for task in tasks:
        mine = [s for s in samples if s["task"] == task.task]
        metrics = {m.metric: summarize_metric(mine, m.metric) for m in task.metric_list}
        out["tasks"][task.task] = {"mode": task.dataset_name, "version": task.version, "n_samples": len(mine),
                                   "metrics": {k: v for k, v in metrics.items() if v}}
    path = run_dir / SUMMARY
    write_atomic(path, json.dumps(out, indent=1, sort_keys=True) + "\n")
    return path
