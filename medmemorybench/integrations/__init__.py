"""MedMemoryBench inside other tools: an lm-evaluation-harness task class (`lm_eval_task`, imported by lm-eval
only) and an `evaluate` metric module (`metric_path`)."""

from __future__ import annotations

from pathlib import Path

METRIC_SCRIPT = Path(__file__).resolve().parent / "evaluate_metric" / "medmemorybench.py"


def metric_path() -> str:
    """The `evaluate` metric module's file, for `evaluate.load(metric_path())` (offline: it is a local file)."""
    return str(METRIC_SCRIPT)


__all__ = ["metric_path"]
