"""Scoring a list of answers to MedMemoryBench questions, per question type: what the `evaluate` metric module
computes (`evaluate_metric/medmemorybench.py` is a thin shell around `score_predictions`).

Each answer is scored as `medmemorybench run` scores it (`harness/samples.make_record`) and the per-type tables
are those of `summary.json` (`harness/summary.summarize_metric`), so the same answers give the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from medmemorybench.errors import InputError
from medmemorybench.harness.samples import make_record
from medmemorybench.harness.summary import summarize_metric
from medmemorybench.harness.tasks import TaskConfig, resolve_tasks
from medmemorybench.memory.base import MemoryItem, Retrieval
from medmemorybench.models.base import Completion

SCORED = ("correct", "selective", "recall_at_k", "mrr", "token_f1", "rouge_l", "hallucinated", "trap_safe",
          "trap_abstained", "abstained")
"""The metrics reported (those of the default tasks, and whether each answer abstains)."""


def score_predictions(predictions: Sequence[str], references: Sequence[str], questions: Iterable[dict[str, Any]],
                      *, retrieved: Sequence[Sequence[Sequence[str]]] | None = None,
                      echo: Sequence[bool] | None = None, task: str = "medmemorybench_efficient",
                      ) -> dict[str, Any]:
    """Per-type scores of `predictions`, the answers to the questions whose query ids are `references`, in the
    same order.

    Args:
        questions: The question rows (the `questions` config, or the `questions` of stream rows); any order, more
            than are answered is fine.
        retrieved: Per answer, the session ids of each item retrieved, best first (Recall@k, MRR and the
            hallucination rate need them; without them those are left out).
        echo: Per answer, whether it copies its prompt or records (`medmemorybench run` records this as `echo`;
            without it no answer is taken for an echo).
        task: The task whose settings apply (`retrieval_k`; the default tasks all use 5).

    Returns:
        `{metric: {TYPE: mean, ..., "all": mean, "mean_over_types": mean}}` for each metric that applies, and `n`.

    Raises:
        InputError: the lists differ in length, or a reference is not the query id of a question given.
    """
    lengths = {"predictions": len(predictions), "references": len(references)}
    if retrieved is not None:
        lengths["retrieved"] = len(retrieved)
    if echo is not None:
        lengths["echo"] = len(echo)
    if len(set(lengths.values())) > 1:
        raise InputError(f"medmemorybench metric: lengths differ ({', '.join(f'{k} {v}' for k, v in lengths.items())})")
    config = _task(task)
    by_id = {}
    for row in questions:
        if not isinstance(row, dict) or "query_id" not in row:
            raise InputError("medmemorybench metric: questions: rows of the 'questions' config are needed "
                             f"(got {type(row).__name__})")
        by_id[row["query_id"]] = row
    samples = []
    for index, (answer, query_id) in enumerate(zip(predictions, references, strict=True)):
        question = by_id.get(query_id)
        if question is None:
            raise InputError(f"medmemorybench metric: references[{index}]: no question '{query_id}' among the "
                             f"{len(by_id)} given")
        ids = retrieved[index] if retrieved is not None else []
        retrieval = Retrieval(items=[MemoryItem("", tuple(sessions)) for sessions in ids])
        record = make_record(config, question, question["question"], retrieval, Completion(text=answer.strip()),
                             None, "", None, echo=bool(echo[index]) if echo is not None else False)
        if retrieved is None:
            record.update(recall_at_k=None, mrr=None, hallucinated=None)
        samples.append(record)
    out: dict[str, Any] = {"n": len(samples)}
    for metric in SCORED:
        table = summarize_metric(samples, metric)
        if not table:
            continue
        row = {g["query_type"]: g["mean"] for g in table["by_type"]}
        row["all"] = table["overall"][0]["mean"]
        row["mean_over_types"] = table["mean_over_types"][0]["mean"]
        out[metric] = row
    return out


def _task(name: str) -> TaskConfig:
    tasks = resolve_tasks([name])
    if len(tasks) != 1:
        raise InputError(f"medmemorybench metric: task: '{name}' is a group of {len(tasks)} tasks; name one task")
    return tasks[0]
