"""The Hub's benchmark declaration: `eval.yaml` at the dataset repo's root, one task per headline score (the
`.eval_results` entries of model repos name these task ids: `leaderboard/eval_results.py`).

The shape checked here is the documented one (`name`, `description`, `evaluation_framework`, `tasks: [{id, config,
split}]`); the Hub validates it again when it is pushed and lists a benchmark once its staff allow it.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from medmemorybench.errors import InputError

FRAMEWORK = "medmemorybench"
EVAL_YAML = "eval.yaml"
HEADLINE_TASKS = (("overall", "efficient"), ("efficient", "efficient"), ("mixed", "mixed"))
"""(task id, the config its data is in): the mean over question types of both modes, of the efficient mode and of
the mixed mode, as the paper's table averages them."""
_TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
DESCRIPTION = ("Agent memory for personalized healthcare: a memory system reads a year of a chronic patient's "
               "consultations as a stream and answers, at checkpoints every 10 sessions, questions that need exactly "
               "what it remembered. Score: average accuracy (%) over the six question types.")


def eval_yaml(splits: dict[str, list[str]]) -> str:
    """The benchmark declaration for a build whose configs have these checkpoint splits.

    A score spans every checkpoint split of its config; `split` names the last one (the one the dataset viewer
    opens), since the format takes one split per task.
    """
    def last(config: str) -> str:
        return max(splits[config], key=lambda s: int(s.rpartition("_")[2]))

    document = {"name": "MedMemoryBench", "description": DESCRIPTION, "evaluation_framework": FRAMEWORK,
                "tasks": [{"id": task_id, "config": config, "split": last(config)} for task_id, config in
                          HEADLINE_TASKS]}
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)
    check_eval_yaml(text, splits)
    return text


def check_eval_yaml(text: str, splits: dict[str, list[str]] | None = None, where: str = EVAL_YAML) -> dict[str, Any]:
    """Parse and check an eval.yaml against the documented shape (and, given the build's splits, that each task's
    config and split exist).

    Raises:
        InputError: naming the file and key at fault.
    """
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"{where}: not YAML ({str(exc)[:120]})") from None
    if not isinstance(document, dict):
        raise InputError(f"{where}: not a mapping")
    for key in ("name", "description", "evaluation_framework"):
        if not isinstance(document.get(key), str) or not document[key].strip():
            raise InputError(f"{where}: {key}: missing or not a string")
    unknown = sorted(set(document) - {"name", "description", "evaluation_framework", "tasks"})
    if unknown:
        raise InputError(f"{where}: {unknown[0]}: not a key of eval.yaml")
    tasks = document.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise InputError(f"{where}: tasks: missing or empty")
    seen = set()
    for index, task in enumerate(tasks):
        if not isinstance(task, dict) or set(task) != {"id", "config", "split"}:
            raise InputError(f"{where}: tasks[{index}]: must have exactly id, config and split")
        if not all(isinstance(task[k], str) for k in task) or not _TASK_ID.match(task["id"]):
            raise InputError(f"{where}: tasks[{index}].id: '{task['id']}' is not an id of letters, digits, - and _")
        if task["id"] in seen:
            raise InputError(f"{where}: tasks[{index}].id: '{task['id']}' repeated")
        seen.add(task["id"])
        if splits is not None and task["split"] not in splits.get(task["config"], []):
            raise InputError(f"{where}: tasks[{index}]: config '{task['config']}' has no split '{task['split']}'")
    return document
