"""Every applicable score for one answer, and "correct": the accuracy score of the question's type.

| type | "correct" is | also |
|---|---|---|
| EEM | exact_match | token_f1, rouge_l |
| MQ | mq_exact | mq_partial |
| TLA SUA IG MCD | the judge's verdict if a judge is given, else key_fact_rubric | key_fact_rubric, token_f1, rouge_l |
| ABS | abstained | token_f1, rouge_l |

Every type also gets "selective" (`selective.selective_score`: +1 right, 0 abstain, -1 wrong; on ABS
+1 abstain, -1 answer), from "correct".

An echo (`echo.is_echo`: the answer copies the prompt or the retrieved records) is scored wrong by
every scorer, flagged `metadata["echo"] = True` with the value it would have had kept as
`metadata["value_without_echo"]`, and never sent to the judge. The caller decides echo once per answer
and passes the same flag to `is_abstention`, `hallucinated` and `trap_safe`.

A prediction here is always an answer text. A generation that failed (backbone error, timeout) is
recorded by the runner with status "error" and never reaches these functions: scoring it would turn
an error into a wrong answer (SPEC §6). A judge error makes "correct" an error too; it never falls
back to the rubric silently (the rubric score stays beside it under its own name).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from medmemorybench.models.base import Backbone
from medmemorybench.questions.spec import get_type, judged_codes, type_codes
from medmemorybench.scoring.base import Question, Score, ScoreFn, get_scorer
from medmemorybench.scoring.llm_judge import judge_many
from medmemorybench.scoring.selective import selective_score
from medmemorybench.scoring.text_overlap import rouge_l, token_f1

JudgeFn = Callable[[Question, str], Score]


def scorers_for(query_type: str) -> tuple[tuple[str, ScoreFn], ...]:
    """A type's scorers (its spec names registered scorers: importing `medmemorybench.scoring` registers them
    all); the first one is the accuracy score when no judge is used."""
    return tuple((name, get_scorer(name).fn) for name in get_type(query_type).scorers)


def as_row(question: Any) -> Question:
    """A question as a plain dict (accepts a dict or a pydantic `Question`)."""
    return question.model_dump() if hasattr(question, "model_dump") else dict(question)


def _check(question: Question, prediction: Any) -> None:
    if question.get("query_type") not in type_codes():
        raise ValueError(f"{question.get('query_id')}: unknown query type {question.get('query_type')!r}; "
                         f"expected one of {', '.join(type_codes())}")
    if not isinstance(prediction, str):
        raise TypeError(f"{question.get('query_id')}: prediction must be the answer text, got "
                        f"{type(prediction).__name__}; a failed generation is recorded as an error by the "
                        "runner, not scored")


def _echoed(score: Score) -> Score:
    return Score(0.0, explanation="echoes the prompt or the retrieved records: not an answer",
                 metadata={"echo": True, "value_without_echo": score.value})


def _assemble(question: Question, prediction: str, verdict: Score | None, echo: bool,
              source: tuple[str, Score] | None = None) -> dict[str, Score]:
    kind = question["query_type"]
    scores = {name: fn(question, prediction) for name, fn in scorers_for(kind)}
    if kind != "MQ":
        scores["token_f1"] = token_f1(question, prediction)
        scores["rouge_l"] = rouge_l(question, prediction)
    primary = scorers_for(kind)[0][0]
    if verdict is not None:
        scores["llm_judge"] = verdict
        primary = "llm_judge"
    if source is not None:  # (a source benchmark's own measure: LoCoMo's F1, LongMemEval's judge)
        primary = source[0]
        scores[primary] = source[1]
    if echo:
        scores = {name: _echoed(score) for name, score in scores.items()}
    scores["correct"] = replace(scores[primary], metadata={**scores[primary].metadata, "scorer": primary})
    value = scores["correct"].value
    scores["selective"] = selective_score(question, prediction, None if value is None else value >= 1.0, echo=echo)
    return scores


def score_answer(question: Question, prediction: str, judge: JudgeFn | None = None, *,
                 echo: bool = False, source: tuple[str, Score] | None = None) -> dict[str, Score]:
    """Score one answer with every scorer that applies to its question type.

    Args:
        question: A question row (dict or pydantic `Question`).
        prediction: The answer text (never a failed generation; see the module docstring).
        judge: For TLA/SUA/IG/MCD, a judge (e.g. `LLMJudge(backbone)`) whose verdict becomes "correct".
        echo: Whether the answer is an echo (`is_echo(prediction, prompts, records)`): every score is
            then 0 (selective -1) with metadata["echo"] True, and the judge is not asked.
        source: (name, score) of the task's source measure (`scoring/source.py`), which then becomes "correct" in
            place of the type's scorer or the judge; the type's own scores stay beside it under their names.

    Returns:
        Scores by scorer name, plus "correct" (a copy of the type's accuracy score, with
        metadata["scorer"] naming it), "selective" (-1, 0 or 1) and "llm_judge" when a judge was used.

    Raises:
        TypeError: If the prediction is not a string (None from a failed generation, say).
        ValueError: If the question's type is unknown.
    """
    row = as_row(question)
    _check(row, prediction)
    judged = judge is not None and not echo and row["query_type"] in judged_codes()
    verdict = judge(row, prediction) if judged else None
    return _assemble(row, prediction, verdict, echo, source)


def score_answers(questions: Sequence[Question], predictions: Sequence[str], judge_backbone: Backbone | None = None,
                  echoes: Sequence[bool] | None = None) -> list[dict[str, Score]]:
    """`score_answer` for many answers, with every judged question sent to the judge in one batch.

    Args:
        questions: Question rows.
        predictions: Their answer texts, in the same order.
        judge_backbone: The judge model; None scores TLA/SUA/IG/MCD with the key-fact rubric.
        echoes: Per answer, whether it is an echo (`is_echo`); None: none is. Echoes are not judged.

    Returns:
        One dict of scores per question, in order.

    Raises:
        ValueError: If the lists differ in length or a question type is unknown.
        TypeError: If a prediction is not a string.
    """
    echoes = [False] * len(predictions) if echoes is None else list(echoes)
    if not len(questions) == len(predictions) == len(echoes):
        raise ValueError(f"score_answers: {len(questions)} questions, {len(predictions)} predictions and "
                         f"{len(echoes)} echo flags")
    rows = [as_row(q) for q in questions]
    for row, prediction in zip(rows, predictions, strict=True):
        _check(row, prediction)
    verdicts: list[Score | None] = [None] * len(rows)
    if judge_backbone is not None:
        judged = [i for i, row in enumerate(rows) if row["query_type"] in judged_codes() and not echoes[i]]
        results = judge_many([rows[i] for i in judged], [predictions[i] for i in judged], judge_backbone)
        for i, verdict in zip(judged, results, strict=True):
            verdicts[i] = verdict
    return [_assemble(row, p, v, e) for row, p, v, e in zip(rows, predictions, verdicts, echoes, strict=True)]
