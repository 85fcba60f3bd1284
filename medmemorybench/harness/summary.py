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
from medmemorybench.harness.results import SUMMARY
from medmemorybench.harness.tasks import TaskConfig
from medmemorybench.memory.context import MemoryCost
from medmemorybench.scoring import aggregate
from medmemorybench.scoring.source import OURS

ANSWER_SCORES = ("correct", "selective")
"""Metrics every answered question has: None there is an unscored answer (n_error), not "does not apply"."""
NOT_PROPORTIONS = ("selective",)
"""Metrics whose values are not 0/1 proportions even when a group's values happen to be 0 and 1 only (an
always-abstaining system's selective scores): they always get the bootstrap interval."""
VALUE_RANGES = {"selective": (-1.0, 1.0)}
"""Metrics whose range is not [0, 1] (intervals are clipped to the range)."""


def rows_for(samples: list[dict], metric: str) -> list[dict]:
    """The samples a metric is computed over."""
    return [s for s in samples if s.get(metric) is not None or (metric in ANSWER_SCORES and s["status"] == "error")]


def summarize_metric(samples: list[dict], metric: str) -> dict[str, Any]:
    """Overall, mean-over-types, per type, per checkpoint and per type x checkpoint tables of one metric."""
    rows = rows_for(samples, metric)
    if not rows:
        return {}
    binary = False if metric in NOT_PROPORTIONS else None  # None: decided from the values
    value_range = VALUE_RANGES.get(metric, (0.0, 1.0))
    by_type_checkpoint = aggregate(rows, metric, by=("query_type", "checkpoint"), binary=binary,
                                   value_range=value_range)
    by_type = aggregate(rows, metric, by=("query_type",), binary=binary, value_range=value_range)
    by_checkpoint = aggregate(rows, metric, by=("checkpoint",), binary=binary, value_range=value_range)
    return {
        "overall": [g.as_dict() for g in by_type.overall],
        "mean_over_types": [g.as_dict() for g in by_type.macro],
        "by_type": [g.as_dict() for g in by_type.groups],
        "by_checkpoint": [g.as_dict() for g in by_checkpoint.groups],
        "by_type_checkpoint": [g.as_dict() for g in by_type_checkpoint.groups],
    }


COUNTED = tuple(MemoryCost.field_names())
"""The `memory_cost` fields of a sample, each summed over patients."""


def summarize_cost(samples: list[dict]) -> dict[str, Any]:
    """What building and searching the memory cost: totals per checkpoint (over patients, cumulative: a
    patient's cost up to that checkpoint), and per session over the whole run. Empty without costs."""
    latest: dict[tuple[str, int], dict] = {}
    for sample in samples:
        if sample.get("memory_cost"):
            latest[(sample["persona_id"], sample["checkpoint"])] = sample["memory_cost"]
    if not latest:
        return {}
    checkpoints = sorted({checkpoint for _, checkpoint in latest})
    by_checkpoint = [{"checkpoint": checkpoint, "patients": sum(1 for _, c in latest if c == checkpoint),
                      **_sums([cost for (_, c), cost in latest.items() if c == checkpoint])}
                     for checkpoint in checkpoints]
    final = {}  # each patient's cost at its last recorded checkpoint
    for (persona, _checkpoint), cost in sorted(latest.items()):
        final[persona] = cost
    totals = _sums(list(final.values()))
    sessions = totals["sessions"] or 1
    per_session = {name: round(totals[name] / sessions, 4) for name in
                   ("llm_calls", "prompt_tokens", "completion_tokens", "embedding_calls", "ingest_s")}
    return {"patients": len(final), "totals": totals, "per_session": per_session,
            "items_per_patient": round(totals["items"] / len(final), 1) if totals["items"] is not None else None,
            "by_checkpoint": by_checkpoint}


def _sums(costs: list[dict]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in COUNTED:
        values = [cost.get(name) for cost in costs]
        if name == "items" and any(v is None for v in values):
            out[name] = None  # (a memory that does not report its size)
        else:
            out[name] = round(sum(v or 0 for v in values), 4)
    return out


def summarize(header: dict, tasks: list[TaskConfig], samples: list[dict]) -> dict[str, Any]:
    """The content of summary.json: every task's samples aggregated per metric of its `metric_list`, and its
    memory cost (also how `submit` re-computes a submitted run's summary)."""
    out: dict[str, Any] = {"header": header, "n_samples": len(samples),
                           "n_errors": sum(1 for s in samples if s["status"] == "error"),
                           "n_cache_hits": sum(1 for s in samples if s.get("cache_hit")), "tasks": {}}
    for task in tasks:
        mine = [s for s in samples if s["task"] == task.task]
        metrics = {m.metric: summarize_metric(mine, m.metric) for m in task.metric_list}
        entry = {"mode": task.mode, "language": task.language, "version": task.version, "n_samples": len(mine),
                 "metrics": {k: v for k, v in metrics.items() if v}, "memory_cost": summarize_cost(mine)}
        if task.metadata.scoring != OURS:  # (recorded only then: our tasks' summaries are as before)
            entry["scoring"] = task.metadata.scoring
            unscored = [s for s in mine if ((s.get("scores") or {}).get("correct") or {}).get("status") == "unscored"]
            if unscored:  # (no value by design, e.g. LongMemEval without --judge: said, never a zero)
                entry["unscored"] = {"correct": {"n": len(unscored),
                                                 "reason": unscored[0]["scores"]["correct"]["explanation"]}}
        out["tasks"][task.task] = entry
    return out


def write_summary(run_dir: Path, header: dict, tasks: list[TaskConfig], samples: list[dict]) -> Path:
    """Aggregate every task's samples (the run's samples.jsonl, read by the caller) into summary.json; returns its
    path."""
    path = run_dir / SUMMARY
    write_atomic(path, json.dumps(summarize(header, tasks, samples), indent=1, sort_keys=True) + "\n")
    return path
