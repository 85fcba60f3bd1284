"""A task's choice of what `correct` is (`metadata.scoring`): ours, or a source benchmark's own measure.

`medmemorybench` (the default): each question type's scorer, or the rubric judge with `--judge`. `locomo`: LoCoMo's
token F1 per category (`scoring/locomo.py`). `longmemeval`: LongMemEval's judge with its own prompts
(`scoring/longmemeval.py`); without `--judge` it is unscored (`status="unscored"`), never zero and never our rubric.
Our other measures (Recall@k, MRR, token F1, ROUGE-L, the type's own scorer) stay beside it under their names.
"""

from __future__ import annotations

from medmemorybench.scoring.base import Question, Score
from medmemorybench.scoring.locomo import locomo_f1

OURS = "medmemorybench"
SOURCE_SCORERS = {"locomo": "locomo_f1", "longmemeval": "longmemeval_judge"}
"""A source's scoring -> the name its score takes in a sample's `scores` (and `correct.metadata.scorer`)."""
SOURCE_TITLES = {"locomo": "LoCoMo", "longmemeval": "LongMemEval"}
NEEDS_JUDGE = "unscored: LongMemEval's measure is its judge's verdict; run with --judge BACKBONE"
"""Why `correct` has no value in a LongMemEval task run without a judge (the summary and report say it)."""


def is_judged_by_source(scoring: str) -> bool:
    """Whether every answer of a task with this scoring goes to the judge with the source's prompts."""
    return scoring == "longmemeval"


def source_score(scoring: str, question: Question, prediction: str, verdict: Score | None) -> tuple[str, Score]:
    """(name, score) of the source's measure for one answer, for `score_answer(..., source=...)`.

    Args:
        scoring: "locomo" or "longmemeval".
        question: The imported question row.
        prediction: The answer text.
        verdict: LongMemEval's judge verdict on it (`longmemeval_judge_many`); None when the run has no judge (or
            the answer is an echo, which is scored wrong without asking).

    Raises:
        ValueError: For a scoring that is not a source's.
    """
    if scoring == "locomo":
        return SOURCE_SCORERS[scoring], locomo_f1(question, prediction)
    if scoring == "longmemeval":
        return SOURCE_SCORERS[scoring], verdict or Score(None, explanation=NEEDS_JUDGE, status="unscored")
    raise ValueError(f"scoring {scoring!r} is not a source benchmark's (one of {', '.join(SOURCE_SCORERS)})")
