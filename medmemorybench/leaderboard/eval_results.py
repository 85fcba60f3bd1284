"""`.eval_results/medmemorybench.yaml` entries for a model repo: a verified run's headline scores, pointing at the
benchmark's tasks (`dataset/eval_yaml.py`), written with huggingface_hub's `EvalResultEntry`."""

from __future__ import annotations

import yaml

from medmemorybench.dataset.eval_yaml import HEADLINE_TASKS
from medmemorybench.report import PaperRow

EVAL_RESULTS_FILE = ".eval_results/medmemorybench.yaml"


def headline_value(task_id: str, row: PaperRow) -> float | None:
    """A run's score for a headline task (percent, None when the run has none)."""
    if task_id == "overall":
        return row.mean
    return row.by_mode.get(task_id, {}).get("mean")


def eval_result_entries(row: PaperRow, *, dataset_id: str, dataset_revision: str | None, date: str,
                        source_url: str | None, notes: str) -> str | None:
    """`.eval_results/medmemorybench.yaml` for a model repo: one entry per headline task the run has a score for
    (None when it has none, a retrieval-only run)."""
    from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

    entries = [EvalResultEntry(dataset_id=dataset_id, task_id=task_id, value=round(value, 2),
                               dataset_revision=dataset_revision, date=date, source_url=source_url,
                               source_name="MedMemoryBench results" if source_url else None, notes=notes)
               for task_id, _config in HEADLINE_TASKS if (value := headline_value(task_id, row)) is not None]
    if not entries:
        return None
    return yaml.safe_dump(eval_result_entries_to_yaml(entries), sort_keys=False, allow_unicode=True, width=100)
