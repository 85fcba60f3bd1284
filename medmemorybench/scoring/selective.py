"""The selective score: +1 for a right answer, 0 for abstaining, -1 for a wrong one; on ABS, +1 abstain, -1 answer.

Accuracy rewards answering everything; the hallucination rate rewards abstaining from everything (an
always-abstaining system has 0 % hallucination). The selective score prices both: on an answerable
question abstaining is worth 0, so guessing pays only when the guess is right more often than wrong,
and on an ABS question any answer costs 1. An always-abstaining system scores 0 on every answerable
type, an always-answering one 2 * accuracy - 1 (below 0 whenever it is wrong more often than right)
and -1 on ABS, while a memory that answers what it holds and abstains otherwise scores above both.

A hedged guess is an answer, not an abstention ("I'm not sure, maybe 500 mg" commits to 500 mg: +1 when that is
right, -1 when not; `abstention.is_abstention`), so prefixing every answer with "I'm not sure" turns no wrong answer
into a 0. A blank answer is not an abstention (-1), and neither is an echo of the prompt or records (-1).
"""

from __future__ import annotations

from medmemorybench.scoring.abstention import abstains
from medmemorybench.scoring.base import Question, Score


def selective_score(question: Question, prediction: str, correct: bool | None, *, echo: bool = False) -> Score:
    """The selective score of one answer.

    Args:
        question: A question row (uses `abstain`: True for ABS questions).
        prediction: The model's answer text.
        correct: The question's accuracy verdict (None when unscored, e.g. a judge error).
        echo: Whether the answer is an echo of the prompt or records (`is_echo`).

    Returns:
        A score of 1.0, 0.0 or -1.0, metadata `outcome` one of "correct", "abstained", "wrong", "echo";
        unscored (value None, status "error") when the answer does not abstain and `correct` is None.
    """
    if echo:
        return Score(-1.0, explanation="echoes the prompt or records: neither an answer nor an abstention",
                     metadata={"outcome": "echo"})
    abstaining = abstains(question, prediction)
    if question.get("abstain"):
        if abstaining:
            return Score(1.0, explanation="abstains where the records hold no answer",
                         metadata={"outcome": "abstained"})
        return Score(-1.0, explanation="answers where the records hold no answer", metadata={"outcome": "wrong"})
    if abstaining:
        return Score(0.0, explanation="abstains", metadata={"outcome": "abstained"})
    if correct is None:
        return Score(None, explanation="correctness unscored", status="error")
    if correct:
        return Score(1.0, explanation="answers correctly", metadata={"outcome": "correct"})
    return Score(-1.0, explanation="answers wrongly", metadata={"outcome": "wrong"})
