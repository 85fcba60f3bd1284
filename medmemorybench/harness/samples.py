"""One sample line: the question, what was retrieved (with provenance), the output and every score.

Whether an answer echoes its prompt or the retrieved records (`answer_echo`) is decided once per
answer, by the runner before the judge is asked, and the same flag goes to every measure.
"""

from __future__ import annotations

from typing import Any

from medmemorybench.harness.tasks import TaskConfig
from medmemorybench.memory.base import Retrieval
from medmemorybench.models.base import ChatRequest, Completion
from medmemorybench.redact import scrub_text
from medmemorybench.scoring import (
    abstains,
    hallucinated,
    is_echo,
    recall_at_k,
    reciprocal_rank,
    score_answer,
    trap_abstained,
    trap_safe,
)
from medmemorybench.scoring.base import Score
from medmemorybench.scoring.source import OURS, source_score

SNIPPET_CHARS = 400
MAX_ITEMS_WITH_TEXT = 10
METRIC_FIELDS = ("correct", "selective", "token_f1", "rouge_l", "mq_partial", "exact_match", "key_fact_rubric",
                 "abstained")
"""Top-level fields copied from the answer's scores (None when the type has no such score)."""


def answer_echo(request: ChatRequest | None, retrieval: Retrieval, completion: Completion | None) -> bool | None:
    """Whether the answer copies its prompt or the retrieved records (`is_echo`); None when there is no answer.

    The records are passed apart from the prompt (which holds them too) so that quoting one record
    sentence stays an answer.
    """
    if request is None or completion is None or completion.error is not None:
        return None
    return is_echo(completion.text, prompts=[m["content"] for m in request.messages],
                   records=[item.text for item in retrieval.items])


def _retrieved(retrieval: Retrieval) -> list[dict[str, Any]]:
    return [{"session_ids": list(item.session_ids), "score": round(float(item.score), 6),
             **({"text": item.text[:SNIPPET_CHARS]} if rank < MAX_ITEMS_WITH_TEXT else {})}
            for rank, item in enumerate(retrieval.items)]


def _score_dict(score: Score) -> dict[str, Any]:
    return {"value": score.value, "extracted": score.extracted, "explanation": score.explanation,
            "status": score.status, "metadata": score.metadata}


GOLD_DERIVED = ("trap_category", "abstain", "gold", "target_hash", "recall_at_k", "mrr")
"""Sample fields that come from a question's gold: None in a run on a hidden-gold release (`dataset.hidden`), where
they and every score are computed only when the maintainers verify the run against the sealed gold."""


def make_record(task: TaskConfig, question: dict, query: str, retrieval: Retrieval, completion: Completion | None,
                prompt_hash: str | None, target_hash: str | None, judge_score: Score | None, *,
                echo: bool | None, hidden: bool = False) -> dict[str, Any]:
    """The samples.jsonl line of one question.

    `query` is exactly what the memory was asked; `retrieval` carries the dataset's session ids.
    `completion` is None in retrieval-only runs; a completion with an error is recorded with status
    "error" and no answer scores (an error is not a wrong answer). `echo` is `answer_echo` of the
    answer (None without one); an echo is scored wrong by every measure and has no judge verdict. `hidden`: the
    question's gold is sealed: the answer is recorded with status "answered" and nothing is scored.
    """
    ids = [list(item.session_ids) for item in retrieval.items]
    evidence = question["evidence_session_ids"]
    recall = recall_at_k(ids, evidence, task.retrieval_k)  # None for a question without evidence (ABS)
    record: dict[str, Any] = {
        "task": task.task, "task_version": task.version, "mode": task.mode,
        "query_id": question["query_id"], "persona_id": question["persona_id"],
        "checkpoint": question["checkpoint"], "query_type": question["query_type"],
        "trap_category": question["trap_category"], "abstain": question["abstain"],
        "question": question["question"], "retrieval_query": query, "gold": question["answer"],
        "prompt_hash": prompt_hash, "target_hash": target_hash,
        "retrieved": _retrieved(retrieval), "truncated_sessions": retrieval.truncated_sessions,
        "recall_at_k": recall, "mrr": reciprocal_rank(ids, evidence),
        "output": None, "error": None, "status": "retrieval_only",
        "scores": {}, **{name: None for name in METRIC_FIELDS},
        "hallucinated": None, "trap_safe": None, "trap_abstained": None, "echo": None, "judge": None,
        "tokens": None, "latency_ms": None, "cache_hit": False, "truncated_tokens": 0,
    }
    if hidden:
        record.update({name: None for name in GOLD_DERIVED})
    if completion is None:
        return record
    record.update(tokens={"prompt": completion.prompt_tokens, "completion": completion.completion_tokens,
                          "cached": completion.cached_tokens},
                  latency_ms=round(completion.latency_ms, 1), cache_hit=completion.cache_hit,
                  truncated_tokens=completion.truncated_tokens, output=completion.text)
    if completion.error is not None:
        record.update(status="error", error=scrub_text(completion.error))  # (any backbone's error may echo a key)
        return record
    if hidden:
        record.update(status="answered", echo=echo)
        return record
    if echo is None:
        raise ValueError(f"{question['query_id']}: an answer needs its echo flag (answer_echo)")
    scoring = task.metadata.scoring
    if scoring == OURS:
        judge = (lambda _q, _p: judge_score) if judge_score is not None else None
        scores = score_answer(question, completion.text, judge=judge, echo=echo)
    else:  # (the source's measure is `correct`; its judge, if any, sent `judge_score`)
        scores = score_answer(question, completion.text, echo=echo,
                              source=source_score(scoring, question, completion.text, judge_score))
    record["echo"] = echo
    # ("unscored" is no error: the answer stands, the task's measure needs what the run lacks, e.g. a judge)
    record["status"] = "error" if scores["correct"].status == "error" else "scored"
    record["scores"] = {name: _score_dict(score) for name, score in scores.items()}
    for name in METRIC_FIELDS:
        if name in scores:
            record[name] = scores[name].value
    if question["query_type"] == "ABS" or record["abstained"] is None:
        record["abstained"] = float(abstains(question, completion.text, echo=echo))
    correct = record["correct"]
    is_correct = None if correct is None else correct >= 1.0
    record["hallucinated"] = _as_float(hallucinated(question, completion.text, is_correct, recall, echo=echo))
    record["trap_safe"] = _as_float(trap_safe(question, completion.text, echo=echo))
    record["trap_abstained"] = _as_float(trap_abstained(question, completion.text, echo=echo))
    if judge_score is not None:
        record["judge"] = {"value": judge_score.value, "status": judge_score.status, **judge_score.metadata}
    return record


def _as_float(value: bool | None) -> float | None:
    return None if value is None else float(value)
